#include <algorithm>
#include <stdexcept>

#include "testbench/workloads/gemm/gemm.h"

namespace trnsim::tb {

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t align_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }
bool double_row(const gemm_spec& g, const platform::chip_config& c) {
    return c.core.te.fp8_double_row && (g.dtype == numerics::dtype::fp8_e4m3 || g.dtype == numerics::dtype::fp8_e5m2);
}
} // namespace

gemm_layout plan_layout(const gemm_spec& g, const platform::chip_config& chip) {
    if (g.m == 0 || g.k == 0 || g.n == 0)
        throw std::invalid_argument("gemm: dimensions must be >= 1 (got m=" + std::to_string(g.m) + " k=" +
                                    std::to_string(g.k) + " n=" + std::to_string(g.n) + ")");
    const uint64_t es = numerics::size_of(g.dtype), limit = 1ull << 40;
    if (g.m > limit || g.k > limit || g.n > limit) throw std::invalid_argument("gemm: a dimension exceeds 2^40");
    // Sizes up to 2^40 x 2^40 overflow 64 bits: checked in floating point first (a wrapped size would pass).
    if (g.c_type != numerics::dtype::fp32 && g.c_type != g.dtype)
        throw std::invalid_argument(std::string("gemm: C is FP32 or the input dtype (") +
                                    std::string(numerics::name_of(g.dtype)) + "), not " +
                                    std::string(numerics::name_of(g.c_type)));
    const uint64_t ces = numerics::size_of(g.c_type);
    const double need = double(g.k) * double(g.m) * double(es) + double(g.k) * double(g.n) * double(es) +
                        double(g.m) * double(g.n) * double(ces);
    if (need > double(chip.hbm.capacity_bytes))
        throw std::invalid_argument("gemm: operands need " + std::to_string(uint64_t(std::min(need, 1.8e19)) >> 20) +
                                    " MiB but HBM (chip.hbm.capacity_gib) holds " +
                                    std::to_string(chip.hbm.capacity_bytes >> 20) + " MiB");
    gemm_layout l;
    l.a_bytes = g.k * g.m * es;
    l.b_bytes = g.k * g.n * es;
    l.c_bytes = g.m * g.n * ces;
    l.a_addr = chip.hbm_base;
    l.b_addr = l.a_addr + align_up(l.a_bytes, 4096);
    l.c_addr = l.b_addr + align_up(l.b_bytes, 4096);
    uint64_t end = l.c_addr + align_up(l.c_bytes, 4096);
    if (end - chip.hbm_base > chip.hbm.capacity_bytes)
        throw std::invalid_argument("gemm: operands need " + std::to_string((end - chip.hbm_base) >> 20) + " MiB but HBM (chip.hbm.capacity_gib) holds " +
                                    std::to_string(chip.hbm.capacity_bytes >> 20) + " MiB");
    return l;
}

gemm_tiling plan_tiling(const gemm_spec& g, const platform::chip_config& chip) {
    const auto& te = chip.core.te;
    gemm_tiling t;
    t.kt = te.rows * (double_row(g, chip) ? 2 : 1);
    t.mt = te.cols;
    t.nt = te.n_max;
    t.k_tiles = ceil_div(g.k, t.kt);
    t.m_tiles = ceil_div(g.m, t.mt);
    t.n_tiles = ceil_div(g.n, t.nt);
    uint64_t accumulators = chip.core.psum.partition_bytes / (uint64_t(t.nt) * 4);
    t.block_n = uint32_t(std::min<uint64_t>({t.n_tiles, 2, accumulators}));
    t.block_m = uint32_t(std::min<uint64_t>(t.m_tiles, accumulators / t.block_n));
    t.blocks = ceil_div(t.m_tiles, t.block_m) * ceil_div(t.n_tiles, t.block_n);
    // Smaller blocks until every core has one (more operand traffic, but no idle cores).
    while (t.blocks < chip.cores && (t.block_m > 1 || t.block_n > 1)) {
        if (t.block_m > t.block_n) t.block_m = (t.block_m + 1) / 2;
        else t.block_n = (t.block_n + 1) / 2;
        t.blocks = ceil_div(t.m_tiles, t.block_m) * ceil_div(t.n_tiles, t.block_n);
    }
    return t;
}

