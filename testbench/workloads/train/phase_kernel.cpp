#include "testbench/workloads/train/phase_kernel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/verification/golden/golden_transformer.h"
#include "testbench/stimulus.h"
#include "testbench/workloads/transformer/kernel_builder.h"

namespace trnsim::train {

namespace {

using tb::kernel_builder;
using tb::tile;
using ve::act_fn;
using ve::bcast;
using ve::vop;
constexpr numerics::dtype F32 = numerics::dtype::fp32;

// rows x cols, 1 x cols (per-feature), rows x 1 (per-row, FP32); stats: a split softmax's row statistics, per part
// (max(parts, 1) of them) the rows' maxima then their exp-sums, FP32 (parts x 2 x rows)
enum class shape : uint8_t { full, row, col, stats, table };  // table: table_rows x cols

struct tensor_def {
    const char* name;
    bool fp32;   // else the model dtype
    shape sh;
    int role;    // 0 input, 1 output, 2 both (updated in place)
};
struct set_def {
    const char* name;
    bool fp32;
    bool col;    // a per-partition scalar (1 column)
};
struct kind_def {
    bool reduce;                   // rows are reduced: a unit is a whole row tile
    std::vector<tensor_def> hbm;   // every tensor the phase reads or writes
    std::vector<set_def> set;      // the SBUF tiles of one buffer set
};

kind_def def_of(phase_kind k) {
    switch (k) {
    case phase_kind::add: return {false, {{"a", 0, shape::full, 0}, {"b", 0, shape::full, 0}, {"y", 0, shape::full, 1}},
                                  {{"a", 0, 0}, {"b", 0, 0}, {"y", 0, 0}}};
    case phase_kind::copy: return {false, {{"a", 0, shape::full, 0}, {"y", 0, shape::full, 1}}, {{"a", 0, 0}}};
    case phase_kind::colsum:  // y = the sum of x's rows (FP32 rows, such as the norm backward's gain-gradient rows)
        return {false, {{"x", 1, shape::full, 0}, {"y", 0, shape::row, 1}}, {{"x", 1, 0}, {"part", 1, 0}, {"t", 1, 0}, {"y", 0, 0}}};
    case phase_kind::swiglu:
        return {false, {{"g", 0, shape::full, 0}, {"u", 0, shape::full, 0}, {"y", 0, shape::full, 1}},
                {{"g", 0, 0}, {"u", 0, 0}, {"s", 1, 0}, {"y", 0, 0}}};
    case phase_kind::swiglu_bwd:
        return {false,
                {{"g", 0, shape::full, 0}, {"u", 0, shape::full, 0}, {"dy", 0, shape::full, 0}, {"dg", 0, shape::full, 1},
                 {"du", 0, shape::full, 1}},
                {{"g", 0, 0}, {"u", 0, 0}, {"dy", 0, 0}, {"s", 1, 0}, {"t1", 1, 0}, {"t2", 1, 0}, {"dg", 0, 0},
                 {"du", 0, 0}}};
    case phase_kind::rope:
        return {false, {{"x", 0, shape::full, 0}, {"cos", 0, shape::full, 0}, {"sin", 0, shape::full, 0}, {"y", 0, shape::full, 1}},
                {{"x", 0, 0}, {"cos", 0, 0}, {"sin", 0, 0}, {"t", 1, 0}, {"u", 1, 0}, {"y", 0, 0}}};
    case phase_kind::rmsnorm:
        return {true, {{"x", 0, shape::full, 0}, {"gain", 0, shape::row, 0}, {"y", 0, shape::full, 1}, {"rstd", 1, shape::col, 1}},
                {{"x", 0, 0}, {"sq", 1, 0}, {"xn", 1, 0}, {"y", 0, 0}, {"ss", 1, 1}, {"r", 1, 1}}};
    case phase_kind::rmsnorm_bwd:
        return {true,
                {{"x", 0, shape::full, 0}, {"dy", 0, shape::full, 0}, {"gain", 0, shape::row, 0}, {"rstd", 1, shape::col, 0},
                 {"dx", 0, shape::full, 1}},
                {{"x", 0, 0}, {"dy", 0, 0}, {"xn", 1, 0}, {"dxn", 1, 0}, {"u", 1, 0}, {"dx", 0, 0},
                 {"r", 1, 1}, {"c", 1, 1}}};
    case phase_kind::softmax:
        return {true, {{"s", 0, shape::full, 0}, {"p", 0, shape::full, 1}},
                {{"s", 0, 0}, {"e", 1, 0}, {"p", 0, 0}, {"mx", 1, 1}, {"sm", 1, 1}, {"rs", 1, 1}}};
    case phase_kind::softmax_stats:
        return {true, {{"s", 0, shape::full, 0}, {"stats", 1, shape::stats, 1}}, {{"s", 0, 0}, {"e", 1, 0}}};
    case phase_kind::softmax_merge:
        return {true, {{"s", 0, shape::full, 0}, {"stats", 1, shape::stats, 0}, {"p", 0, shape::full, 1}},
                {{"s", 0, 0}, {"e", 1, 0}, {"p", 0, 0}}};
    case phase_kind::softmax_bwd:
        return {true, {{"p", 0, shape::full, 0}, {"dp", 0, shape::full, 0}, {"ds", 0, shape::full, 1}},
                {{"p", 0, 0}, {"dp", 0, 0}, {"t", 1, 0}, {"u", 1, 0}, {"ds", 0, 0}, {"s", 1, 1}}};
    case phase_kind::gather:  // row moves: no SBUF buffer sets
        return {false, {{"table", 0, shape::table, 0}, {"zero", 0, shape::row, 0}, {"y", 0, shape::full, 1}}, {}};
    case phase_kind::scatter_add:
        return {false, {{"dy", 0, shape::full, 0}, {"zero", 0, shape::row, 0}, {"table", 0, shape::table, 1}}, {}};
    case phase_kind::adam:
        return {false,
                {{"param", 1, shape::full, 2}, {"m", 1, shape::full, 2}, {"v", 1, shape::full, 2}, {"grad", 0, shape::full, 0},
                 {"w", 0, shape::full, 1}},
                {{"param", 1, 0}, {"m", 1, 0}, {"v", 1, 0}, {"grad", 0, 0}, {"g2", 1, 0}, {"den", 1, 0}, {"w", 0, 0}}};
    }
    throw std::logic_error("phase kind");
}
// The phase's tensors as s runs it: an accumulating colsum reads y as well as writing it (a scatter_add its table).
kind_def def_of(const phase_spec& s) {
    kind_def kd = def_of(s.kind);
    if (s.accumulate)
        for (auto& t : kd.hbm)
            if (t.role == 1) t.role = 2;
    return kd;
}

struct hbm_tensor {
    tensor_def d;
    uint64_t addr;
    uint64_t pitch;  // elements between rows (rows x cols tensors)
};


// --- layout: where every tensor lives in HBM, the SBUF buffer sets and how the work is cut into units ----------
struct phase_plan {
    std::string what;             // "phase rmsnorm 300 x 384", for messages
    kind_def kd;
    uint32_t P = 0, cores = 0;    // SBUF partitions, cores
    std::vector<hbm_tensor> hbm;
    uint64_t dgain_addr = 0;      // rmsnorm_bwd: the per-row-tile gain-gradient rows
    uint64_t hbm_bytes = 0;       // HBM the tensors span from hbm_base + hbm_offset (4 KiB aligned)
    bool norm_bwd = false, has_gain = false, rope = false, multipass = false;
    uint64_t rope_block = 0;      // RoPE in blocks of this many columns (0: over the whole row, in halves)
    uint64_t logical = 0, W = 0;  // columns a unit covers (RoPE: of each half), its chunk width
    uint32_t sets = 2;            // buffer sets
    uint64_t row_tiles = 0, row_chunks = 1, chunks = 1, units = 0;

