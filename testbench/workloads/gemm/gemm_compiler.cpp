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
    const double need = double(g.k) * double(g.m) * double(es) + double(g.k) * double(g.n) * double(es) +
                        double(g.m) * double(g.n) * 4.0;
    if (need > double(chip.hbm.capacity_bytes))
        throw std::invalid_argument("gemm: operands need " + std::to_string(uint64_t(std::min(need, 1.8e19)) >> 20) +
                                    " MiB but HBM (chip.hbm.capacity_gib) holds " +
                                    std::to_string(chip.hbm.capacity_bytes >> 20) + " MiB");
    gemm_layout l;
    l.a_bytes = g.k * g.m * es;
    l.b_bytes = g.k * g.n * es;
    l.c_bytes = g.m * g.n * 4;
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

std::vector<core::core_program> compile_gemm(const gemm_spec& g, const gemm_layout& l, const platform::chip_config& chip,
                                             uint64_t sbuf_bytes, uint32_t first_core) {
    const auto& cc = chip.core;
    gemm_tiling t = plan_tiling(g, chip);
    const uint64_t es = numerics::size_of(g.dtype);
    const uint32_t P = cc.sbuf.partitions;
    const uint32_t planes = uint32_t(ceil_div(t.kt, P));  // 2 for FP8 double row on 128 partitions
    const uint64_t spb = cc.sbuf.partition_bytes, ppb = cc.psum.partition_bytes;  // partition strides
    // The bytes of each partition the GEMM's buffers may take.
    const uint64_t room = sbuf_bytes ? std::min(sbuf_bytes, spb) : spb;
    // Per-partition SBUF bytes of one buffer: block_m stationary tiles then block_n moving tiles, each `planes` deep.
    const uint64_t a_tile = uint64_t(t.mt) * es * planes, b_tile = uint64_t(t.nt) * es * planes;
    const uint64_t buf_bytes = t.block_m * a_tile + t.block_n * b_tile;
    if (2 * buf_bytes > room)
        throw std::invalid_argument("gemm: two SBUF buffers of " + std::to_string(buf_bytes) +
                                    " bytes per partition do not fit chip.core.sbuf.partition_kib (" +
                                    std::to_string(room) + " bytes" +
                                    (room < spb ? " of " + std::to_string(spb) + " left to the GEMM" : std::string()) +
                                    ")");
    // As many operand buffers as fit, up to MAX_BUFFERS: loads run that many K steps ahead of the matmuls, which
    // hides the DMA descriptor latency.
    constexpr uint32_t MAX_BUFFERS = 4;
    const uint32_t nbuf = uint32_t(std::min<uint64_t>(MAX_BUFFERS, room / buf_bytes));

    // Semaphores: LOAD[b] (DMA loads landed in buffer b), MM[b] (matmuls done reading buffer b), STORE[a] (stores
    // of PSUM accumulator a done). Counts only grow; waits name the cumulative count needed.
    const uint32_t acc_count = t.block_m * t.block_n;
    const uint32_t SEM_LOAD = 0, SEM_MM = nbuf, SEM_STORE = 2 * nbuf;
    std::vector<core::core_program> progs(chip.cores);
    for (auto& p : progs) {
        p.semaphores = SEM_STORE + acc_count;
        p.dma.resize(3);  // 0: A^T loads, 1: B loads, 2: stores
    }
    struct counts {
        uint64_t load[MAX_BUFFERS] = {}, mm[MAX_BUFFERS] = {};
        std::vector<uint64_t> store;
        std::vector<uint64_t> mm_after_step;  // cumulative MM[b] count at the end of each step (by step index)
        uint64_t step = 0;
    };
    std::vector<counts> cnt(chip.cores);
    for (auto& c : cnt) c.store.assign(acc_count, 0);

    const uint64_t bn_blocks = ceil_div(t.n_tiles, t.block_n);
    for (uint64_t blk = 0; blk < t.blocks; ++blk) {
        const uint32_t c = uint32_t((blk + first_core) % chip.cores);
        auto& prog = progs[c];
        auto& ct = cnt[c];
        const uint64_t bi = blk / bn_blocks, bj = blk % bn_blocks;
        const uint64_t win = chip.core_base + uint64_t(c) * chip.core_stride;
        const uint64_t sbuf = win + cc.sbuf_base, psum = win + cc.psum_base;
        // Tiles of this block that exist (edges of M and N).
        std::vector<std::pair<uint64_t, uint32_t>> ms, ns;  // (start, size)
        for (uint32_t i = 0; i < t.block_m; ++i) {
            uint64_t mt = bi * t.block_m + i;
            if (mt < t.m_tiles) ms.emplace_back(mt * t.mt, uint32_t(std::min<uint64_t>(t.mt, g.m - mt * t.mt)));
        }
        for (uint32_t j = 0; j < t.block_n; ++j) {
            uint64_t nt = bj * t.block_n + j;
            if (nt < t.n_tiles) ns.emplace_back(nt * t.nt, uint32_t(std::min<uint64_t>(t.nt, g.n - nt * t.nt)));
        }
        for (uint64_t kt = 0; kt < t.k_tiles; ++kt) {
            const uint32_t b = uint32_t(ct.step % nbuf);
            const uint64_t k0 = kt * t.kt;
            const uint32_t ks = uint32_t(std::min<uint64_t>(t.kt, g.k - k0));
            const uint32_t rows0 = std::min(ks, P), plane_count = uint32_t(ceil_div(ks, P));
            const uint64_t buf = b * buf_bytes;
            // Loads may overwrite buffer b once the matmuls of the step that last used it (step - nbuf) are done.
            std::vector<core::sem_wait> free_wait;
            if (ct.step >= nbuf) free_wait.push_back({SEM_MM + b, ct.mm_after_step[ct.step - nbuf]});
            auto load = [&](size_t queue, uint64_t src, uint64_t src_row, uint64_t row_bytes, uint64_t dst_off, uint64_t plane_off) {
                core::instruction in;
                in.op = core::opcode::dma;
                in.waits = free_wait;
                in.signal = int32_t(SEM_LOAD + b);
                auto& d = in.dma;
                d.src = src;
                d.src_stride = int64_t(src_row);
                d.dst = sbuf + dst_off;
                d.dst_stride = int64_t(spb);
                d.row_bytes = row_bytes;
                d.rows = rows0;
                d.planes = plane_count;
                d.src_plane_stride = int64_t(src_row * P);
                d.dst_plane_stride = int64_t(plane_off);
                prog.dma[queue].push_back(in);
                ++ct.load[b];
            };
            for (size_t i = 0; i < ms.size(); ++i)
                load(0, l.a_addr + (k0 * g.m + ms[i].first) * es, g.m * es, ms[i].second * es, buf + i * a_tile,
                     uint64_t(t.mt) * es);
            for (size_t j = 0; j < ns.size(); ++j)
                load(1, l.b_addr + (k0 * g.n + ns[j].first) * es, g.n * es, ns[j].second * es,
                     buf + t.block_m * a_tile + j * b_tile, uint64_t(t.nt) * es);
            // Matmuls: every (i, j) accumulator of the block.
            for (size_t i = 0; i < ms.size(); ++i)
                for (size_t j = 0; j < ns.size(); ++j) {
                    const uint32_t acc = uint32_t(i * t.block_n + j);
                    core::instruction in;
                    in.op = core::opcode::matmul;
                    in.waits.push_back({SEM_LOAD + b, ct.load[b]});
                    if (kt == 0 && ct.store[acc] > 0) in.waits.push_back({SEM_STORE + acc, ct.store[acc]});
                    in.signal = int32_t(SEM_MM + b);
                    auto& mm = in.mm;
                    mm.in_type = g.dtype;
                    mm.k = ks;
                    mm.m = ms[i].second;
                    mm.n = ns[j].second;
                    mm.plane_rows = P;
                    mm.s_addr = cc.sbuf_base + buf + i * a_tile;
                    mm.s_stride = spb;
                    mm.s_plane = uint64_t(t.mt) * es;
                    mm.x_addr = cc.sbuf_base + buf + t.block_m * a_tile + j * b_tile;
                    mm.x_stride = spb;
                    mm.x_plane = uint64_t(t.nt) * es;
                    mm.y_addr = cc.psum_base + uint64_t(acc) * t.nt * 4;
                    mm.y_stride = ppb;
                    mm.accumulate = kt > 0;
                    mm.tag = blk * t.k_tiles + kt;
                    prog.te.push_back(in);
                    ++ct.mm[b];
                }
            ct.mm_after_step.push_back(ct.mm[b]);
            ++ct.step;
        }
        // Stores: each accumulator to C once the block's last step's matmuls are done.
        const uint32_t last_b = uint32_t((ct.step - 1) % nbuf);
        for (size_t i = 0; i < ms.size(); ++i)
            for (size_t j = 0; j < ns.size(); ++j) {
                const uint32_t acc = uint32_t(i * t.block_n + j);
                core::instruction in;
                in.op = core::opcode::dma;
                in.waits.push_back({SEM_MM + last_b, ct.mm_after_step[ct.step - 1]});
                in.signal = int32_t(SEM_STORE + acc);
                auto& d = in.dma;
                d.src = psum + uint64_t(acc) * t.nt * 4;
                d.src_stride = int64_t(ppb);
                d.dst = l.c_addr + (ms[i].first * g.n + ns[j].first) * 4;
                d.dst_stride = int64_t(g.n * 4);
                d.row_bytes = uint64_t(ns[j].second) * 4;
                d.rows = ms[i].second;
                prog.dma[2].push_back(in);
                ++ct.store[acc];
            }
    }
    return progs;
}

} // namespace trnsim::tb
