// Stimulus: seeded random tensors, quantised to a dtype (raw bytes for the chip, decoded FP32 for the golden model).
#pragma once
#include <cstdint>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::tb {

// n values uniform in [-1, 1), rounded to `t`; raw receives the encoded bytes; returns the decoded values.
std::vector<float> random_tensor(numerics::dtype t, uint64_t n, uint64_t seed, std::vector<uint8_t>& raw);

// A small, fast, seedable generator (splitmix64).
struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

} // namespace trnsim::tb