    const hbm_tensor& at(const char* n) const {
        for (const auto& t : hbm)
            if (std::string(t.d.name) == n) return t;
        throw std::logic_error(std::string("phase tensor ") + n);
    }
};

// A tensor's rows and columns in phase s (its shape).
std::pair<uint64_t, uint64_t> dims(const phase_spec& s, const tensor_def& d) {
    switch (d.sh) {
    case shape::row: return {1, s.cols};
    case shape::col: return {s.rows, 1};
    case shape::stats: return {2 * uint64_t(std::max<uint32_t>(s.parts, 1)), s.rows};
    case shape::table: return {s.table_rows, s.cols};
    case shape::full: break;
    }
    return {s.rows, s.cols};
}
uint64_t elements(const phase_spec& s, const tensor_def& d) {
    const auto [r, c] = dims(s, d);
    return r * c;
}
uint64_t elements(const phase_spec& s, const hbm_tensor& t) { return elements(s, t.d); }

// Constants of the math (values only matter to functional runs); Adam runs its step 2.
constexpr float EPS = 1e-5f, B1 = 0.9f, B2 = 0.999f, LR = 1e-4f, ADAM_EPS = 1e-8f;
constexpr float BC1 = 1.0f - B1 * B1, BC2 = 1.0f - B2 * B2;

phase_plan plan_phase(const platform::chip_config& cc, const phase_spec& s) {
    const std::string what = std::string("phase ") + name_of(s.kind) + " " + std::to_string(s.rows) + " x " +
                             std::to_string(s.cols);
    if (s.rows == 0 || s.cols == 0) throw std::invalid_argument(what + ": empty tensor");
    if (s.cols > 0xFFFFFFFFull) throw std::invalid_argument(what + ": too many columns");
    if (s.causal_block && (s.kind != phase_kind::softmax || s.causal_block % cc.core.sbuf.partitions))
        throw std::invalid_argument(what + ": a causal mask applies to a softmax whose blocks of queries (" +
                                    std::to_string(s.causal_block) + ") are a multiple of the " +
                                    std::to_string(cc.core.sbuf.partitions) + " SBUF partitions");
    if (s.kind == phase_kind::rope && s.cols % 2)
        throw std::invalid_argument(what + ": RoPE rotates column pairs, the width must be even");
    if (s.rope_dim && (s.kind != phase_kind::rope || s.rope_dim % 2 || s.cols % s.rope_dim))
        throw std::invalid_argument(what + ": a RoPE block of " + std::to_string(s.rope_dim) +
                                    " columns (a head) must be even and divide the row");
    if (s.parts == 0 || (s.parts > 1 && s.kind != phase_kind::softmax_merge))
        throw std::invalid_argument(what + ": only a softmax_merge merges the statistics of several parts (parts " +
                                    std::to_string(s.parts) + ")");
    if (s.accumulate && s.kind != phase_kind::colsum && s.kind != phase_kind::scatter_add)
        throw std::invalid_argument(what + ": only a colsum or a scatter_add accumulates into its output");
    if (row_moves(s.kind)) {
        if (s.index.size() != s.rows)
            throw std::invalid_argument(what + ": " + std::to_string(s.index.size()) + " row indices for " +
                                        std::to_string(s.rows) + " rows");
        if (s.table_rows == 0) throw std::invalid_argument(what + ": an empty table");
        for (size_t i = 0; i < s.index.size(); ++i)
            if (s.index[i] >= int64_t(s.table_rows))
                throw std::invalid_argument(what + ": row " + std::to_string(i) + "'s index " +
                                            std::to_string(s.index[i]) + " is outside the table's " +
                                            std::to_string(s.table_rows) + " rows");
    } else if (!s.index.empty() || s.table_rows) {
        throw std::invalid_argument(what + ": only a gather or a scatter_add takes row indices");
    }
    const kind_def kd = def_of(s);
    const uint32_t P = cc.core.sbuf.partitions, cores = cc.cores;
    const uint64_t dsz = numerics::size_of(s.dtype);
    auto esz = [&](bool fp32) { return fp32 ? 4 : dsz; };
    auto padded = [](uint64_t b) { return (b + 63) / 64 * 64; };

    // HBM: every tensor once, 4 KiB aligned (plus, for the norm backward, one FP32 gain-gradient row per row tile).
    std::vector<hbm_tensor> hbm;
    uint64_t next = cc.hbm_base + s.hbm_offset;
    auto place = [&](uint64_t bytes) {
        const uint64_t a = next;
        next += (bytes + 4095) / 4096 * 4096;
        return a;
    };
    const bool norm_bwd = s.kind == phase_kind::rmsnorm_bwd;
    for (const auto& [name, t] : s.at) {
        bool known = norm_bwd && name == "dgain";
        std::string msg = what;
        for (const auto& d : kd.hbm) known = known || name == d.name;
        if (!known) {
            msg += ": no tensor '";
            msg += name;
            msg += "' (it has ";
            for (size_t i = 0; i < kd.hbm.size(); ++i) msg += (i ? ", " : ""), msg += kd.hbm[i].name;
            msg += norm_bwd ? ", dgain)" : ")";
            throw std::invalid_argument(msg);
        }
        if (t.pitch && t.pitch < s.cols) {
            msg += ": tensor ";
            msg += name;
            msg += "'s row pitch " + std::to_string(t.pitch) + " is shorter than its " + std::to_string(s.cols) + " columns";
            throw std::invalid_argument(msg);
        }
    }
    for (const auto& d : kd.hbm) {
        const uint64_t n = elements(s, d);
        const auto it = s.at.find(d.name);
        if (it != s.at.end()) hbm.push_back({d, it->second.addr, it->second.pitch ? it->second.pitch : s.cols});
        else hbm.push_back({d, place(n * esz(d.fp32)), s.cols});
    }
    const auto dg = s.at.find("dgain");
    const uint64_t dgain_addr = !norm_bwd ? 0 : dg != s.at.end() ? dg->second.addr
                                          : place((s.rows + cc.core.sbuf.partitions - 1) / cc.core.sbuf.partitions * s.cols * 4);
    if (next - cc.hbm_base > cc.hbm.capacity_bytes)
        throw std::invalid_argument(what + ": its tensors (" +
                                    std::to_string((next - cc.hbm_base - s.hbm_offset) >> 20) + " MiB" +
                                    (s.hbm_offset ? " at " + std::to_string(s.hbm_offset >> 20) + " MiB" : "") +
                                    ") do not fit HBM (chip.hbm.capacity_gib)");

    if (row_moves(s.kind)) {  // DMA only: no SBUF, no units
        phase_plan pl;
        pl.what = what, pl.kd = kd, pl.P = cc.core.sbuf.partitions, pl.cores = cc.cores, pl.hbm = std::move(hbm);
        pl.hbm_bytes = next - cc.hbm_base - s.hbm_offset;
        return pl;
    }

    // SBUF budget: per-core tiles (the gain row, the gain-gradient partial row), then buffer sets.
    const bool has_gain = s.kind == phase_kind::rmsnorm || norm_bwd;
    const uint64_t per_core = (has_gain ? padded(s.cols * dsz) : 0) + (norm_bwd ? padded(s.cols * 4) : 0);
    const uint64_t part = cc.core.sbuf.partition_bytes;
    uint64_t per_col = 0, fixed = 0;
    for (const auto& t : kd.set) {
        if (t.col) fixed += 64;
        else per_col += esz(t.fp32);
    }
    // RoPE over the whole row pairs column c with c + cols / 2 (the half-split layout): a unit covers the same
    // columns of both halves, so its tiles are twice the chunk wide. RoPE in blocks of rope_dim columns (the heads of
    // a q|k row) covers whole blocks, each rotated in its halves.
    const bool rope = s.kind == phase_kind::rope;
    const uint64_t block = rope && s.rope_dim && s.rope_dim < s.cols ? s.rope_dim : 0;
    const bool halves = rope && !block;
    const uint64_t logical = halves ? s.cols / 2 : s.cols;
    auto set_bytes = [&](uint64_t w) {
        uint64_t b = 0;
        for (const auto& t : kd.set) b += t.col ? 64 : padded(w * esz(t.fp32) * (halves ? 2 : 1));
        return b;
    };
    const uint64_t row_tiles = (s.rows + P - 1) / P;
    if (halves) per_col *= 2;
    uint64_t W = logical;
    uint32_t sets = 2;
    // Softmax and RMS norm rows too long for one buffer set (a vocabulary's logits) run in column chunks, two passes
    // over HBM: the row statistics first (an online max and rescaled exp-sum; the sum of squares), then the outputs.
    // A split softmax's two phases always run that way (the statistics pass; the output pass from the merged ones).
    const bool split = s.kind == phase_kind::softmax_stats || s.kind == phase_kind::softmax_merge;
    const bool can_multipass = s.kind == phase_kind::softmax || s.kind == phase_kind::rmsnorm || split;
    bool multipass = false;
    if (split || per_core + 2 * set_bytes(W) > part) {
        if (kd.reduce && can_multipass && (split || per_core + set_bytes(W) > part)) {
            multipass = true;
            const uint64_t acc = 5 * 64;  // the per-core row accumulators
            const uint64_t room = part > per_core + acc + 2 * fixed + 256 ? (part - per_core - acc - 2 * fixed - 256) / 2 : 0;
            W = std::min<uint64_t>(8192, room / per_col / 64 * 64);
            if (W == 0) throw std::invalid_argument(what + ": SBUF holds no buffer set");
        } else if (kd.reduce) {
            sets = 1;
            if (per_core + set_bytes(W) > part)
                throw std::invalid_argument(what + ": a row of " + std::to_string(s.cols) + " columns needs " +
                                            std::to_string(per_core + set_bytes(W)) +
                                            " SBUF bytes per partition, chip.core.sbuf.partition_kib gives " +
                                            std::to_string(part));
        } else {
            const uint64_t room = part > per_core + 2 * fixed + 256 ? (part - per_core - 2 * fixed - 256) / 2 : 0;
            W = std::min<uint64_t>(W, room / per_col / 64 * 64);
            if (W == 0) throw std::invalid_argument(what + ": SBUF holds no buffer set");
        }
    }
    if (!kd.reduce) {
        W = std::min<uint64_t>(W, 8192);
        const uint64_t want = 4ull * cores;  // enough pieces for every core to overlap loads with work
        const uint64_t tiles = s.kind == phase_kind::colsum ? 1 : row_tiles;  // units per chunk of columns
        if (tiles * ((logical + W - 1) / W) < want) {
            const uint64_t chunks = (want + tiles - 1) / tiles;
            W = std::max<uint64_t>(64, ((logical + chunks - 1) / chunks + 63) / 64 * 64);
            W = std::min(W, logical);
        }
        if (block) {  // whole blocks per unit
            if (per_core + 2 * set_bytes(block) > part)
                throw std::invalid_argument(what + ": a RoPE block of " + std::to_string(block) +
                                            " columns does not fit two buffer sets in an SBUF partition");
            W = std::max(block, W / block * block);
        }
    }
    const uint64_t row_chunks = multipass ? (s.cols + W - 1) / W : 1;  // chunks of one row (multi-pass)
    // A column sum's unit is a chunk of columns over every row tile.
    const uint64_t chunks = multipass ? 1 : (logical + W - 1) / W;
    const uint64_t units = s.kind == phase_kind::colsum ? chunks : row_tiles * chunks;

    phase_plan pl;
    pl.what = what;
    pl.kd = kd;
    pl.P = P;
    pl.cores = cores;
    pl.hbm = std::move(hbm);
    pl.dgain_addr = dgain_addr;
    pl.hbm_bytes = next - cc.hbm_base - s.hbm_offset;
    pl.norm_bwd = norm_bwd;
    pl.has_gain = has_gain;
    pl.rope = rope;
    pl.rope_block = block;
    pl.multipass = multipass;
    pl.logical = logical;
    pl.W = W;
    pl.sets = sets;
    pl.row_tiles = row_tiles;
    pl.row_chunks = row_chunks;
    pl.chunks = chunks;
    pl.units = units;
    return pl;
}

// --- emit: core c's program (its units of the work, two buffer sets alternating) ---------------------------------

// A gather's or scatter_add's row moves on core c (phase_spec::index), on one DMA queue: a gather's share of the
// tokens (a contiguous block), or the scatter_add's copies into the table rows the core owns (r mod cores = c),
// after the rows are set from the zero row, in waves: wave w holds each row's (w+1)-th copy and waits for the
// waves before it (semaphore 0 counts the completed moves).
core::core_program emit_rows(const phase_spec& s, const phase_plan& pl, uint32_t c, uint64_t& instructions) {
    core::core_program prog;
    prog.dma.resize(1);
    auto& q = prog.dma[0];
    const uint64_t es = numerics::size_of(s.dtype), row = s.cols * es, cores = pl.cores;
    const hbm_tensor &table = pl.at("table"), &zero = pl.at("zero");
    auto table_row = [&](int64_t r) { return table.addr + uint64_t(r) * row; };
    auto move = [&](uint64_t src, uint64_t dst) {
        core::instruction in;
        in.op = core::opcode::dma;
        in.dma.src = src, in.dma.dst = dst, in.dma.row_bytes = row;
        return in;
    };
    if (s.kind == phase_kind::gather) {
        const hbm_tensor& y = pl.at("y");
        for (uint64_t i = s.rows * c / cores; i < s.rows * (c + 1) / cores; ++i)
            q.push_back(move(s.index[i] >= 0 ? table_row(s.index[i]) : zero.addr, y.addr + i * y.pitch * es));
    } else {
        const hbm_tensor& dy = pl.at("dy");
        prog.semaphores = 1;
        uint64_t done = 0;  // the moves before the current wave (each signals semaphore 0)
        if (!s.accumulate && c < s.table_rows) {
            core::instruction in = move(zero.addr, table_row(c));
            in.dma.rows = uint32_t((s.table_rows - c + cores - 1) / cores);
            in.dma.src_stride = 0, in.dma.dst_stride = int64_t(cores * row);
            in.signal = 0;
            q.push_back(in);
            ++done;
        }
        std::vector<uint32_t> copies((s.table_rows + cores - 1) / cores, 0);  // per owned row: its copies so far
        std::vector<std::vector<uint64_t>> waves;
        for (uint64_t i = 0; i < s.rows; ++i) {
            const int64_t r = s.index[i];
            if (r < 0 || uint64_t(r) % cores != c) continue;
            const uint32_t w = copies[uint64_t(r) / cores]++;
            if (waves.size() <= w) waves.emplace_back();
            waves[w].push_back(i);
        }
        for (const auto& wave : waves) {
            const uint64_t before = done;
            for (uint64_t i : wave) {
                core::instruction in = move(dy.addr + i * dy.pitch * es, table_row(s.index[i]));
                in.dma.reduce = s.dtype;
                if (before && i == wave.front()) in.waits.push_back({0, before});
                in.signal = 0;
                q.push_back(in);
                ++done;
            }
        }
    }
    instructions += q.size();
    return prog;
}

core::core_program emit_core(const platform::chip_config& cc, const phase_spec& s, const phase_plan& pl, uint32_t c,
                             uint64_t& instructions) {
    if (row_moves(s.kind)) return emit_rows(s, pl, c, instructions);
    const kind_def& kd = pl.kd;
    const uint32_t P = pl.P, cores = pl.cores, sets = pl.sets;
    const uint64_t W = pl.W, logical = pl.logical, row_tiles = pl.row_tiles, row_chunks = pl.row_chunks;
    const uint64_t chunks = pl.chunks, units = pl.units, dgain_addr = pl.dgain_addr;
    const bool has_gain = pl.has_gain, norm_bwd = pl.norm_bwd, multipass = pl.multipass;
    const bool halves = pl.rope && !pl.rope_block;
    auto H = [&](const char* n) -> const hbm_tensor& { return pl.at(n); };
    auto whole = [&](const hbm_tensor& t) {  // a rows x cols tensor, its rows `pitch` elements apart
        return kernel_builder::hbm(t.addr, uint32_t(s.rows), uint32_t(t.pitch), t.d.name, t.d.fp32 ? F32 : s.dtype)
            .cols(0, uint32_t(s.cols));
    };
    const float inv_h = 1.0f / float(s.cols), eps = EPS;
    const float b1 = B1, b2 = B2, lr = LR, adam_eps = ADAM_EPS, bc1 = BC1, bc2 = BC2;
    kernel_builder kb(cc, c);
    tile gain, dgp;
    if (has_gain) {
        gain = kb.sbuf(1, uint32_t(s.cols), "gain", s.dtype);
        kb.copy(gain, kernel_builder::hbm(H("gain").addr, 1, uint32_t(s.cols), "gain", s.dtype));
    }
    if (norm_bwd) {
        dgp = kb.sbuf(1, uint32_t(s.cols), "dgain.part");
    }
    tile accM, accS, accC, accT, accR;  // multi-pass row statistics
    if (multipass) {
        accM = kb.sbuf(P, 1, "row.max"), accS = kb.sbuf(P, 1, "row.sum"), accC = kb.sbuf(P, 1, "chunk.stat");
        accT = kb.sbuf(P, 1, "row.tmp"), accR = kb.sbuf(P, 1, "row.scale");
    }
    std::vector<std::vector<tile>> set(sets);
    for (uint32_t k = 0; k < sets; ++k)
        for (const auto& t : kd.set)
            set[k].push_back(kb.sbuf(P, t.col ? 1 : uint32_t(halves ? 2 * W : W), std::string(t.name) + std::to_string(k),
                                     t.fp32 ? F32 : s.dtype));
    uint64_t done = 0;
    for (uint64_t u = c; u < units; u += cores, ++done) {
        const uint64_t rt = u / chunks, ch = u % chunks;
        const uint32_t r0 = uint32_t(rt * P), np = uint32_t(std::min<uint64_t>(P, s.rows - rt * P));
        const uint32_t c0 = uint32_t(ch * W), w = uint32_t(std::min<uint64_t>(W, logical - ch * W));
        const auto& st = set[done % sets];
        auto S = [&](const char* n) {
            for (size_t i = 0; i < kd.set.size(); ++i)
                if (std::string(kd.set[i].name) == n)
                    return kd.set[i].col ? st[i].rows(0, np) : st[i].rows(0, np).cols(0, w);
            throw std::logic_error(std::string("phase tile ") + n);
        };
        auto tile_of = [&](const char* n) {  // a tile of this unit's buffer set, all its columns
            for (size_t i = 0; i < kd.set.size(); ++i)
                if (std::string(kd.set[i].name) == n) return st[i];
            throw std::logic_error(std::string("phase tile ") + n);
        };
        auto T = [&](const char* n) {  // this unit's block of an HBM tensor
            const auto& t = H(n);
            const auto type = t.d.fp32 ? F32 : s.dtype;
            if (t.d.sh == shape::col) return kernel_builder::hbm(t.addr, uint32_t(s.rows), 1, n, type).rows(r0, np);
            if (t.d.sh == shape::row) return kernel_builder::hbm(t.addr, 1, uint32_t(s.cols), n, type).cols(c0, w);
            return whole(t).rows(r0, np).cols(c0, w);
        };
        auto load = [&](const char* n) { kb.copy(S(n), T(n)); };
        // The causal mask of this unit's scores from column k0: its first row is query r0 mod causal_block.
        auto mask = [&](const tile& x, uint64_t k0) {
            if (s.causal_block)
                kb.unary(vop::causal_mask, x, x, 1.0f, float(int64_t(r0 % s.causal_block) - int64_t(k0)));
        };
        if (multipass) {
            uint64_t piece = 0;
            auto chunk_pass = [&](const std::function<void(const std::vector<tile>&, uint32_t, uint32_t, bool)>& f) {
                for (uint64_t k = 0; k < row_chunks; ++k, ++piece) {
                    const uint32_t k0 = uint32_t(k * W), kw = uint32_t(std::min<uint64_t>(W, s.cols - k * W));
                    f(set[piece % sets], k0, kw, k == 0);
                }
            };
            auto Sk = [&](const std::vector<tile>& stt, const char* n, uint32_t kw) {
                for (size_t i = 0; i < kd.set.size(); ++i)
                    if (std::string(kd.set[i].name) == n)
                        return kd.set[i].col ? stt[i].rows(0, np) : stt[i].rows(0, np).cols(0, kw);
                throw std::logic_error(std::string("phase tile ") + n);
            };
            auto Tk = [&](const char* n, uint32_t k0, uint32_t kw) { return whole(H(n)).rows(r0, np).cols(k0, kw); };
            const tile M = accM.rows(0, np), Sum = accS.rows(0, np), C1 = accC.rows(0, np);
            const tile Tt = accT.rows(0, np), R = accR.rows(0, np);
            // The rows' statistics over this shard: M the max, Sum the exp-sum relative to it.
            auto row_stats = [&] {
                chunk_pass([&](const std::vector<tile>& stt, uint32_t k0, uint32_t kw, bool first) {
                    const tile x = Sk(stt, "s", kw), e = Sk(stt, "e", kw);
                    kb.copy(x, Tk("s", k0, kw));
                    mask(x, k0);
                    kb.unary(vop::reduce_max_free, C1, x);
                    if (first) {
                        kb.unary(vop::copy, M, C1);
                    } else {  // Sum *= exp(M - max(M, chunk max)); M = max(M, chunk max)
                        kb.binary(vop::max, Tt, M, C1);
                        kb.binary(vop::sub, C1, M, Tt);
                        kb.act(C1, C1, act_fn::exp, s.scale);
                        kb.binary(vop::mul, Sum, Sum, C1);
                        kb.unary(vop::copy, M, Tt);
                    }
                    kb.binary(vop::sub, e, x, M, bcast::column);
                    kb.act(e, e, act_fn::exp, s.scale);
                    kb.unary(vop::reduce_sum_free, first ? Sum : C1, e);
                    if (!first) kb.binary(vop::add, Sum, Sum, C1);
                });
            };
            // part g's statistics of these rows in HBM: its maxima, then its exp-sums.
            auto stat_of = [&](uint64_t g, bool sums) {
                return kernel_builder::hbm(H("stats").addr + (2 * g + (sums ? 1 : 0)) * s.rows * 4, uint32_t(s.rows), 1,
                                           "stats", F32)
                    .rows(r0, np);
            };
            if (s.kind == phase_kind::softmax_stats) {
                row_stats();
                kb.copy(stat_of(0, false), M);
                kb.copy(stat_of(0, true), Sum);
                continue;
            }
            if (s.kind == phase_kind::softmax_merge) {  // every part's statistics merged: M their max, Sum rescaled
                kb.copy(M, stat_of(0, false));
                kb.copy(Sum, stat_of(0, true));
                for (uint64_t g = 1; g < s.parts; ++g) {
                    kb.copy(C1, stat_of(g, false));
                    kb.copy(R, stat_of(g, true));
                    kb.binary(vop::max, Tt, M, C1);
                    kb.binary(vop::sub, C1, C1, Tt);  // R = sum_g exp(scale (m_g - M'))
                    kb.act(C1, C1, act_fn::exp, s.scale);
                    kb.binary(vop::mul, R, R, C1);
                    kb.binary(vop::sub, C1, M, Tt);  // Sum = Sum exp(scale (M - M')) + R
                    kb.act(C1, C1, act_fn::exp, s.scale);
                    kb.binary(vop::mul, Sum, Sum, C1);
                    kb.binary(vop::add, Sum, Sum, R);
                    kb.unary(vop::copy, M, Tt);
                }
            } else if (s.kind == phase_kind::softmax) {
                row_stats();
            }
            if (s.kind == phase_kind::softmax || s.kind == phase_kind::softmax_merge) {
                kb.act(R, Sum, act_fn::reciprocal);
                chunk_pass([&](const std::vector<tile>& stt, uint32_t k0, uint32_t kw, bool) {
                    const tile x = Sk(stt, "s", kw), e = Sk(stt, "e", kw), pt = Sk(stt, "p", kw);
                    kb.copy(x, Tk("s", k0, kw));
                    mask(x, k0);
                    kb.binary(vop::sub, e, x, M, bcast::column);
                    kb.act(e, e, act_fn::exp, s.scale);
                    kb.binary(vop::mul, pt, e, R, bcast::column);
                    kb.copy(Tk("p", k0, kw), pt);
                });
            } else {  // rmsnorm
                chunk_pass([&](const std::vector<tile>& stt, uint32_t k0, uint32_t kw, bool first) {
                    const tile x = Sk(stt, "x", kw), sq = Sk(stt, "sq", kw);
                    kb.copy(x, Tk("x", k0, kw));
                    kb.binary(vop::mul, sq, x, x);
                    kb.unary(vop::reduce_sum_free, first ? Sum : C1, sq);
                    if (!first) kb.binary(vop::add, Sum, Sum, C1);
                });
                kb.act(R, Sum, act_fn::rsqrt, inv_h, eps);
                kb.copy(kernel_builder::hbm(H("rstd").addr, uint32_t(s.rows), 1, "rstd", F32).rows(r0, np), R);
                chunk_pass([&](const std::vector<tile>& stt, uint32_t k0, uint32_t kw, bool) {
                    const tile x = Sk(stt, "x", kw), xn = Sk(stt, "xn", kw), y = Sk(stt, "y", kw);
                    kb.copy(x, Tk("x", k0, kw));
                    kb.binary(vop::mul, xn, x, R, bcast::column);
                    kb.binary(vop::mul, y, xn, gain.cols(k0, kw), bcast::row);
                    kb.copy(Tk("y", k0, kw), y);
                });
            }
            continue;
        }
        auto store = [&](const char* hn, const char* sn) { kb.copy(T(hn), S(sn)); };
        switch (s.kind) {
        case phase_kind::colsum: {  // this chunk of columns summed over every row tile, across partitions
            const tile acc = S("part").rows(0, 1), y = S("y").rows(0, 1);
            for (uint64_t k = 0; k < row_tiles; ++k) {
                const uint32_t k0 = uint32_t(k * P), kn = uint32_t(std::min<uint64_t>(P, s.rows - k * P));
                const tile x = S("x").rows(0, kn);
                kb.copy(x, whole(H("x")).rows(k0, kn).cols(c0, w));
                if (k == 0) {
                    kb.unary(vop::reduce_sum_part, acc, x);
                } else {
                    const tile t = S("t").rows(0, 1);
                    kb.unary(vop::reduce_sum_part, t, x);
                    kb.binary(vop::add, acc, acc, t);
                }
            }
            kb.unary(vop::copy, y, acc);  // to the model dtype
            kb.copy(T("y"), y, s.accumulate);
            break;
        }
        case phase_kind::add:
            load("a"), load("b");
            kb.binary(vop::add, S("y"), S("a"), S("b"));
            store("y", "y");
            break;
        case phase_kind::copy:
            load("a");
            store("y", "a");
            break;
        case phase_kind::swiglu:
            load("g"), load("u");
            kb.act(S("s"), S("g"), act_fn::silu);
            kb.binary(vop::mul, S("y"), S("s"), S("u"));
            store("y", "y");
            break;
        case phase_kind::swiglu_bwd: {  // y = silu(g) u: du = dy silu(g), dg = dy u s (1 + g (1 - s)), s = sigmoid(g)
            load("g"), load("u"), load("dy");
            const tile sg = S("s"), t1 = S("t1"), t2 = S("t2");
            kb.act(sg, S("g"), act_fn::sigmoid);
            kb.binary(vop::mul, t1, S("g"), sg);
            kb.binary(vop::mul, S("du"), S("dy"), t1);
            kb.binary(vop::mul, t2, S("dy"), S("u"));
            kb.unary(vop::scale_bias, t1, sg, -1.0f, 1.0f);
            kb.binary(vop::mul, t1, S("g"), t1);
            kb.unary(vop::scale_bias, t1, t1, 1.0f, 1.0f);
            kb.binary(vop::mul, t1, sg, t1);
            kb.binary(vop::mul, S("dg"), t2, t1);
            store("dg", "dg"), store("du", "du");
            break;
        }
        case phase_kind::rope: {  // y1 = x1 cos1 - x2 sin1, y2 = x2 cos2 + x1 sin2 (halves 1 and 2 of a block)
            // Each rotation block of the unit as (half 1, half 2) column ranges of the SBUF tiles: over the whole
            // row, the tiles hold this unit's columns of half 1 then of half 2 (each loaded on its own); in blocks
            // of rope_dim, the unit's columns as they are, block after block.
            std::vector<std::pair<uint32_t, uint32_t>> blocks;  // first column of each half in the tiles
            uint32_t hw = w;                                    // columns of a half
            if (halves) {
                const uint32_t half = uint32_t(logical), W2 = uint32_t(W);
                blocks.emplace_back(0, W2);
                for (const char* n : {"x", "cos", "sin"})
                    for (uint32_t k = 0; k < 2; ++k)
                        kb.copy(tile_of(n).rows(0, np).cols(k * W2, w), whole(H(n)).rows(r0, np).cols(k * half + c0, w));
            } else {
                hw = uint32_t(pl.rope_block / 2);
                for (uint32_t b = 0; b < w; b += 2 * hw) blocks.emplace_back(b, b + hw);
                load("x"), load("cos"), load("sin");
            }
            auto tv = [&](const char* n, uint32_t first) { return tile_of(n).rows(0, np).cols(first, hw); };
            for (const auto& [first, second] : blocks)
                for (uint32_t k = 0; k < 2; ++k) {
                    const uint32_t me = k ? second : first, other = k ? first : second;
                    kb.binary(vop::mul, tv("t", me), tv("x", me), tv("cos", me));
                    kb.binary(vop::mul, tv("u", me), tv("x", other), tv("sin", me));
                    kb.binary(vop::axpby, tv("y", me), tv("t", me), tv("u", me), bcast::none, 1.0f, k == 0 ? -1.0f : 1.0f);
                }
            if (halves)
                for (uint32_t k = 0; k < 2; ++k)
                    kb.copy(whole(H("y")).rows(r0, np).cols(k * uint32_t(logical) + c0, w),
                            tile_of("y").rows(0, np).cols(k * uint32_t(W), w));
            else
                store("y", "y");
            break;
        }
        case phase_kind::rmsnorm:
            load("x");
            tb::emit_rmsnorm(kb, S("y"), S("xn"), S("r"), S("sq"), S("ss"), S("x"), gain, eps);
            store("y", "y"), store("rstd", "r");
            break;
        case phase_kind::rmsnorm_bwd: {  // dx = r (dxn - xn mean(dxn xn)), dxn = dy g; dg: a row per row tile
            load("x"), load("dy");
            kb.copy(S("r"), T("rstd"));
            const tile xn = S("xn"), dxn = S("dxn"), uu = S("u");
            kb.binary(vop::mul, xn, S("x"), S("r"), bcast::column);
            tb::emit_rmsnorm_backward_core(kb, uu, uu, uu, S("c"), dxn, S("dy"), gain, xn);
            kb.binary(vop::mul, S("dx"), uu, S("r"), bcast::column);
            store("dx", "dx");
            kb.binary(vop::mul, uu, S("dy"), xn);
            kb.unary(vop::reduce_sum_part, dgp, uu);
            kb.copy(kernel_builder::hbm(dgain_addr, uint32_t(row_tiles), uint32_t(s.cols), "dgain").rows(uint32_t(rt), 1),
                    dgp);
            break;
        }
        case phase_kind::softmax:
            load("s");
            mask(S("s"), c0);
            kb.unary(vop::reduce_max_free, S("mx"), S("s"));
            kb.binary(vop::sub, S("e"), S("s"), S("mx"), bcast::column);
            kb.act(S("e"), S("e"), act_fn::exp, s.scale);
            kb.unary(vop::reduce_sum_free, S("sm"), S("e"));
            kb.act(S("rs"), S("sm"), act_fn::reciprocal);
            kb.binary(vop::mul, S("p"), S("e"), S("rs"), bcast::column);
            store("p", "p");
            break;
        case phase_kind::softmax_stats:
        case phase_kind::softmax_merge:
            throw std::logic_error(pl.what + ": a split softmax runs in column chunks");
        case phase_kind::softmax_bwd:  // ds = p (dp - sum(p dp))
            load("p"), load("dp");
            kb.binary(vop::mul, S("t"), S("p"), S("dp"));
            kb.unary(vop::reduce_sum_free, S("s"), S("t"));
            kb.binary(vop::sub, S("u"), S("dp"), S("s"), bcast::column);
            kb.binary(vop::mul, S("ds"), S("p"), S("u"));
            if (s.scale != 1.0f) kb.unary(vop::scale_bias, S("ds"), S("ds"), s.scale);
            store("ds", "ds");
            break;
        case phase_kind::adam: {
            load("param"), load("m"), load("v"), load("grad");
            const tile g2 = S("g2");
            tb::emit_adam(kb, S("param"), S("m"), S("v"), S("grad"), g2, S("den"), g2, {b1, b2, lr, adam_eps, bc1, bc2});
            kb.unary(vop::copy, S("w"), S("param"));  // the model-dtype weight the next step's GEMMs read
            store("param", "param"), store("m", "m"), store("v", "v"), store("w", "w");
            break;
        }
        case phase_kind::gather:
        case phase_kind::scatter_add: throw std::logic_error("row moves are emitted by emit_rows");
        }
    }
    instructions += kb.instructions();
    return kb.finish();
}

// The host's view of a tensor's `bytes` packed bytes: f(address, offset in the packed bytes, length) per stored run
// (each row of a pitched rows x cols tensor, else the whole tensor).
void rows_io(const phase_spec& s, const hbm_tensor& t, uint64_t bytes,
             const std::function<void(uint64_t, uint64_t, uint64_t)>& f) {
    if (t.d.sh != shape::full || t.pitch == s.cols) return f(t.addr, 0, bytes);
    const uint64_t row = bytes / s.rows, es = row / s.cols;
    for (uint64_t r = 0; r < s.rows; ++r) f(t.addr + r * t.pitch * es, r * row, row);
}

// --- reference: the FP64 value of every output from the inputs as stored (the golden models where they exist) ----
using tensors = std::map<std::string, std::vector<double>>;

tensors phase_reference(const phase_spec& s, const tensors& in) {
    const float eps = EPS, b1 = B1, b2 = B2, lr = LR, adam_eps = ADAM_EPS;
    const uint64_t R = s.rows, C = s.cols;
    std::map<std::string, std::vector<double>> want;
    auto& w = want;
    auto A = [&](const char* n) -> const std::vector<double>& { return in.at(n); };
    auto M = [&](const char* n, uint64_t rows, uint64_t cols) {  // an input as a golden matrix
        tb::golden::mat m{uint32_t(rows), uint32_t(cols)};
        m.v = in.at(n);
        return m;
    };
    auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    switch (s.kind) {
    case phase_kind::add: {
        auto& y = w["y"] = A("a");
        for (uint64_t i = 0; i < y.size(); ++i) y[i] += A("b")[i];
        break;
    }
    case phase_kind::copy: w["y"] = A("a"); break;
    case phase_kind::gather: {
        auto& y = w["y"] = std::vector<double>(R * C);
        for (uint64_t i = 0; i < R; ++i)
            for (uint64_t c = 0; c < C; ++c)
                y[i * C + c] = s.index[i] >= 0 ? A("table")[uint64_t(s.index[i]) * C + c] : A("zero")[c];
        break;
    }
    case phase_kind::scatter_add: {
        auto& t = w["table"] = std::vector<double>(s.table_rows * C);
        for (uint64_t r = 0; r < s.table_rows; ++r)
            for (uint64_t c = 0; c < C; ++c) t[r * C + c] = s.accumulate ? A("table")[r * C + c] : A("zero")[c];
        for (uint64_t i = 0; i < R; ++i)
            if (s.index[i] >= 0)
                for (uint64_t c = 0; c < C; ++c) t[uint64_t(s.index[i]) * C + c] += A("dy")[i * C + c];
        break;
    }
    case phase_kind::colsum: {
        auto& y = w["y"] = s.accumulate ? A("y") : std::vector<double>(C, 0.0);
        for (uint64_t i = 0; i < R; ++i)
            for (uint64_t c = 0; c < C; ++c) y[c] += A("x")[i * C + c];
        break;
    }
    case phase_kind::swiglu: {
        auto& y = w["y"] = A("g");
        for (uint64_t i = 0; i < y.size(); ++i) y[i] = y[i] * sig(y[i]) * A("u")[i];
        break;
    }
    case phase_kind::swiglu_bwd: {
        auto& dg = w["dg"] = A("g");
        auto& du = w["du"] = A("g");
        for (uint64_t i = 0; i < dg.size(); ++i) {
            const double gi = A("g")[i], si = sig(gi), dy = A("dy")[i];
            du[i] = dy * gi * si;
            dg[i] = dy * A("u")[i] * si * (1 + gi * (1 - si));
        }
        break;
    }
    case phase_kind::rope: {  // each block of rope_dim columns (or the whole row) rotated in its halves
        auto& y = w["y"] = A("x");
        const uint64_t blk = s.rope_dim ? s.rope_dim : C, h = blk / 2;
        for (uint64_t i = 0; i < R; ++i)
            for (uint64_t c = 0; c < C; ++c) {
                const uint64_t o = c % blk, e = i * C + c, pair = e - o + (o < h ? o + h : o - h);
                y[e] = A("x")[e] * A("cos")[e] + (o < h ? -1 : 1) * A("x")[pair] * A("sin")[e];
            }
        break;
    }
    case phase_kind::rmsnorm: {  // the golden RMS norm (testbench/verification/golden)
        tb::golden::norm_state st;
        w["y"] = tb::golden::norm_forward(M("x", R, C), M("gain", 1, C), nullptr, double(eps), st).v;
        w["rstd"] = st.r;
        break;
    }
    case phase_kind::rmsnorm_bwd: {  // its backward, from the stored rstd
        tb::golden::norm_state st;
        st.r = A("rstd");
        st.xn = M("x", R, C);
        for (uint64_t i = 0; i < R; ++i)
            for (uint64_t k = 0; k < C; ++k) st.xn.v[i * C + k] *= st.r[i];
        tb::golden::mat dgain, db;
        w["dx"] = tb::golden::norm_backward(M("dy", R, C), M("gain", 1, C), false, st, dgain, db).v;
        w["dgain"] = dgain.v;
        break;
    }
    case phase_kind::softmax: {
        auto& p = w["p"] = A("s");
        for (uint64_t i = 0; i < R; ++i) {
            double mx = -INFINITY, sum = 0;
            const uint64_t seen = s.causal_block ? i % s.causal_block + 1 : C;  // keys the query may see
            for (uint64_t c = 0; c < seen; ++c) mx = std::max(mx, p[i * C + c]);
            for (uint64_t c = 0; c < C; ++c)
                sum += (p[i * C + c] = c < seen ? std::exp(double(s.scale) * (p[i * C + c] - mx)) : 0.0);
            for (uint64_t c = 0; c < C; ++c) p[i * C + c] /= sum;
        }
        break;
    }
    case phase_kind::softmax_stats: {  // per row: its max m, then sum exp(scale (s - m))
        auto& st = w["stats"] = std::vector<double>(2 * R, 0.0);
        for (uint64_t i = 0; i < R; ++i) {
            double mx = -INFINITY;
            for (uint64_t c = 0; c < C; ++c) mx = std::max(mx, A("s")[i * C + c]);
            st[i] = mx;
            for (uint64_t c = 0; c < C; ++c) st[R + i] += std::exp(double(s.scale) * (A("s")[i * C + c] - mx));
        }
        break;
    }
    case phase_kind::softmax_merge: {  // every part's statistics merged, then this shard's probabilities
        auto& p = w["p"] = A("s");
        const auto& st = A("stats");
        for (uint64_t i = 0; i < R; ++i) {
            double mx = -INFINITY, sum = 0;
            for (uint64_t g = 0; g < s.parts; ++g) mx = std::max(mx, st[2 * g * R + i]);
            for (uint64_t g = 0; g < s.parts; ++g) sum += st[(2 * g + 1) * R + i] * std::exp(double(s.scale) * (st[2 * g * R + i] - mx));
            for (uint64_t c = 0; c < C; ++c) p[i * C + c] = std::exp(double(s.scale) * (p[i * C + c] - mx)) / sum;
        }
        break;
    }
    case phase_kind::softmax_bwd: {
        auto& ds = w["ds"] = A("p");
        for (uint64_t i = 0; i < R; ++i) {
            double dot = 0;
            for (uint64_t c = 0; c < C; ++c) dot += A("p")[i * C + c] * A("dp")[i * C + c];
            for (uint64_t c = 0; c < C; ++c) ds[i * C + c] = double(s.scale) * A("p")[i * C + c] * (A("dp")[i * C + c] - dot);
        }
        break;
    }
    case phase_kind::adam: {  // the golden Adam step (testbench/verification/golden), step 2
        auto& m = w["m"] = A("m");
        auto& v = w["v"] = A("v");
        auto& wt = w["w"] = A("param");
        tb::golden::adam(wt, m, v, A("grad"), lr, b1, b2, adam_eps, 2);
        auto& upd = w["update"] = wt;
        for (uint64_t i = 0; i < upd.size(); ++i) upd[i] -= A("param")[i];
        break;
    }
    }
    return want;
}

// --- check: what the chip wrote, decoded, against the reference (normwise error per output) ---------------------
void check_outputs(platform::chip& chip, const phase_spec& s, const phase_plan& pl, const tensors& in,
                   const tensors& want, phase_result& r) {
    const uint64_t C = s.cols, row_tiles = pl.row_tiles, dgain_addr = pl.dgain_addr;
    const bool norm_bwd = pl.norm_bwd;
    const auto& hbm = pl.hbm;
    auto A = [&](const char* n) -> const std::vector<double>& { return in.at(n); };
    // What the chip wrote, decoded.
    auto got_of = [&](const hbm_tensor& t) {
        const auto type = t.d.fp32 ? F32 : s.dtype;
        std::vector<uint8_t> raw(elements(s, t) * numerics::size_of(type));
        rows_io(s, t, raw.size(), [&](uint64_t addr, uint64_t off, uint64_t n) { chip.host_read(addr, &raw[off], n); });
        std::vector<float> f(elements(s, t));
        numerics::decode(type, raw.data(), f.data(), f.size());
        return std::vector<double>(f.begin(), f.end());
    };
    std::map<std::string, std::vector<double>> got;
    for (const auto& t : hbm)
        if (t.d.role != 0) got[t.d.name] = got_of(t);
    if (s.kind == phase_kind::adam) {  // the parameter by its update: lr-sized, it would vanish in p's own error
        auto& u = got["update"] = got.at("param");
        for (uint64_t i = 0; i < u.size(); ++i) u[i] -= A("param")[i];
        got.erase("param");
    }
    if (norm_bwd) {  // the row tiles' partial rows, summed
        std::vector<float> f(row_tiles * C);
        chip.host_read(dgain_addr, f.data(), f.size() * 4);
        auto& dg = got["dgain"] = std::vector<double>(C, 0.0);
        for (uint64_t t = 0; t < row_tiles; ++t)
            for (uint64_t k = 0; k < C; ++k) dg[k] += f[t * C + k];
    }
    r.checked = true;
    r.pass = true;
    for (const auto& [n, ref] : want) {
        const auto& g = got.at(n);
        double err = 0, mx = 0;
        for (uint64_t i = 0; i < ref.size(); ++i) {
            err = std::max(err, std::isfinite(g[i]) ? std::fabs(g[i] - ref[i]) : INFINITY);
            mx = std::max(mx, std::fabs(ref[i]));
        }
        phase_check c;
        c.name = n;
        c.rel_err = mx > 0 ? err / mx : err;
        // An ulp-sized rounding of a model-dtype output (BF16: 2^-8 relative to the largest value) plus FP32 math and activation approximations; Adam's
        // update also carries the FP32 rounding of p' (relative to |p| / |update|).
        const bool fp32_out = n == "rstd" || n == "dgain" || n == "m" || n == "v" || n == "update" || n == "stats";
        const double ulp = std::ldexp(1.0, -(s.dtype == numerics::dtype::fp16 ? 11 : 8));  // of a 16-bit dtype
        c.tolerance = fp32_out ? 1e-4 : (s.dtype == F32 ? 1e-4 : ulp + 1e-4);
        if (n == "update" && mx > 0) c.tolerance += 2.0 * 0x1.0p-24 / mx;
        if (s.kind == phase_kind::scatter_add && s.dtype != F32) {  // a rounding to the dtype per copy into a row
            std::map<int64_t, uint64_t> copies;
            uint64_t most = 0;
            for (int64_t row : s.index)
                if (row >= 0) most = std::max(most, ++copies[row]);
            c.tolerance = ulp * double(most) + 1e-4;
        }
        c.pass = c.rel_err <= c.tolerance;
        r.pass = r.pass && c.pass;
        r.checks.push_back(c);
    }
}

}  // namespace

std::vector<phase_tensor_info> phase_tensors(const phase_spec& s, uint32_t partitions) {
    std::vector<phase_tensor_info> v;
    for (const auto& d : def_of(s).hbm) {
        phase_tensor_info t;
        t.name = d.name;
        t.read = d.role != 1, t.written = d.role != 0, t.fp32 = d.fp32;
        std::tie(t.rows, t.cols) = dims(s, d);
        v.push_back(t);
    }
    if (s.kind == phase_kind::rmsnorm_bwd) v.push_back({"dgain", false, true, true, (s.rows + partitions - 1) / partitions, s.cols});
    return v;
}

void adam_reference(std::vector<double>& param, std::vector<double>& m, std::vector<double>& v,
                    const std::vector<double>& grad) {
    tb::golden::adam(param, m, v, grad, LR, B1, B2, ADAM_EPS, 2);
}

uint64_t phase_hbm_bytes(const platform::chip_config& cc, const phase_spec& s) { return plan_phase(cc, s).hbm_bytes; }

std::vector<core::core_program> compile_phase(const platform::chip_config& cc, const phase_spec& s) {
    const phase_plan pl = plan_phase(cc, s);
    uint64_t instructions = 0;
    std::vector<core::core_program> progs;
    for (uint32_t c = 0; c < pl.cores; ++c) progs.push_back(emit_core(cc, s, pl, c, instructions));
    return progs;
}

phase_result run_phase(const platform::platform_config& cfg, const phase_spec& s, const tb::sim_options& opt) {
    const auto& cc = cfg.chip;
    const phase_plan pl = plan_phase(cc, s);
    const uint32_t cores = pl.cores;
    phase_result r;
    r.chunk_cols = uint32_t(pl.W);
    r.buffer_sets = pl.sets;
    std::vector<core::core_program> progs;
    for (uint32_t c = 0; c < cores; ++c) progs.push_back(emit_core(cc, s, pl, c, r.instructions));
    if (s.compile_only) return r;

    // --- simulate: seeded inputs (functional runs), the programs, the run ---

    platform::chip chip("chip0", cc);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    // Functional runs: seeded inputs (stored in their dtype; the reference reads them back as stored).
    std::map<std::string, std::vector<double>> in;
    if (cfg.functional) {
        tb::rng g(s.seed * 0x9E3779B97F4A7C15ull + uint64_t(s.kind));
        for (const auto& t : pl.hbm) {
            if (t.d.role == 1) continue;
            const std::string n = t.d.name;
            double lo = -2, hi = 2;  // activations, gradients
            if (n == "v" || n == "p") lo = 0, hi = 1;                    // second moment, probabilities
            if (n == "rstd" || n == "gain" || n == "stats") lo = 0.5, hi = 1.5;
            if (n == "cos" || n == "sin") lo = -1, hi = 1;
            if (n == "zero") lo = hi = 0;  // the row moves' zero row
            std::vector<float> f(elements(s, t));
            for (auto& x : f) x = float(lo + (hi - lo) * g.uniform());
            const auto type = t.d.fp32 ? F32 : s.dtype;
            std::vector<uint8_t> raw(f.size() * numerics::size_of(type));
            numerics::encode(type, f.data(), raw.data(), f.size());
            numerics::decode(type, raw.data(), f.data(), f.size());
            rows_io(s, t, raw.size(), [&](uint64_t addr, uint64_t off, uint64_t len) { chip.host_write(addr, &raw[off], len); });
            in[n].assign(f.begin(), f.end());
        }
    }
    for (uint32_t c = 0; c < cores; ++c) chip.cores[c]->load(std::move(progs[c]));
    tb::sim_probe probe = tb::make_chip_probe(chip);
    r.wall_s = tb::run_to_completion(probe, opt);
    r.sim_ns = tb::last_completion(chip).to_seconds() * 1e9;
    auto stats = chip.stats().flatten();
    r.hbm_bytes = stats["chip0.hbm.bytes_read"] + stats["chip0.hbm.bytes_written"];
    r.min_time_hbm_ns = r.hbm_bytes / cc.hbm.bandwidth_gbps;
    for (uint32_t c = 0; c < cores; ++c) {
        const std::string p = "chip0.core" + std::to_string(c) + ".";
        r.engine_ns = std::max({r.engine_ns, stats[p + "vector.busy_ns"], stats[p + "scalar.busy_ns"]});
    }
    if (!cfg.functional) return r;
    check_outputs(chip, s, pl, in, phase_reference(s, in), r);
    return r;
}


}  // namespace trnsim::train
