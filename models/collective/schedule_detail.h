// Internal to the collective schedule builders (schedule.cpp and the algorithm files algo_*.cpp): the builder that
// derives every step's dependencies from the data hazards, the ring-phase layout, and one build function per
// algorithm family. Not part of the schedule contract (schedule.h). Plain C++.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/collective/schedule.h"

namespace trnsim::collective::detail {

// --- dependencies from data hazards ------------------------------------------------------------------------------

// Per (chip, buffer): the byte intervals with their last writer and the readers since that write.
class hazard_tracker {
public:
    explicit hazard_tracker(uint32_t chips) : maps_(size_t(chips) * 3) {}

    // Adds the dependencies of a step reading r to deps, and records the read.
    void read(const region& r, uint32_t step_id, std::vector<uint32_t>& deps) {
        auto& m = map_of(r);
        split(m, r.offset);
        split(m, r.offset + r.bytes);
        for (auto it = m.find(r.offset); it != m.end() && it->first < r.offset + r.bytes; ++it) {
            if (it->second.writer != none) deps.push_back(it->second.writer);
            it->second.readers.push_back(step_id);
        }
    }
    // Adds the dependencies of a step writing r (after any read of its own) and records the write.
    void write(const region& r, uint32_t step_id, std::vector<uint32_t>& deps) {
        auto& m = map_of(r);
        split(m, r.offset);
        split(m, r.offset + r.bytes);
        auto first = m.find(r.offset);
        auto it = first;
        for (; it != m.end() && it->first < r.offset + r.bytes; ++it) {
            if (it->second.writer != none) deps.push_back(it->second.writer);
            for (uint32_t rd : it->second.readers)
                if (rd != step_id) deps.push_back(rd);
        }
        // One segment for the whole written range.
        m.erase(first, it);
        m[r.offset] = seg{r.offset + r.bytes, step_id, {}};
    }

private:
    static constexpr uint32_t none = UINT32_MAX;
    struct seg {
        uint64_t end = 0;
        uint32_t writer = none;
        std::vector<uint32_t> readers;
    };
    using imap = std::map<uint64_t, seg>;

    imap& map_of(const region& r) { return maps_[size_t(r.chip) * 3 + static_cast<size_t>(r.buf)]; }

    // Makes `at` a segment boundary (creating an untouched segment to cover it if no segment does).
    static void split(imap& m, uint64_t at) {
        auto it = m.upper_bound(at);
        if (it != m.begin()) {
            auto prev = std::prev(it);
            if (prev->first == at) return;
            if (prev->second.end > at) {
                seg tail = prev->second;
                prev->second.end = at;
                m.emplace(at, std::move(tail));
                return;
            }
        }
        // `at` falls in a gap: fill the gap up to the next segment (or far away) with an untouched segment.
        uint64_t gap_end = it == m.end() ? UINT64_MAX : it->first;
        uint64_t gap_begin = it == m.begin() ? 0 : std::prev(it)->second.end;
        if (gap_begin < at) m.emplace(gap_begin, seg{at, none, {}});
        m.emplace(at, seg{gap_end, none, {}});
    }

    std::vector<imap> maps_;
};

// Accumulates steps in program order with their hazard-derived dependencies.
class builder {
public:
    builder(schedule& s, uint32_t chips) : s_(s), hz_(chips) {}

    void copy(region src, region dst) { add(step_kind::copy, src, dst); }
    // The lane (step::lane) of the steps added from now on.
    void set_lane(uint32_t lane) { lane_ = lane; }
    void reduce(region src, region dst) { add(step_kind::reduce, src, dst); }

    // Copies/reduces a list of (src, dst) fragment pairs, each split into `chunks` element-aligned pieces, the
    // pieces spread over the fragments in order (so the n-th piece of every transfer covers the same bytes).
    void transfer(step_kind k, const std::vector<std::pair<region, region>>& frags, uint32_t chunks, uint64_t elem) {
        uint64_t total = 0;
        for (auto& f : frags) total += f.first.bytes;
        uint64_t elems = total / elem;
        uint32_t pieces = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(chunks, elems)));
        size_t fi = 0;
        uint64_t fo = 0;     // offset inside frags[fi]
        for (uint32_t p = 0; p < pieces; ++p) {
            uint64_t piece_elems = elems / pieces + (p < elems % pieces ? 1 : 0);
            uint64_t left = piece_elems * elem;
            while (left > 0) {
                const auto& f = frags[fi];
                uint64_t n = std::min(left, f.first.bytes - fo);
                region a = f.first, b = f.second;
                a.offset += fo; b.offset += fo;
                a.bytes = b.bytes = n;
                add(k, a, b);
                left -= n; fo += n;
                if (fo == f.first.bytes) { ++fi; fo = 0; }
            }
        }
    }