namespace {

// Emits the programs of compile_gemm, block by block (see gemm.h for the operand layouts).
//
// SBUF, per partition, from its start: `nbuf` operand buffers, each block_m stationary tiles then block_n moving
// tiles (`planes` deep), then the staging tiles of operands stored the other way (loaded as they are, transposed
// from there into the buffer's tiles); after the buffers, with a C of the input dtype, one slot per PSUM
// accumulator where the Scalar Engine puts the cast result for its store.
//
// Semaphores (counts only grow; waits name the cumulative count needed): LOAD[b] operand tiles DMA'd into buffer b,
// STAGE[b] staging tiles of buffer b landed, TURN[b] transposes into buffer b done, MM[b] matmuls done reading
// buffer b, FREE[a] PSUM accumulator a read out (stored, or copied out), CSTORE[a] C slot a stored. A count says how
// many of a semaphore's DMAs have landed, not which (they run on several engines and land in any order), so a wait
// names the count after every DMA of the step that signals it: a step's transposes wait for all its staging tiles
// (a wait for "its own" tile's count could be met by a later tile landing first, and the transpose would read a
// staging tile still being written).
class gemm_emitter {
public:
    gemm_emitter(const gemm_spec& g, const gemm_layout& l, const platform::chip_config& chip, uint64_t sbuf_bytes)
        : g(g), l(l), chip(chip), cc(chip.core), t(plan_tiling(g, chip)), es(numerics::size_of(g.dtype)),
          ces(numerics::size_of(g.c_type)), P(cc.sbuf.partitions), planes(uint32_t(ceil_div(t.kt, P))),
          spb(cc.sbuf.partition_bytes), ppb(cc.psum.partition_bytes), lda(l.a_ld ? l.a_ld : g.a_pitch()),
          ldb(l.b_ld ? l.b_ld : g.b_pitch()), ldc(l.c_ld ? l.c_ld : g.n) {
        const uint64_t dense[3] = {g.a_pitch(), g.b_pitch(), g.n}, given[3] = {lda, ldb, ldc};
        for (int i = 0; i < 3; ++i)
            if (given[i] < dense[i])
                throw std::invalid_argument(std::string("gemm: ") + "ABC"[i] + "'s row pitch " + std::to_string(given[i]) +
                                            " is shorter than its rows (" + std::to_string(dense[i]) + " elements)");
        const uint64_t room = sbuf_bytes ? std::min(sbuf_bytes, spb) : spb;
        if (g.a_rows && t.mt > P)
            throw std::invalid_argument("gemm: A stored M x K is turned in tiles of " + std::to_string(t.mt) +
                                        " rows, more than the " + std::to_string(P) + " SBUF partitions");
        a_tile = uint64_t(t.mt) * es * planes;
        b_tile = uint64_t(t.nt) * es * planes;
        const uint64_t stage_row = uint64_t(t.kt) * es;  // one staged row of K
        a_stage = g.a_rows ? stage_row : 0;
        b_stage = g.b_cols ? ceil_div(t.nt, P) * stage_row : 0;
        stage_off = t.block_m * a_tile + t.block_n * b_tile;
        buf_bytes = stage_off + t.block_m * a_stage + t.block_n * b_stage;
        acc_count = t.block_m * t.block_n;
        const uint64_t c_slots = g.c_type == numerics::dtype::fp32 ? 0 : acc_count * uint64_t(t.nt) * ces;
        if (2 * buf_bytes + c_slots > room)
            throw std::invalid_argument("gemm: two SBUF buffers of " + std::to_string(buf_bytes) + " bytes per partition" +
                                        (c_slots ? " and C slots of " + std::to_string(c_slots) : std::string()) +
                                        " do not fit chip.core.sbuf.partition_kib (" + std::to_string(room) + " bytes" +
                                        (room < spb ? " of " + std::to_string(spb) + " left to the GEMM" : std::string()) +
                                        ")");
        // As many operand buffers as fit, up to MAX_BUFFERS: loads run that many K steps ahead of the matmuls,
        // which hides the DMA descriptor latency.
        nbuf = uint32_t(std::min<uint64_t>(MAX_BUFFERS, (room - c_slots) / buf_bytes));
        c_off = nbuf * buf_bytes;
        SEM_MM = nbuf, SEM_STAGE = 2 * nbuf, SEM_TURN = 3 * nbuf, SEM_FREE = 4 * nbuf, SEM_CSTORE = SEM_FREE + acc_count;
        progs.resize(chip.cores);
        for (auto& p : progs) {
            p.semaphores = SEM_CSTORE + acc_count;
            p.dma.resize(3);  // 0: A loads, 1: B loads, 2: stores
        }
        cnt.resize(chip.cores);
        for (auto& c : cnt) c.free.assign(acc_count, 0), c.cstore.assign(acc_count, 0);
    }

