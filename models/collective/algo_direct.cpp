// The direct (one-shot, every chip to every chip) algorithms.
#include "models/collective/schedule_detail.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace trnsim::collective::detail {

// Direct reduce-scatter / all-reduce / all-gather: every chip sends block j straight to chip j, which sums the
// blocks in chip order starting after itself; all-reduce then sends every reduced block straight to every chip.
void build_direct(schedule& s, builder& b, uint64_t elem) {
    const uint32_t n = s.topo.chips();
    const params& p = s.p;
    bool ar = p.o == op::allreduce;
    std::vector<uint64_t> el = split_even(p.bytes / elem, n);
    std::vector<uint64_t> off(n + 1, 0);
    for (uint32_t j = 0; j < n; ++j) off[j + 1] = off[j] + el[j] * elem;
    auto size = [&](uint32_t j) { return off[j + 1] - off[j]; };
    uint64_t biggest = size(0);
    if (p.o == op::allgather) {
        uint64_t blk = p.bytes / n;
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t r = 0; r < n; ++r) {
                uint32_t j = (i + r) % n;
                b.transfer(step_kind::copy, {{region{i, buffer::input, 0, blk}, region{j, buffer::output, i * blk, blk}}},
                           p.chunks, elem);
            }
        s.scratch_bytes = 0;
        return;
    }
    // Scratch: one slot per source chip (slot i holds chip i's contribution), plus the accumulator at slot n.
    s.scratch_bytes = biggest * (n + 1);
    for (uint32_t j = 0; j < n; ++j) {
        region acc{j, buffer::scratch, biggest * n, size(j)};
        b.transfer(step_kind::copy, {{region{j, buffer::input, off[j], size(j)}, acc}}, p.chunks, elem);
    }
    for (uint32_t r = 1; r < n; ++r)
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t j = (i + r) % n;
            b.transfer(step_kind::copy,
                       {{region{i, buffer::input, off[j], size(j)}, region{j, buffer::scratch, biggest * i, size(j)}}},
                       p.chunks, elem);
        }
    for (uint32_t j = 0; j < n; ++j)
        for (uint32_t r = 1; r < n; ++r) {
            uint32_t i = (j + r) % n;
            b.transfer(step_kind::reduce,
                       {{region{j, buffer::scratch, biggest * i, size(j)}, region{j, buffer::scratch, biggest * n, size(j)}}},
                       p.chunks, elem);
        }
    for (uint32_t j = 0; j < n; ++j) {
        region acc{j, buffer::scratch, biggest * n, size(j)};
        if (!ar) {
            b.transfer(step_kind::copy, {{acc, region{j, buffer::output, 0, size(j)}}}, p.chunks, elem);
            continue;
        }
        for (uint32_t r = 0; r < n; ++r) {
            uint32_t i = (j + r) % n;
            b.transfer(step_kind::copy, {{acc, region{i, buffer::output, off[j], size(j)}}}, p.chunks, elem);
        }
    }
}

} // namespace trnsim::collective::detail
