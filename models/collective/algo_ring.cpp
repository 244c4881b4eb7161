// Ring, bidirectional ring, torus and hierarchical reduce-scatter / all-gather / all-reduce: the phase engine
// (schedule.cpp's header comment explains the phases and labels).
#include "models/collective/schedule_detail.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace trnsim::collective::detail {

namespace {

// One ring instance of an operation: the part of the data it moves (for a bidirectional ring, one direction's half
// of every block) and the direction of its rings.
struct instance {
    int dir = +1;                                // +1: digit v sends to v+1; -1: to v-1
    // Block of label l in the operation's data: bytes [io_off[l], io_off[l] + size[l]) of the chip-indexed buffer
    // (input of reduce-scatter / all-reduce / broadcast, output of all-gather / all-reduce).
    std::vector<uint64_t> io_off, size;
    std::vector<uint64_t> pos;                   // scratch position of label l (labels packed in label order)
    uint64_t scratch_base = 0;
};

class ring_engine {
public:
    ring_engine(const schedule& s, builder& b, const phase_layout& L, const instance& in, uint64_t elem)
        : s_(s), b_(b), L_(L), in_(in), elem_(elem) {
        // Scratch holds one area per reduce-scatter phase, each as large as the largest range entering that phase.
        uint64_t base = in.scratch_base;
        for (size_t d = 0; d < L.radix.size(); ++d) {
            area_.push_back(base);
            uint64_t biggest = 0;
            uint32_t span = L.span(d);
            for (uint32_t l0 = 0; l0 < in.size.size(); l0 += span) biggest = std::max(biggest, bytes(l0, l0 + span));
            base += biggest;
        }
        end_ = base;
    }
    uint64_t scratch_end() const { return end_; }

    // Reduce-scatter over all phases: afterwards chip c holds the sum of block label(c) in its last area. At step st
    // of a phase a chip sends the block that, after k - 1 steps, reaches its owner (lag 1); the receiver adds its own
    // partial sum into the received block.
    void reduce_scatter() {
        for (size_t d = 0; d < L_.radix.size(); ++d)
            ring_steps(d, 1, [&](uint32_t c, uint32_t to, uint32_t st, uint32_t l0, uint32_t l1) {
                auto src = st == 0 ? held(c, d, l0, l1) : area(c, d, l0, l1);
                b_.transfer(step_kind::copy, pair(src, area(to, d, l0, l1)), s_.p.chunks, elem_);
                b_.transfer(step_kind::reduce, pair(held(to, d, l0, l1), area(to, d, l0, l1)), s_.p.chunks, elem_);
            });
    }

    // All-gather over all phases in reverse: before it, chip c holds block label(c) at `own(c)`; afterwards every
    // chip holds every block of the instance in `out` (chip-indexed layout). At step st a chip forwards the block it
    // received at step st - 1 (its own at step 0: lag 0).
    void all_gather(const std::function<std::vector<region>(uint32_t chip)>& own, buffer out) {
        const uint32_t n = s_.topo.chips();
        for (uint32_t c = 0; c < n; ++c) {
            uint32_t l = L_.label(c);
            b_.transfer(step_kind::copy, pair(own(c), io(c, out, l, l + 1)), s_.p.chunks, elem_);
        }
        const size_t D = L_.radix.size();
        for (size_t dd = D; dd-- > 0;)
            ring_steps(dd, 0, [&](uint32_t c, uint32_t to, uint32_t st, uint32_t l0, uint32_t l1) {
                auto src = st == 0 && dd == D - 1 ? own(c) : io(c, out, l0, l1);
                b_.transfer(step_kind::copy, pair(src, io(to, out, l0, l1)), s_.p.chunks, elem_);
            });
    }

