// Broadcast from the root over the ring phases.
#include "models/collective/schedule_detail.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace trnsim::collective::detail {

// Broadcast from p.root, phase by phase: in phase d every chip that has the data sends it down its ring of phase d
// (a pipelined chain, chunk by chunk). Bidirectional: half of the data goes each way.
void build_broadcast(schedule& s, builder& b, uint64_t elem) {
    const uint32_t n = s.topo.chips();
    const params& p = s.p;
    if (p.root >= n)
        throw std::invalid_argument("collective: broadcast root " + std::to_string(p.root) + " is not a chip (0.." +
                                    std::to_string(n - 1) + ")");
    uint64_t elems = p.bytes / elem;
    b.copy(region{p.root, buffer::input, 0, p.bytes}, region{p.root, buffer::output, 0, p.bytes});
    if (p.a == algo::direct) {
        for (uint32_t c = 0; c < n; ++c)
            if (c != p.root)
                b.transfer(step_kind::copy, {{region{p.root, buffer::input, 0, p.bytes}, region{c, buffer::output, 0, p.bytes}}},
                           p.chunks, elem);
        return;
    }
    struct part { uint64_t off, bytes; int dir; };
    std::vector<part> parts;
    std::vector<int> dirs = ring_dirs(s.topo, p.a);
    if (dirs.size() == 2 && n > 2) {
        uint64_t first = (elems + 1) / 2 * elem;
        parts.push_back(part{0, first, +1});
        parts.push_back(part{first, p.bytes - first, -1});
    } else {
        parts.push_back(part{0, p.bytes, dirs[0]});
    }
    phase_layout L = make_layout(s.topo, p.a);
    for (const part& pt : parts) {
        if (pt.bytes == 0) continue;
        for (size_t d = 0; d < L.radix.size(); ++d) {
            uint32_t k = L.radix[d];
            if (k == 1) continue;
            for (uint32_t c = 0; c < n; ++c) {
                // Chips holding the data at phase d: digits of phases >= d equal the root's.
                bool holds = true;
                for (size_t e = d; e < L.radix.size(); ++e) holds = holds && L.digits[c][e] == L.digits[p.root][e];
                if (!holds) continue;
                uint32_t v = L.digits[c][d];
                uint32_t from = c;
                for (uint32_t hop = 1; hop < k; ++hop) {
                    uint32_t to = L.with_digit(c, d, step_digit(v, int64_t(pt.dir) * hop, k));
                    region src{from, from == p.root ? buffer::input : buffer::output, pt.off, pt.bytes};
                    b.transfer(step_kind::copy, {{src, region{to, buffer::output, pt.off, pt.bytes}}}, p.chunks, elem);
                    from = to;
                }
            }
        }
    }
}

} // namespace trnsim::collective::detail
