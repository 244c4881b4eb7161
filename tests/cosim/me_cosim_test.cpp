// Cycle- and bit-exact co-simulation of the matrix engine RTL (rtl/matrix_engine, Verilated in C++ mode) against
// the golden PE arithmetic and the closed-form timing te_timing::schedule() (docs/tensor_engine.md).
//
// Corner tiles, then random tiles (types, k <= ROWS, m <= COLS, n <= N_MAX, special values) are driven back to
// back, every input presented as early as the ports allow. Every output bit is compared with the golden Y, and
// each tile's load_start (first weight beat accepted), stream_start (first moving beat accepted) and done (last
// output beat valid) with the schedule.
//   --mode b2b     operands of every tile ready at cycle 0 (steady state: load overlaps stream)
//   --mode gaps    random operand-ready cycles (isolated tiles, partial overlaps)
//   --mode stall   random input bubbles and output back-pressure: results checked, timing not
//   --seed S --tiles N
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "verilated.h"
#include ME_TOP_HEADER

#include "models/tensor_engine/te_timing.h"
#include "testbench/verification/cosim/me_golden.h"
#include "tests/cosim/me_ports.h"

using namespace trnsim;
using namespace trnsim::cosim;

namespace {

constexpr uint32_t ROWS = ME_ROWS, COLS = ME_COLS, LS = ME_LS, MIN_II = ME_MIN_II, N_MAX = ME_N_MAX;
constexpr uint32_t PIPELINE_LATENCY = ME_PIPELINE_LATENCY;

struct stamps { uint64_t load_start = ~0ull, stream_start = ~0ull, done = ~0ull; };

} // namespace