private:
    void add(step_kind k, region src, region dst) {
        if (src.bytes == 0) return;
        step st;
        st.kind = k;
        st.src = src;
        st.dst = dst;
        st.lane = lane_;
        check_step_budget(s_.p, s_.steps.size() + 1);
        uint32_t id = static_cast<uint32_t>(s_.steps.size());
        hz_.read(src, id, st.deps);
        if (k == step_kind::reduce) hz_.read(dst, id, st.deps);
        hz_.write(dst, id, st.deps);
        std::sort(st.deps.begin(), st.deps.end());
        st.deps.erase(std::unique(st.deps.begin(), st.deps.end()), st.deps.end());
        s_.steps.push_back(std::move(st));
    }

    schedule& s_;
    hazard_tracker hz_;
    uint32_t lane_ = 0;
};

// Splits `total` elements into `parts` parts, the first (total % parts) one element longer; returns part sizes.
inline std::vector<uint64_t> split_even(uint64_t total, uint64_t parts) {
    std::vector<uint64_t> r(parts, total / parts);
    for (uint64_t i = 0; i < total % parts; ++i) ++r[i];
    return r;
}

// Digit v moved by delta (mod k).
inline uint32_t step_digit(uint32_t v, int64_t delta, uint32_t k) {
    int64_t r = (static_cast<int64_t>(v) + delta) % static_cast<int64_t>(k);
    return static_cast<uint32_t>(r < 0 ? r + k : r);
}

// --- the phase engine ---------------------------------------------------------------------------------------------

// A chip's digits: one per phase, with the size of each phase's rings.
struct phase_layout {
    std::vector<uint32_t> radix;                     // ring size of each phase
    std::vector<std::vector<uint32_t>> digits;       // digits[chip][phase]
    std::vector<uint32_t> chip_of_label;             // inverse of label()

    uint32_t label(uint32_t chip) const {
        uint32_t l = 0;
        for (size_t d = 0; d < radix.size(); ++d) l = l * radix[d] + digits[chip][d];
        return l;
    }
    // The chip whose digits equal `chip`'s except digit d, which is v.
    uint32_t with_digit(uint32_t chip, size_t d, uint32_t v) const {
        uint32_t l = 0;
        for (size_t e = 0; e < radix.size(); ++e) l = l * radix[e] + (e == d ? v : digits[chip][e]);
        return chip_of_label[l];
    }
    // Number of labels a chip's range holds after the first d phases of reduce-scatter.
    uint32_t span(size_t d) const {
        uint32_t s = 1;
        for (size_t e = d; e < radix.size(); ++e) s *= radix[e];
        return s;
    }
    // First label of the range a chip holds after the first d phases.
    uint32_t range_begin(uint32_t chip, size_t d) const {
        uint32_t l = 0;
        for (size_t e = 0; e < radix.size(); ++e) l = l * radix[e] + (e < d ? digits[chip][e] : 0);
        return l;
    }
};

// The phases of a ring-based algorithm on topology t (schedule_phases.cpp).
phase_layout make_layout(const topology& t, algo a);
// The directions a ring algorithm may run in (+1: chip i sends to i+1), given the topology's down links.
std::vector<int> ring_dirs(const topology& t, algo a);

// One builder per algorithm family; each appends its steps to s through b (elements of `elem` bytes).
void build_rings(schedule& s, builder& b, uint64_t elem);      // ring, bidir_ring, torus, hierarchical (algo_ring.cpp)
void build_broadcast(schedule& s, builder& b, uint64_t elem);  // algo_broadcast.cpp
void build_alltoall(schedule& s, builder& b, uint64_t elem);   // algo_alltoall.cpp
void build_direct(schedule& s, builder& b, uint64_t elem);     // algo_direct.cpp

} // namespace trnsim::collective::detail