    std::vector<core::core_program> run(uint32_t first_core) {
        for (uint64_t blk = 0; blk < t.blocks; ++blk) block(blk, uint32_t((blk + first_core) % chip.cores));
        return std::move(progs);
    }

private:
    static constexpr uint32_t MAX_BUFFERS = 4;
    static constexpr uint32_t SEM_LOAD = 0;
    using span = std::pair<uint64_t, uint32_t>;  // (start, size) of a tile along M, N or K
    struct counts {
        uint64_t load[MAX_BUFFERS] = {}, mm[MAX_BUFFERS] = {}, stage[MAX_BUFFERS] = {}, turn[MAX_BUFFERS] = {};
        std::vector<uint64_t> free, cstore;
        std::vector<uint64_t> mm_after_step;  // cumulative MM[b] count at the end of each step (by step index)
        uint64_t step = 0;
    };

    // The tiles of block `blk` that exist (edges of M and N), K walked in steps, then the accumulators stored.
    void block(uint64_t blk, uint32_t c) {
        const uint64_t bn_blocks = ceil_div(t.n_tiles, t.block_n);
        const uint64_t bi = blk / bn_blocks, bj = blk % bn_blocks;
        std::vector<span> ms, ns;
        for (uint32_t i = 0; i < t.block_m; ++i) {
            const uint64_t mt = bi * t.block_m + i;
            if (mt < t.m_tiles) ms.emplace_back(mt * t.mt, uint32_t(std::min<uint64_t>(t.mt, g.m - mt * t.mt)));
        }
        for (uint32_t j = 0; j < t.block_n; ++j) {
            const uint64_t nt = bj * t.block_n + j;
            if (nt < t.n_tiles) ns.emplace_back(nt * t.nt, uint32_t(std::min<uint64_t>(t.nt, g.n - nt * t.nt)));
        }
        for (uint64_t kt = 0; kt < t.k_tiles; ++kt) {
            const uint64_t k0 = kt * t.kt;
            k_step(c, blk, kt, {k0, uint32_t(std::min<uint64_t>(t.kt, g.k - k0))}, ms, ns);
        }
        store(c, ms, ns);
    }

    uint64_t sbuf_of(uint32_t c) const { return chip.core_base + uint64_t(c) * chip.core_stride + cc.sbuf_base; }

    core::instruction dma_rows(uint64_t src, uint64_t src_row, uint64_t dst, uint64_t dst_row, uint64_t row_bytes,
                               uint32_t rows, uint32_t planes_n = 1, uint64_t src_plane = 0, uint64_t dst_plane = 0) const {
        core::instruction in;
        in.op = core::opcode::dma;
        auto& d = in.dma;
        d.src = src, d.src_stride = int64_t(src_row);
        d.dst = dst, d.dst_stride = int64_t(dst_row);
        d.row_bytes = row_bytes, d.rows = rows, d.planes = planes_n;
        d.src_plane_stride = int64_t(src_plane), d.dst_plane_stride = int64_t(dst_plane);
        return in;
    }

    // Operand tile (rows `r` of the stored K x `cols` operand at `base`) into SBUF at buffer offset `tile_off`, planes
    // of P rows `plane_off` apart.
    void load_direct(uint32_t c, size_t queue, uint32_t b, const std::vector<core::sem_wait>& free_wait, uint64_t base,
                     uint64_t pitch, span k, uint64_t col0, uint32_t cols, uint64_t tile_off, uint64_t plane_off) {
        core::instruction in = dma_rows(base + (k.first * pitch + col0) * es, pitch * es, sbuf_of(c) + tile_off, spb,
                                        uint64_t(cols) * es, std::min(k.second, P), uint32_t(ceil_div(k.second, P)),
                                        pitch * es * P, plane_off);
        in.waits = free_wait;
        in.signal = int32_t(SEM_LOAD + b);
        progs[c].dma[queue].push_back(in);
        ++cnt[c].load[b];
    }

