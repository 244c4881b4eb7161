// Collective algorithms as schedules (see schedule.h for the contract, docs/collectives.md for the algorithms).
//
// One mechanism builds every algorithm: an algorithm is emitted as a sequential program of copy and reduce steps
// (the order the reference executor runs them in), and a hazard tracker over each chip's buffers derives the
// dependencies from the bytes each step reads and writes (read-after-write, write-after-write, write-after-read).
// So the DAG has exactly the edges the data needs: chunk c of a ring step waits for chunk c of the step before it
// and for nothing else, the two directions of a bidirectional ring never wait for each other, and so on.
//
// Ring-based algorithms (ring, bidir_ring, torus, hierarchical) share one phase engine. A chip has one digit per
// phase (its position in that phase's ring: the whole ring, a torus dimension, the chip's slot in its server, its
// server); the chips that differ only in digit d form the rings of phase d. Reduce-scatter runs the phases in order,
// all-gather in reverse order, so each phase works on the part the phases before it left to the chip. Blocks carry
// labels with phase 0's digit most significant, which keeps every transfer of an all-reduce contiguous; operations
// whose output layout is fixed by chip id (reduce-scatter, all-gather) map labels back to chip blocks and split
// transfers where those blocks are not adjacent.
#include "models/collective/schedule.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

