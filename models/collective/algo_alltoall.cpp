// All-to-all.
#include "models/collective/schedule_detail.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace trnsim::collective::detail {

// All-to-all: block j of chip i's input to block i of chip j's output. direct: every pair at once; ring: the
// shift schedule, n-1 rounds, round r sends to the chip r places ahead, a chip's rounds one after the other.
void build_alltoall(schedule& s, builder& b, uint64_t elem) {
    const uint32_t n = s.topo.chips();
    const params& p = s.p;
    uint64_t blk = p.bytes / n;
    for (uint32_t i = 0; i < n; ++i)
        b.transfer(step_kind::copy, {{region{i, buffer::input, i * blk, blk}, region{i, buffer::output, i * blk, blk}}},
                   p.chunks, elem);
    if (p.a == algo::direct) {
        for (uint32_t r = 1; r < n; ++r)
            for (uint32_t i = 0; i < n; ++i) {
                uint32_t j = (i + r) % n;
                b.transfer(step_kind::copy, {{region{i, buffer::input, j * blk, blk}, region{j, buffer::output, i * blk, blk}}},
                           p.chunks, elem);
            }
        return;
    }
    // ring (shift): round r of chip i starts when every piece of its round r-1 has landed. The rounds touch
    // disjoint bytes, so this order is not a data hazard: it is added explicitly.
    std::vector<std::vector<uint32_t>> prev(n);
    for (uint32_t r = 1; r < n; ++r)
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t j = (i + r) % n;
            size_t before = s.steps.size();
            b.transfer(step_kind::copy, {{region{i, buffer::input, j * blk, blk}, region{j, buffer::output, i * blk, blk}}},
                       p.chunks, elem);
            std::vector<uint32_t> mine;
            for (size_t k = before; k < s.steps.size(); ++k) {
                auto& d = s.steps[k].deps;
                d.insert(d.end(), prev[i].begin(), prev[i].end());
                std::sort(d.begin(), d.end());
                d.erase(std::unique(d.begin(), d.end()), d.end());
                mine.push_back(static_cast<uint32_t>(k));
            }
            prev[i] = std::move(mine);
        }
}

} // namespace trnsim::collective::detail
