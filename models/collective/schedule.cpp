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
//
// The algorithms live one per file (algo_*.cpp), on the builder of schedule_detail.h.
#include "models/collective/schedule.h"
#include "models/collective/schedule_detail.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

namespace trnsim::collective {

using namespace detail;

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

void check_divisible(const params& p, uint32_t n, uint64_t elem) {
    if (p.bytes % (uint64_t(n) * elem) != 0)
        throw std::invalid_argument("collective: bytes " + std::to_string(p.bytes) + " of " +
                                    std::string(name_of(p.o)) + " must be a multiple of chips x element size = " +
                                    std::to_string(n) + " x " + std::to_string(elem) +
                                    " (every chip's block is the same size)");
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

void check_step_budget(const params& p, uint64_t steps) {
    if (steps > std::min<uint64_t>(p.max_steps, UINT32_MAX))
        throw schedule_too_large("the schedule has more than " + std::to_string(std::min<uint64_t>(p.max_steps, UINT32_MAX)) +
                                 " steps");
}

double step_bound(const topology& topo, const params& p) {
    const double n = topo.chips();
    double k = n;
    if (p.a == algo::torus || p.a == algo::hierarchical)
        k = double(topo.dims[0]) + topo.dims[1] + topo.dims[2] + (topo.k == topology::kind::cluster ? topo.servers : 0);
    return double(std::max<uint32_t>(p.chunks, 1)) * (6.0 * n * k + 2.0 * n);
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
    numerics::accumulate(dt, dst, src, n, ta, tb);
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