    // Operand tile stored the other way: `count` rows (<= P) of K starting at stored row `row0`, staged as they are at
    // buffer offset `stage`, then transposed plane by plane into the tile at `tile_off` (its columns from `col`).
    void load_turned(uint32_t c, size_t queue, uint32_t b, const std::vector<core::sem_wait>& free_wait,
                     uint64_t base, uint64_t pitch, span k, uint64_t row0, uint32_t count, uint64_t stage,
                     uint64_t tile_off, uint64_t col, uint64_t plane_off) {
        auto& ct = cnt[c];
        core::instruction in = dma_rows(base + (row0 * pitch + k.first) * es, pitch * es, sbuf_of(c) + stage, spb,
                                        uint64_t(k.second) * es, count);
        in.waits = free_wait;
        in.signal = int32_t(SEM_STAGE + b);
        progs[c].dma[queue].push_back(in);
        ++ct.stage[b];
        for (uint32_t p = 0; p * P < k.second; ++p) {
            core::instruction tr;  // its wait: k_step, once every staging tile of the step is loaded
            tr.op = core::opcode::vector;
            tr.signal = int32_t(SEM_TURN + b);
            auto& v = tr.vec;
            v.op = ve::vop::transpose;
            v.parts = count;
            v.free = std::min(P, k.second - p * P);
            v.a = {g.dtype, cc.sbuf_base + stage + uint64_t(p) * P * es, spb};
            v.out = {g.dtype, cc.sbuf_base + tile_off + p * plane_off + col * es, spb};
            v.tag = ct.step;
            turns.push_back(tr);
            ++ct.turn[b];
        }
    }

    void k_step(uint32_t c, uint64_t blk, uint64_t kt, span k, const std::vector<span>& ms, const std::vector<span>& ns) {
        auto& ct = cnt[c];
        const uint32_t b = uint32_t(ct.step % nbuf);
        const uint64_t buf = b * buf_bytes;
        // Loads may overwrite buffer b once the matmuls of the step that last used it (step - nbuf) are done.
        std::vector<core::sem_wait> free_wait;
        if (ct.step >= nbuf) free_wait.push_back({SEM_MM + b, ct.mm_after_step[ct.step - nbuf]});
        const uint64_t a_plane = uint64_t(t.mt) * es, b_plane = uint64_t(t.nt) * es;
        for (size_t i = 0; i < ms.size(); ++i) {
            const uint64_t tile = buf + i * a_tile;
            if (g.a_rows)
                load_turned(c, 0, b, free_wait, l.a_addr, lda, k, ms[i].first, ms[i].second,
                            buf + stage_off + i * a_stage, tile, 0, a_plane);
            else
                load_direct(c, 0, b, free_wait, l.a_addr, lda, k, ms[i].first, ms[i].second, tile, a_plane);
        }
        for (size_t j = 0; j < ns.size(); ++j) {
            const uint64_t tile = buf + t.block_m * a_tile + j * b_tile;
            if (!g.b_cols) {
                load_direct(c, 1, b, free_wait, l.b_addr, ldb, k, ns[j].first, ns[j].second, tile, b_plane);
                continue;
            }
            const uint64_t stage = buf + stage_off + t.block_m * a_stage + j * b_stage;
            for (uint32_t r = 0; r < ns[j].second; r += P)
                load_turned(c, 1, b, free_wait, l.b_addr, ldb, k, ns[j].first + r,
                            std::min(P, ns[j].second - r), stage + (r / P) * uint64_t(t.kt) * es, tile, r, b_plane);
        }
        // The transposes, once every staging tile of the step has landed (the count after all of them).
        for (auto& tr : turns) {
            tr.waits.push_back({SEM_STAGE + b, ct.stage[b]});
            progs[c].vector.push_back(std::move(tr));
        }
        turns.clear();
        // Matmuls: every (i, j) accumulator of the block.
        for (size_t i = 0; i < ms.size(); ++i)
            for (size_t j = 0; j < ns.size(); ++j) {
                const uint32_t acc = uint32_t(i * t.block_n + j);
                core::instruction in;
                in.op = core::opcode::matmul;
                if (ct.load[b]) in.waits.push_back({SEM_LOAD + b, ct.load[b]});
                if (ct.turn[b]) in.waits.push_back({SEM_TURN + b, ct.turn[b]});
                if (kt == 0 && ct.free[acc] > 0) in.waits.push_back({SEM_FREE + acc, ct.free[acc]});
                in.signal = int32_t(SEM_MM + b);
                auto& mm = in.mm;
                mm.in_type = g.dtype;
                mm.k = k.second;
                mm.m = ms[i].second;
                mm.n = ns[j].second;
                mm.plane_rows = P;
                mm.s_addr = cc.sbuf_base + buf + i * a_tile;
                mm.s_stride = spb;
                mm.s_plane = a_plane;
                mm.x_addr = cc.sbuf_base + buf + t.block_m * a_tile + j * b_tile;
                mm.x_stride = spb;
                mm.x_plane = b_plane;
                mm.y_addr = cc.psum_base + uint64_t(acc) * t.nt * 4;
                mm.y_stride = ppb;
                mm.accumulate = kt > 0;
                mm.tag = blk * t.k_tiles + kt;
                progs[c].te.push_back(in);
                ++ct.mm[b];
            }
        ct.mm_after_step.push_back(ct.mm[b]);
        ++ct.step;
    }