    // Where chip c's own fully reduced block is after reduce_scatter() (the input when there is one chip).
    std::vector<region> reduced(uint32_t c) const {
        uint32_t l = L_.label(c);
        return held(c, L_.radix.size(), l, l + 1);
    }
    // Chip c's block label(c) in the chip-indexed layout of buffer b.
    std::vector<region> io_block(uint32_t c, buffer b) const {
        uint32_t l = L_.label(c);
        return io(c, b, l, l + 1);
    }
    uint64_t size_of_label(uint32_t l) const { return in_.size[l]; }

private:
    // Calls f(c, to, st, l0, l1) for every step st of the rings of phase d, chip by chip: chip c sends labels
    // [l0, l1) to the next chip `to` of its ring, the block of digit v - dir * (st + lag), v being c's digit.
    template <class F>
    void ring_steps(size_t d, uint32_t lag, F&& f) const {
        const uint32_t k = L_.radix[d];
        if (k == 1) return;
        const uint32_t n = s_.topo.chips(), sub = L_.span(d + 1);
        for (uint32_t st = 0; st + 1 < k; ++st)
            for (uint32_t c = 0; c < n; ++c) {
                const uint32_t v = L_.digits[c][d];
                const uint32_t to = L_.with_digit(c, d, step_digit(v, in_.dir, k));
                const uint32_t q = step_digit(v, -int64_t(in_.dir) * (st + lag), k);
                const uint32_t l0 = L_.range_begin(c, d) + q * sub;
                f(c, to, st, l0, l0 + sub);
            }
    }
    uint64_t bytes(uint32_t l0, uint32_t l1) const {
        uint64_t s = 0;
        for (uint32_t l = l0; l < l1; ++l) s += in_.size[l];
        return s;
    }
    // Labels [l0, l1) in buffer b of chip c, chip-indexed layout: one region per run of adjacent blocks.
    std::vector<region> io(uint32_t c, buffer b, uint32_t l0, uint32_t l1) const {
        std::vector<region> r;
        for (uint32_t l = l0; l < l1; ++l) {
            if (in_.size[l] == 0) continue;
            if (!r.empty() && r.back().offset + r.back().bytes == in_.io_off[l]) r.back().bytes += in_.size[l];
            else r.push_back(region{c, b, in_.io_off[l], in_.size[l]});
        }
        return r;
    }
    // Labels [l0, l1) in chip c's scratch area of phase d (labels packed from the start of c's range).
    std::vector<region> area(uint32_t c, size_t d, uint32_t l0, uint32_t l1) const {
        uint64_t first = in_.pos[L_.range_begin(c, d)];
        uint64_t b = bytes(l0, l1);
        if (b == 0) return {};
        return {region{c, buffer::scratch, area_[d] + in_.pos[l0] - first, b}};
    }
    // Where chip c's partial sums of labels [l0, l1) are at the start of phase d: the input for phase 0, the area of
    // the phase before otherwise.
    std::vector<region> held(uint32_t c, size_t d, uint32_t l0, uint32_t l1) const {
        for (size_t e = d; e-- > 0;)
            if (L_.radix[e] > 1) return area(c, e, l0, l1);
        return io(c, buffer::input, l0, l1);
    }
    // Pairs two region lists covering the same number of bytes, split at the union of their boundaries.
    static std::vector<std::pair<region, region>> pair(const std::vector<region>& a, const std::vector<region>& b) {
        std::vector<std::pair<region, region>> r;
        size_t i = 0, j = 0;
        uint64_t oi = 0, oj = 0;
        while (i < a.size() && j < b.size()) {
            uint64_t n = std::min(a[i].bytes - oi, b[j].bytes - oj);
            region x = a[i], y = b[j];
            x.offset += oi; y.offset += oj;
            x.bytes = y.bytes = n;
            r.emplace_back(x, y);
            oi += n; oj += n;
            if (oi == a[i].bytes) { ++i; oi = 0; }
            if (oj == b[j].bytes) { ++j; oj = 0; }
        }
        if (i != a.size() || j != b.size()) throw std::logic_error("collective: paired transfers differ in size");
        return r;
    }

