#include "models/collective/groups.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trnsim::collective {

namespace {

void check_chip(const topology& t, uint32_t c, const char* what) {
    if (c >= t.chips())
        throw std::invalid_argument(std::string(what) + ": chip " + std::to_string(c) + " is outside the platform's " +
                                    std::to_string(t.chips()) + " chips");
}

}  // namespace

schedule build_groups(const topology& platform, const std::vector<std::vector<uint32_t>>& groups, const params& p) {
    if (p.a != algo::ring && p.a != algo::bidir_ring)
        throw std::invalid_argument("group collectives run ring or bidir_ring, not " + std::string(name_of(p.a)));
    schedule out;
    out.p = p;
    out.topo = platform;
    std::vector<bool> used(platform.chips(), false);
    for (const auto& g : groups) {
        if (g.empty()) throw std::invalid_argument("group collective: an empty group");
        for (uint32_t c : g) {
            check_chip(platform, c, "group collective");
            if (used[c]) throw std::invalid_argument("group collective: chip " + std::to_string(c) + " is in two groups");
            used[c] = true;
        }
        out.group_chips = std::max(out.group_chips, uint32_t(g.size()));
        if (g.size() == 1) continue;  // nothing to exchange
        const schedule s = build(topology::make_ring(uint32_t(g.size())), p);
        check_step_budget(p, uint64_t(out.steps.size()) + s.steps.size());
        const uint32_t base = uint32_t(out.steps.size());
        out.input_bytes = std::max(out.input_bytes, s.input_bytes);
        out.output_bytes = std::max(out.output_bytes, s.output_bytes);
        out.scratch_bytes = std::max(out.scratch_bytes, s.scratch_bytes);
        for (step st : s.steps) {
            st.src.chip = g[st.src.chip];
            st.dst.chip = g[st.dst.chip];
            for (auto& d : st.deps) d += base;
            out.steps.push_back(std::move(st));
        }
    }
    return out;
}

schedule build_sends(const topology& platform, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                     uint64_t bytes, uint32_t chunks) {
    if (bytes == 0) throw std::invalid_argument("send: 0 bytes");
    if (chunks == 0) chunks = 1;
    schedule out;
    out.p.o = op::broadcast;
    out.p.bytes = bytes;
    out.p.chunks = chunks;
    out.topo = platform;
    out.group_chips = 2;
    out.input_bytes = out.output_bytes = bytes;
    for (const auto& [a, b] : pairs) {
        check_chip(platform, a, "send");
        check_chip(platform, b, "send");
        if (a == b) throw std::invalid_argument("send: chip " + std::to_string(a) + " to itself");
        for (uint32_t k = 0; k < chunks; ++k) {
            const uint64_t lo = bytes * k / chunks, hi = bytes * (k + 1) / chunks;
            if (hi == lo) continue;
            step st;
            st.kind = step_kind::copy;
            st.src = {a, buffer::input, lo, hi - lo};
            st.dst = {b, buffer::output, lo, hi - lo};
            out.steps.push_back(st);
        }
    }
    return out;
}

}  // namespace trnsim::collective