namespace trnsim::collective {

namespace {

const char* op_names[] = {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"};
const char* algo_names[] = {"ring", "bidir_ring", "torus", "hierarchical", "direct"};

std::string canon(std::string_view s) {
    std::string r;
    for (char c : s)
        if (c != '-' && c != '_') r += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return r;
}

template <size_t N>
std::string joined(const char* (&names)[N]) {
    std::string r;
    for (size_t i = 0; i < N; ++i) r += (i ? ", " : "") + std::string(names[i]);
    return r;
}

std::string_view buf_name(buffer b) {
    switch (b) {
    case buffer::input: return "input";
    case buffer::output: return "output";
    case buffer::scratch: return "scratch";
    }
    return "?";
}

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
};

// Splits `total` elements into `parts` parts, the first (total % parts) one element longer; returns part sizes.
std::vector<uint64_t> split_even(uint64_t total, uint64_t parts) {
    std::vector<uint64_t> r(parts, total / parts);
    for (uint64_t i = 0; i < total % parts; ++i) ++r[i];
    return r;
}

// Digit v moved by delta (mod k).
uint32_t step_digit(uint32_t v, int64_t delta, uint32_t k) {
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

phase_layout make_layout(const topology& t, algo a) {
    phase_layout L;
    uint32_t n = t.chips();
    L.digits.assign(n, {});
    auto add_phase = [&](uint32_t radix, const std::function<uint32_t(uint32_t)>& digit) {
        if (radix <= 1) return;
        L.radix.push_back(radix);
        for (uint32_t c = 0; c < n; ++c) L.digits[c].push_back(digit(c));
    };
    switch (a) {
    case algo::ring:
    case algo::bidir_ring:
        add_phase(n, [](uint32_t c) { return c; });
        break;
    case algo::torus:
        if (t.k == topology::kind::ring)
            throw std::invalid_argument("torus algorithm needs a torus or cluster topology (this one is a ring)");
        for (int d = 0; d < 3; ++d) add_phase(t.dims[d], [&t, d](uint32_t c) { return t.coords(c)[d]; });
        if (t.k == topology::kind::cluster)
            add_phase(t.servers, [&t](uint32_t c) { return t.server_of(c); });
        break;
    case algo::hierarchical:
        if (t.k != topology::kind::cluster)
            throw std::invalid_argument("hierarchical algorithm needs a cluster topology (servers behind a network)");
        add_phase(t.chips_per_server, [&t](uint32_t c) { return c % t.chips_per_server; });
        add_phase(t.servers, [&t](uint32_t c) { return t.server_of(c); });
        break;
    case algo::direct:
        throw std::logic_error("direct algorithms do not use rings");
    }
    if (L.radix.empty()) {  // one chip
        L.radix.push_back(1);
        for (uint32_t c = 0; c < n; ++c) L.digits[c].push_back(0);
    }
    L.chip_of_label.assign(n, 0);
    for (uint32_t c = 0; c < n; ++c) L.chip_of_label[L.label(c)] = c;
    return L;
}

// The directions the ring algorithms may run in (+1: chip i sends to i+1). On a ring topology with down links a
// direction is usable only if all its links are up: `ring` takes + or else -, `bidir_ring` keeps the usable ones.
// Other topologies leave the down links to the platform's routing.
std::vector<int> ring_dirs(const topology& t, algo a) {
    std::vector<int> all = a == algo::bidir_ring ? std::vector<int>{+1, -1} : std::vector<int>{+1};
    uint32_t n = t.chips();
    if (t.k != topology::kind::ring || t.down.empty() || n < 2) return all;
    std::string broken[2];
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t up = (i + 1) % n, dn = (i + n - 1) % n;
        if (!t.link_up(i, up) && broken[0].empty()) broken[0] = std::to_string(i) + "->" + std::to_string(up);
        if (!t.link_up(i, dn) && broken[1].empty()) broken[1] = std::to_string(i) + "->" + std::to_string(dn);
    }
    std::vector<int> ok;
    if (broken[0].empty()) ok.push_back(+1);
    if (broken[1].empty()) ok.push_back(-1);
    if (ok.empty())
        throw std::invalid_argument("collective: the " + std::string(name_of(a)) +
                                    " algorithm has no usable direction round the ring: link " + broken[0] +
                                    " (direction +) and link " + broken[1] + " (direction -) are down");
    if (a == algo::bidir_ring) return ok;
    return {ok[0]};
}

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

void check_divisible(const params& p, uint32_t n, uint64_t elem) {
    if (p.bytes % (uint64_t(n) * elem) != 0)
        throw std::invalid_argument("collective: bytes " + std::to_string(p.bytes) + " of " +
                                    std::string(name_of(p.o)) + " must be a multiple of chips x element size = " +
                                    std::to_string(n) + " x " + std::to_string(elem) +
                                    " (every chip's block is the same size)");
}

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

}  // namespace

std::string_view name_of(op o) { return op_names[static_cast<int>(o)]; }
std::string_view name_of(algo a) { return algo_names[static_cast<int>(a)]; }

op parse_op(std::string_view s) {
    std::string c = canon(s);
    for (int i = 0; i < 5; ++i)
        if (c == canon(op_names[i])) return static_cast<op>(i);
    throw std::invalid_argument("unknown collective operation '" + std::string(s) + "' (accepted: " + joined(op_names) +
                                ")");
}

algo parse_algo(std::string_view s) {
    std::string c = canon(s);
    for (int i = 0; i < 5; ++i)
        if (c == canon(algo_names[i])) return static_cast<algo>(i);
    if (c == "bidir" || c == "bidirectionalring") return algo::bidir_ring;
    throw std::invalid_argument("unknown collective algorithm '" + std::string(s) +
                                "' (accepted: " + joined(algo_names) + ")");
}

uint32_t topology::chips() const {
    return k == kind::cluster ? servers * chips_per_server : dims[0] * dims[1] * dims[2];
}

std::array<uint32_t, 3> topology::coords(uint32_t chip) const {
    uint32_t local = k == kind::cluster ? chip % chips_per_server : chip;
    return {local % dims[0], local / dims[0] % dims[1], local / (dims[0] * dims[1])};
}

topology topology::make_ring(uint32_t n) {
    if (n == 0) throw std::invalid_argument("ring topology needs at least one chip");
    topology t;
    t.k = kind::ring;
    t.dims = {n, 1, 1};
    t.chips_per_server = n;
    return t;
}

topology topology::make_torus(uint32_t x, uint32_t y, uint32_t z) {
    if (x == 0 || y == 0 || z == 0) throw std::invalid_argument("torus dimensions must be >= 1");
    topology t;
    t.k = kind::torus;
    t.dims = {x, y, z};
    t.chips_per_server = x * y * z;
    return t;
}

topology topology::make_cluster(uint32_t servers, std::array<uint32_t, 3> d) {
    if (servers == 0 || d[0] == 0 || d[1] == 0 || d[2] == 0)
        throw std::invalid_argument("cluster needs >= 1 server and server dimensions >= 1");
    topology t;
    t.k = kind::cluster;
    t.dims = d;
    t.servers = servers;
    t.chips_per_server = d[0] * d[1] * d[2];
    return t;
}

schedule build(const topology& topo, const params& p) {
    schedule s;
    s.p = p;
    s.topo = topo;
    const uint32_t n = topo.chips();
    if (n == 0) throw std::invalid_argument("collective: the topology has no chips");
    const uint64_t elem = numerics::size_of(p.dt);
    if (p.bytes == 0) throw std::invalid_argument("collective: bytes must be > 0");
    if (p.chunks == 0) throw std::invalid_argument("collective: chunks must be >= 1");
    if (p.bytes % elem != 0)
        throw std::invalid_argument("collective: bytes " + std::to_string(p.bytes) + " is not a multiple of the " +
                                    std::string(numerics::name_of(p.dt)) + " element size " + std::to_string(elem));
    switch (p.o) {
    case op::allreduce:
    case op::broadcast:
        s.input_bytes = s.output_bytes = p.bytes;
        break;
    case op::reduce_scatter:
        check_divisible(p, n, elem);
        s.input_bytes = p.bytes;
        s.output_bytes = p.bytes / n;
        break;
    case op::allgather:
        check_divisible(p, n, elem);
        s.input_bytes = p.bytes / n;
        s.output_bytes = p.bytes;
        break;
    case op::alltoall:
        check_divisible(p, n, elem);
        s.input_bytes = s.output_bytes = p.bytes;
        break;
    }
    builder b(s, n);
    if (p.o == op::broadcast) {
        build_broadcast(s, b, elem);
    } else if (p.o == op::alltoall) {
        if (p.a != algo::direct && p.a != algo::ring)
            throw std::invalid_argument("collective: alltoall supports the ring (shift) and direct algorithms, not " +
                                        std::string(name_of(p.a)));
        build_alltoall(s, b, elem);
    } else if (p.a == algo::direct) {
        build_direct(s, b, elem);
    } else {
        build_rings(s, b, elem);
    }
    return s;
}

void validate(const schedule& s) {
    const uint32_t n = s.topo.chips();
    const uint64_t elem = numerics::size_of(s.p.dt);
    auto size_of_buf = [&](buffer b) {
        return b == buffer::input ? s.input_bytes : b == buffer::output ? s.output_bytes : s.scratch_bytes;
    };
    auto where = [](size_t i) { return "collective schedule step " + std::to_string(i) + ": "; };
    auto check_region = [&](size_t i, const region& r, const char* which) {
        if (r.chip >= n) throw std::logic_error(where(i) + which + " chip " + std::to_string(r.chip) + " >= " + std::to_string(n));
        if (r.offset + r.bytes > size_of_buf(r.buf) || r.offset + r.bytes < r.offset)
            throw std::logic_error(where(i) + which + " region [" + std::to_string(r.offset) + ", +" +
                                   std::to_string(r.bytes) + ") outside the " + std::string(buf_name(r.buf)) +
                                   " buffer of " + std::to_string(size_of_buf(r.buf)) + " bytes");
        if (r.offset % elem || r.bytes % elem)
            throw std::logic_error(where(i) + which + " region not aligned to the element size");
    };
    for (size_t i = 0; i < s.steps.size(); ++i) {
        const step& st = s.steps[i];
        check_region(i, st.src, "source");
        check_region(i, st.dst, "destination");
        if (st.src.bytes != st.dst.bytes || st.src.bytes == 0)
            throw std::logic_error(where(i) + "source and destination sizes differ or are zero");
        if (st.dst.buf == buffer::input) throw std::logic_error(where(i) + "writes an input buffer");
        if (st.kind == step_kind::reduce && st.src.chip != st.dst.chip)
            throw std::logic_error(where(i) + "reduce across chips (a reduce runs on one chip)");
        if (st.src.chip == st.dst.chip && st.src.buf == st.dst.buf && st.src.offset < st.dst.offset + st.dst.bytes &&
            st.dst.offset < st.src.offset + st.src.bytes)
            throw std::logic_error(where(i) + "source and destination overlap");
        for (uint32_t d : st.deps)
            if (d >= i) throw std::logic_error(where(i) + "depends on a later step " + std::to_string(d));
    }
    // Concurrency: on small schedules, two steps with no dependency path between them must not touch overlapping
    // bytes where one of them writes.
    const size_t N = s.steps.size();
    if (N > 3000) return;
    const size_t W = (N + 63) / 64;
    std::vector<uint64_t> reach(N * W, 0);  // reach[i] = the steps i depends on, transitively
    for (size_t i = 0; i < N; ++i) {
        for (uint32_t d : s.steps[i].deps) {
            reach[i * W + d / 64] |= uint64_t(1) << (d % 64);
            for (size_t w = 0; w < W; ++w) reach[i * W + w] |= reach[size_t(d) * W + w];
        }
    }
    auto overlap = [](const region& a, const region& b) {
        return a.chip == b.chip && a.buf == b.buf && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
    };
    for (size_t i = 0; i < N; ++i)
        for (size_t j = 0; j < i; ++j) {
            if (reach[i * W + j / 64] >> (j % 64) & 1) continue;
            const step &a = s.steps[i], &b = s.steps[j];
            bool conflict = overlap(a.dst, b.dst) || overlap(a.dst, b.src) || overlap(a.src, b.dst);
            if (conflict)
                throw std::logic_error(where(i) + "touches bytes step " + std::to_string(j) +
                                       " writes or reads with no dependency between them");
        }
}

void execute_reference(const schedule& s, std::vector<chip_buffers>& bufs) {
    const uint32_t n = s.topo.chips();
    if (bufs.size() != n)
        throw std::invalid_argument("collective reference: " + std::to_string(bufs.size()) + " chip buffers for " +
                                    std::to_string(n) + " chips");
    for (auto& b : bufs) {
        if (b.input.size() != s.input_bytes)
            throw std::invalid_argument("collective reference: an input buffer is not " + std::to_string(s.input_bytes) +
                                        " bytes");
        b.output.assign(s.output_bytes, 0);
        b.scratch.assign(s.scratch_bytes, 0);
    }
    auto ptr = [&](const region& r) -> uint8_t* {
        auto& b = bufs[r.chip];
        auto& v = r.buf == buffer::input ? b.input : r.buf == buffer::output ? b.output : b.scratch;
        return v.data() + r.offset;
    };
    const size_t elem = numerics::size_of(s.p.dt);
    std::vector<float> a, b;
    for (const step& st : s.steps) {
        if (st.kind == step_kind::copy) {
            std::memcpy(ptr(st.dst), ptr(st.src), st.src.bytes);
            continue;
        }
        reduce_into(s.p.dt, ptr(st.dst), ptr(st.src), st.src.bytes / elem, a, b);
    }
}

void reduce_into(numerics::dtype dt, void* dst, const void* src, size_t n, std::vector<float>& ta,
                 std::vector<float>& tb) {
    if (dt == numerics::dtype::fp32) {
        float* d = static_cast<float*>(dst);
        const float* s = static_cast<const float*>(src);
        for (size_t i = 0; i < n; ++i) d[i] = d[i] + s[i];
        return;
    }
    ta.resize(n);
    tb.resize(n);
    numerics::decode(dt, dst, ta.data(), n);
    numerics::decode(dt, src, tb.data(), n);
    for (size_t i = 0; i < n; ++i) ta[i] = ta[i] + tb[i];
    numerics::encode(dt, ta.data(), dst, n);
}

double bus_factor(op o, uint32_t n) {
    if (n <= 1) return o == op::broadcast ? 1.0 : 0.0;
    switch (o) {
    case op::allreduce: return 2.0 * (n - 1) / n;
    case op::reduce_scatter:
    case op::allgather:
    case op::alltoall: return double(n - 1) / n;
    case op::broadcast: return 1.0;
    }
    return 1.0;
}

}  // namespace trnsim::collective