int main(int argc, char** argv) {
    uint64_t seed = std::random_device{}();
    uint32_t ntiles = 200;
    std::string mode = "b2b";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--tiles" && i + 1 < argc) ntiles = uint32_t(std::strtoul(argv[++i], nullptr, 0));
        else if (a == "--mode" && i + 1 < argc) mode = argv[++i];
        else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
    }
    if (mode != "b2b" && mode != "gaps" && mode != "stall") { std::fprintf(stderr, "bad --mode\n"); return 2; }
    std::printf("me_cosim %ux%u (ls %u, min_ii %u, n_max %u, pipeline_latency %u): mode %s, seed %" PRIu64
                ", %u tiles\n", ROWS, COLS, LS, MIN_II, N_MAX, PIPELINE_LATENCY, mode.c_str(), seed, ntiles);

    // ---- stimulus and expected timing
    te::te_config cfg;
    cfg.rows = ROWS;
    cfg.cols = COLS;
    cfg.ls_rows_per_cycle = LS;
    cfg.min_ii = MIN_II;
    cfg.n_max = N_MAX;
    cfg.pipeline_latency = PIPELINE_LATENCY;
    te::te_timing timing(cfg);
    stimulus stim(seed);
    const std::vector<dtype> types = {ME_RTL_DTYPES};  // me_pkg::DT_COMPUTED (tests/cosim/CMakeLists.txt)
    std::vector<tile> tiles;
    std::vector<te::te_schedule> expect;
    uint64_t ready = 0;
    std::vector<tile> directed = stim.directed_tiles(types, ROWS, COLS, N_MAX, MIN_II, LS);
    for (uint32_t i = 0; i < ntiles; i++) {
        tile t = i < directed.size() ? std::move(directed[i]) : stim.random_tile(types, ROWS, COLS, N_MAX, MIN_II, LS);
        if (mode == "gaps" && i > 0 && !stim.chance(0.3))
            ready += stim.uniform(0, 3 * uint32_t(timing.weight_load_cycles(t.type, t.k) +
                                                  timing.stream_cycles(t.type, t.n) + timing.drain_cycles()));
        t.ready = ready;
        expect.push_back(timing.schedule(t.type, t.k, t.n, t.ready));
        tiles.push_back(std::move(t));
    }

    // ---- model
    VerilatedContext ctx;
    ctx.randReset(2);  // registers start random: nothing may depend on an uninitialised datapath register
    VTOP top{&ctx};
    std::mt19937_64 rng(seed ^ 0x5eedull);
    auto coin = [&](double p) { return std::bernoulli_distribution(p)(rng); };

    top.clk = 0;
    top.rst_n = 0;
    top.cmd_valid = top.w_valid = top.m_valid = 0;
    top.out_ready = 1;
    top.eval();
    top.clk = 1;  // the reset edge; cycle 0 follows
    top.eval();
    top.rst_n = 1;

    std::vector<stamps> got(ntiles);
    size_t ct = 0, wt = 0, wb = 0, mt = 0, mb = 0, ot = 0, ob = 0;  // command / weight / moving / output cursors
    uint64_t errors = 0, cycle = 0, beats = 0;
    auto fail = [&](const char* fmt, auto... args) {
        if (++errors <= 20) { std::printf("cycle %" PRIu64 ": ", cycle); std::printf(fmt, args...); std::printf("\n"); }
    };
    const bool stall = mode == "stall";
    uint64_t limit = 1000;
    for (const auto& e : expect) limit = std::max(limit, e.done * 4 + 10000);

    const auto t0 = std::chrono::steady_clock::now();
    while (ot < ntiles && cycle < limit && errors < 20) {
        top.clk = 0;
        // command: tile ct once its operands are ready and the previous tile's weights are all sent
        const bool cmd_v = ct < ntiles && ct == wt && cycle >= tiles[ct].ready;
        top.cmd_valid = cmd_v;
        if (cmd_v) {
            top.cmd_dtype = uint8_t(tiles[ct].type);
            top.cmd_k = tiles[ct].k;
            top.cmd_m = tiles[ct].m;
            top.cmd_n = tiles[ct].n;
        }
        // weights of tile wt, from the cycle its command is presented
        const bool w_v = wt < ntiles && cycle >= tiles[wt].ready && (ct > wt || cmd_v) && !(stall && coin(0.2));
        top.w_valid = w_v;
        if (w_v) {
            const tile& t = tiles[wt];
            for (uint32_t q = 0; q < LS; q++)
                for (uint32_t c = 0; c < COLS; c++) {
                    const uint32_t kk = uint32_t(wb) * LS + q;
                    const uint16_t v = (kk < t.k && c < t.m) ? t.s[size_t(kk) * t.m + c] : uint16_t(rng());
                    set_field(top.w_data, (q * COLS + c) * 16, 16, v);
                }
        }
        // moving beats of tile mt
        const bool m_v = mt < ntiles && cycle >= tiles[mt].ready && !(stall && coin(0.1));
        top.m_valid = m_v;
        if (m_v) {
            const tile& t = tiles[mt];
            for (uint32_t r = 0; r < ROWS; r++)
                set_field(top.m_data, r * 16, 16, r < t.k ? t.x[size_t(r) * t.n + mb] : uint16_t(rng()));
        }
        top.out_ready = stall ? coin(0.7) : 1;
        top.eval();

        const bool cmd_fire = cmd_v && top.cmd_ready, w_fire = w_v && top.w_ready, m_fire = m_v && top.m_ready;
        const bool o_fire = top.out_valid && top.out_ready;
        if (o_fire) {
            beats++;
            if (ot >= ntiles) {
                fail("output beat with no tile outstanding");
            } else {
                const tile& t = tiles[ot];
                for (uint32_t c = 0; c < COLS; c++) {
                    const uint32_t v = get_field(top.out_data, c * 32, 32);
                    const uint32_t want = c < t.m ? t.golden[size_t(c) * t.n + ob] : 0;
                    if (v != want)
                        fail("tile %zu (%s k=%u m=%u n=%u) Y[%u][%zu] = %08x, expected %08x", ot, type_name(t.type),
                             t.k, t.m, t.n, c, ob, v, want);
                }
                const bool last = ob + 1 == t.n;
                if (bool(top.out_last) != last) fail("tile %zu beat %zu: last=%d", ot, ob, int(top.out_last));
                if (last) { got[ot].done = cycle; ot++; ob = 0; } else ob++;
            }
        }
        top.clk = 1;
        top.eval();

        if (cmd_fire) ct++;
        if (w_fire) {
            if (wb == 0) got[wt].load_start = cycle;
            if (++wb == timing.weight_load_cycles(tiles[wt].type, tiles[wt].k)) { wt++; wb = 0; }
        }
        if (m_fire) {
            if (mb == 0 && wt <= mt) fail("first moving beat of tile %zu accepted before its weights", mt);
            if (mb == 0) got[mt].stream_start = cycle;
            if (++mb == tiles[mt].n) { mt++; mb = 0; }
        }
        cycle++;
    }
    if (ot < ntiles) fail("timeout: %zu of %u tiles complete", ot, ntiles);

    if (!stall) {
        for (size_t i = 0; i < ot && errors < 20; i++) {
            const auto& e = expect[i];
            const auto& g = got[i];
            if (g.load_start != e.load_start || g.stream_start != e.stream_start || g.done != e.done)
                fail("tile %zu (k=%u n=%u ready=%" PRIu64 "): load_start/stream_start/done = %" PRIu64 "/%" PRIu64
                     "/%" PRIu64 ", schedule %" PRIu64 "/%" PRIu64 "/%" PRIu64, i, tiles[i].k, tiles[i].n,
                     tiles[i].ready, g.load_start, g.stream_start, g.done, e.load_start, e.stream_start, e.done);
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    top.final();
    std::printf("me_cosim: %s: %zu tiles, %" PRIu64 " output beats, %" PRIu64 " cycles in %.2f s (%.0f cycles/s), %"
                PRIu64 " errors\n", errors ? "FAILED" : "passed", ot, beats, cycle, secs, double(cycle) / secs,
                errors);
    return errors ? 1 : 0;
}