    // Each accumulator to C once the block's last step's matmuls are done: FP32 straight from PSUM, another type
    // through the Scalar Engine's cast into the accumulator's SBUF slot; with c_accumulate, added to C's old value.
    void store(uint32_t c, const std::vector<span>& ms, const std::vector<span>& ns) {
        auto& ct = cnt[c];
        const uint32_t last_b = uint32_t((ct.step - 1) % nbuf);
        const core::sem_wait done{SEM_MM + last_b, ct.mm_after_step[ct.step - 1]};
        const uint64_t win = chip.core_base + uint64_t(c) * chip.core_stride;
        for (size_t i = 0; i < ms.size(); ++i)
            for (size_t j = 0; j < ns.size(); ++j) {
                const uint32_t acc = uint32_t(i * t.block_n + j);
                const uint64_t psum = uint64_t(acc) * t.nt * 4, slot = c_off + uint64_t(acc) * t.nt * ces;
                const uint64_t dst = l.c_addr + (ms[i].first * ldc + ns[j].first) * ces;
                if (g.c_type == numerics::dtype::fp32) {
                    core::instruction in = dma_rows(win + cc.psum_base + psum, ppb, dst, ldc * 4,
                                                    uint64_t(ns[j].second) * 4, ms[i].second);
                    in.waits.push_back(done);
                    in.signal = int32_t(SEM_FREE + acc);
                    if (g.c_accumulate) in.dma.reduce = g.c_type;
                    progs[c].dma[2].push_back(in);
                    ++ct.free[acc];
                    continue;
                }
                core::instruction cp;
                cp.op = core::opcode::scalar;
                cp.waits.push_back(done);
                if (ct.cstore[acc]) cp.waits.push_back({SEM_CSTORE + acc, ct.cstore[acc]});
                cp.signal = int32_t(SEM_FREE + acc);
                auto& v = cp.vec;
                v.op = ve::vop::copy;
                v.parts = ms[i].second;
                v.free = ns[j].second;
                v.a = {numerics::dtype::fp32, cc.psum_base + psum, ppb};
                v.out = {g.c_type, cc.sbuf_base + slot, spb};
                progs[c].scalar.push_back(cp);
                ++ct.free[acc];
                core::instruction in = dma_rows(sbuf_of(c) + slot, spb, dst, ldc * ces, uint64_t(ns[j].second) * ces,
                                                ms[i].second);
                in.waits.push_back({SEM_FREE + acc, ct.free[acc]});
                in.signal = int32_t(SEM_CSTORE + acc);
                if (g.c_accumulate) in.dma.reduce = g.c_type;
                progs[c].dma[2].push_back(in);
                ++ct.cstore[acc];
            }
    }

    const gemm_spec& g;
    const gemm_layout& l;
    const platform::chip_config& chip;
    const core::core_config& cc;
    const gemm_tiling t;
    const uint64_t es, ces;
    const uint32_t P, planes;
    const uint64_t spb, ppb;  // partition strides of SBUF and PSUM
    const uint64_t lda, ldb, ldc;  // elements between stored rows of A (or A^T), B (or B^T), C
    uint64_t a_tile = 0, b_tile = 0, a_stage = 0, b_stage = 0, stage_off = 0, buf_bytes = 0, c_off = 0;
    uint32_t acc_count = 0, nbuf = 0;
    uint32_t SEM_MM = 0, SEM_STAGE = 0, SEM_TURN = 0, SEM_FREE = 0, SEM_CSTORE = 0;
    std::vector<core::instruction> turns;  // the step's transposes, emitted after its staging loads
    std::vector<core::core_program> progs;
    std::vector<counts> cnt;
};

} // namespace

std::vector<core::core_program> compile_gemm(const gemm_spec& g, const gemm_layout& l, const platform::chip_config& chip,
                                             uint64_t sbuf_bytes, uint32_t first_core) {
    return gemm_emitter(g, l, chip, sbuf_bytes).run(first_core);
}

} // namespace trnsim::tb
