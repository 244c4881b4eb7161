#include "testbench/stimulus.h"

namespace trnsim::tb {

std::vector<float> random_tensor(numerics::dtype t, uint64_t n, uint64_t seed, std::vector<uint8_t>& raw) {
    std::vector<float> v(n);
    rng g(seed);
    for (auto& x : v) x = float(g.uniform() * 2.0 - 1.0);
    raw.resize(n * numerics::size_of(t));
    numerics::encode(t, v.data(), raw.data(), n);
    numerics::decode(t, raw.data(), v.data(), n);
    return v;
}

} // namespace trnsim::tb