    const schedule& s_;
    builder& b_;
    const phase_layout& L_;
    const instance& in_;
    uint64_t elem_;
    std::vector<uint64_t> area_;
    uint64_t end_ = 0;
};

// Block geometry of one instance. `block_elems[l]`: elements of label l's block; `chip_indexed`: blocks sit at their
// chip's slot (chip_of_label) of `slot` bytes (reduce-scatter / all-gather), else packed in label order. `half`:
// 0 = the whole block, 1 = its first half (rounded up), 2 = its second half.
instance make_instance(const phase_layout& L, const std::vector<uint64_t>& block_elems, bool chip_indexed,
                       uint64_t slot, uint64_t elem, int half, int dir) {
    instance in;
    in.dir = dir;
    size_t n = block_elems.size();
    in.io_off.resize(n);
    in.size.resize(n);
    in.pos.resize(n + 1);
    uint64_t packed = 0;
    for (size_t l = 0; l < n; ++l) {
        uint64_t e = block_elems[l];
        uint64_t first = (e + 1) / 2;
        uint64_t off_e = half == 2 ? first : 0;
        uint64_t cnt = half == 0 ? e : half == 1 ? first : e - first;
        uint64_t base = chip_indexed ? uint64_t(L.chip_of_label[l]) * slot : packed;
        in.io_off[l] = base + off_e * elem;
        in.size[l] = cnt * elem;
        packed += e * elem;
    }
    uint64_t p = 0;
    for (size_t l = 0; l < n; ++l) { in.pos[l] = p; p += in.size[l]; }
    in.pos[n] = p;
    return in;
}

} // namespace

// Ring-family algorithms (ring, bidir_ring, torus, hierarchical) of the reductions and gathers.
void build_rings(schedule& s, builder& b, uint64_t elem) {
    const uint32_t n = s.topo.chips();
    const params& p = s.p;
    phase_layout L = make_layout(s.topo, p.a);
    bool chip_indexed = p.o != op::allreduce;
    std::vector<uint64_t> blocks = split_even(p.bytes / elem, n);
    const uint64_t slot = p.bytes / n;
    std::vector<instance> ins;
    std::vector<int> dirs = ring_dirs(s.topo, p.a);
    if (dirs.size() == 2 && n > 1) {
        ins.push_back(make_instance(L, blocks, chip_indexed, slot, elem, 1, +1));
        ins.push_back(make_instance(L, blocks, chip_indexed, slot, elem, 2, -1));
    } else {
        ins.push_back(make_instance(L, blocks, chip_indexed, slot, elem, 0, dirs[0]));
    }
    // Lay out the instances' scratch one after the other, then run them (program order: instance by instance; the
    // hazard tracker lets them overlap in time).
    uint64_t base = 0;
    std::vector<ring_engine> engines;
    engines.reserve(ins.size());
    for (auto& in : ins) {
        in.scratch_base = base;
        engines.emplace_back(s, b, L, in, elem);
        base = engines.back().scratch_end();
    }
    s.scratch_bytes = p.o == op::allgather ? 0 : base;
    for (size_t i = 0; i < ins.size(); ++i) {
        ring_engine& e = engines[i];
        b.set_lane(uint32_t(i));  // a bidirectional ring's directions: lanes 0 and 1
        switch (p.o) {
        case op::allreduce:
            e.reduce_scatter();
            e.all_gather([&e](uint32_t c) { return e.reduced(c); }, buffer::output);
            break;
        case op::reduce_scatter:
            e.reduce_scatter();
            for (uint32_t c = 0; c < n; ++c) {
                // The chip's own block: its slot in the input layout, moved to offset 0 of the output.
                auto own = e.reduced(c);
                auto at = e.io_block(c, buffer::output);
                for (auto& r : at) r.offset -= uint64_t(c) * slot;
                if (own.empty()) continue;
                b.copy(own[0], at[0]);
            }
            break;
        case op::allgather:
            e.all_gather(
                [&e, slot](uint32_t c) {
                    auto r = e.io_block(c, buffer::input);
                    for (auto& x : r) x.offset -= uint64_t(c) * slot;
                    return r;
                },
                buffer::output);
            break;
        default:
            throw std::logic_error("collective: not a ring operation");
        }
    }
}

} // namespace trnsim::collective::detail
