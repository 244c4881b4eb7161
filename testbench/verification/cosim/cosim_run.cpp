#include "testbench/verification/cosim/cosim_run.h"

#include <chrono>
#include <deque>
#include <memory>
#include <sstream>

#include <systemc>

#include "models/tensor_engine/te_backend_model.h"
#include "models/tensor_engine/te_timing.h"
#include "tlm/config/config_node.h"
#include "platforms/single_chip/factories.h"
#include "testbench/verification/cosim/me_golden.h"
#include "testbench/sim_run.h"

namespace trnsim::tb {

namespace {


enum side_t { TLM = 0, RTL = 1 };

// One tile in flight: its operands and golden, and what each side returned.
struct entry {
    cosim::tile t;
    bool done[2] = {false, false};
    std::vector<float> out[2];
    std::array<uint64_t, 3> cycles[2]{};
};

// Generates the tile sequence on demand (same order of random draws whichever side asks first), keeps each tile
// until both sides have returned it, then compares and frees it.
class scoreboard {
public:
    scoreboard(const cosim_options& opt, const te::te_config& cfg)
        : m_opt(opt), m_cfg(cfg), m_timing(cfg), m_stim(opt.seed) {
        m_directed = m_stim.directed_tiles(opt.types, cfg.rows, cfg.cols, cfg.n_max, cfg.min_ii,
                                           cfg.ls_rows_per_cycle);
    }

    entry& tile(uint64_t i) {
        while (m_base + m_live.size() <= i) generate();
        return *m_live[size_t(i - m_base)];
    }

    void done(side_t s, te::te_job& j) {
        entry& e = tile(j.id);
        e.done[s] = true;
        e.out[s] = std::move(j.out);
        e.cycles[s] = {j.load_start, j.stream_start, j.done};
        m_last_done[s] = j.done + 1;
        m_completed[s]++;
        if (s == TLM && j.id == m_opt.inject_mismatch && !e.out[s].empty()) {
            uint32_t b = cosim::f2u(e.out[s][0]) ^ 1u;
            e.out[s][0] = cosim::u2f(b);
        }
        while (!m_live.empty() && m_live.front()->done[TLM] && m_live.front()->done[RTL]) {
            compare(m_base, *m_live.front());
            m_live.pop_front();
            m_base++;
        }
        if (m_completed[TLM] == m_opt.tiles && m_completed[RTL] == m_opt.tiles) sc_core::sc_stop();
    }

    uint64_t completed(side_t s) const { return m_completed[s]; }
    cosim_result& result() {
        m_res.tlm_cycles = m_last_done[TLM];
        m_res.rtl_cycles = m_last_done[RTL];
        return m_res;
    }

private:
    void generate() {
        const uint64_t i = m_base + m_live.size();
        auto e = std::make_unique<entry>();
        e->t = i < m_directed.size() ? std::move(m_directed[size_t(i)])
                                     : m_stim.random_tile(m_opt.types, m_cfg.rows, m_cfg.cols, m_cfg.n_max,
                                                          m_cfg.min_ii, m_cfg.ls_rows_per_cycle);
        if (m_opt.gaps && i > 0 && !m_stim.chance(0.3))
            m_ready += m_stim.uniform(0, 3 * uint32_t(m_timing.weight_load_cycles(e->t.type, e->t.k) +
                                                      m_timing.stream_cycles(e->t.type, e->t.n) +
                                                      m_timing.drain_cycles()));
        e->t.ready = m_ready;
        m_live.push_back(std::move(e));
    }

    void report(const cosim_mismatch& mm) {
        m_res.mismatches++;
        if (m_res.reported.size() < m_opt.max_reported) m_res.reported.push_back(mm);
    }

    void compare(uint64_t i, const entry& e) {
        const cosim::tile& t = e.t;
        m_res.tiles++;
        m_res.tiles_per_type[std::string(numerics::name_of(t.type))]++;
        cosim_mismatch base;
        base.tile = i;
        base.type = t.type;
        base.k = t.k;
        base.m = t.m;
        base.n = t.n;
        base.tlm_cycles = e.cycles[TLM];
        base.rtl_cycles = e.cycles[RTL];
        if (e.cycles[TLM] != e.cycles[RTL]) {
            m_res.timing_mismatches++;
            cosim_mismatch mm = base;
            mm.kind = cosim_mismatch::timing;
            report(mm);
        }
        const size_t count = size_t(t.m) * t.n;
        if (e.out[TLM].size() != count || e.out[RTL].size() != count) {
            m_res.data_mismatches++;
            cosim_mismatch mm = base;
            mm.kind = cosim_mismatch::data;
            mm.row = mm.col = ~0u;  // wrong number of results
            report(mm);
            return;
        }
        for (uint32_t r = 0; r < t.m; r++)
            for (uint32_t c = 0; c < t.n; c++) {
                const size_t at = size_t(r) * t.n + c;
                const uint32_t a = cosim::f2u(e.out[TLM][at]), b = cosim::f2u(e.out[RTL][at]), g = t.golden[at];
                m_res.elements++;
                if (a == b && a == g) continue;
                cosim_mismatch mm = base;
                mm.row = r;
                mm.col = c;
                mm.tlm_bits = a;
                mm.rtl_bits = b;
                mm.golden_bits = g;
                // Counted apart: TLM vs RTL bits (data), and either side vs the independent golden (golden).
                if (a != g || b != g) m_res.golden_mismatches++;
                if (a != b) m_res.data_mismatches++;
                mm.kind = a != b ? cosim_mismatch::data : cosim_mismatch::golden;
                report(mm);
            }
    }

    const cosim_options& m_opt;
    const te::te_config& m_cfg;
    te::te_timing m_timing;  // only for the gap lengths
    cosim::stimulus m_stim;
    std::vector<cosim::tile> m_directed;
    std::deque<std::unique_ptr<entry>> m_live;  // tiles m_base, m_base + 1, ...
    uint64_t m_base = 0, m_ready = 0;
    uint64_t m_completed[2] = {0, 0}, m_last_done[2] = {0, 0};
    cosim_result m_res;
};

// Submits the tile sequence to one back end, each tile from its operand-ready cycle.
class cosim_driver : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(cosim_driver);
    cosim_driver(const sc_core::sc_module_name& name, side_t side, const cosim_options& opt,
                 const te::te_config& cfg, te::te_backend_if& be, scoreboard& sb)
        : sc_core::sc_module(name), m_side(side), m_opt(opt), m_clock{cfg.clock_ghz}, m_be(be), m_sb(sb) {
        SC_THREAD(run);
    }

    uint64_t submitted = 0;

private:
    void run() {
        for (uint64_t i = 0; i < m_opt.tiles; i++) {
            const cosim::tile& t = m_sb.tile(i).t;
            const sc_core::sc_time at = m_clock.time_of(t.ready);
            if (sc_core::sc_time_stamp() < at) wait(at - sc_core::sc_time_stamp());
            te::te_job job;
            job.id = i;
            job.in_type = t.type;
            job.k = t.k;
            job.m = t.m;
            job.n = t.n;
            job.stationary = cosim::pack_operand(t.s, t.type);
            job.moving = cosim::pack_operand(t.x, t.type);
            job.on_done = [this](te::te_job& j) { m_sb.done(m_side, j); };
            m_be.submit(std::move(job));  // returns once the back end accepts it (load_start)
            submitted++;
        }
    }

    side_t m_side;
    const cosim_options& m_opt;
    te::te_clock m_clock;
    te::te_backend_if& m_be;
    scoreboard& m_sb;
};

// Stops the simulation when a side completes no tile for far longer than any tile can take.
class cosim_watchdog : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(cosim_watchdog);
    cosim_watchdog(const sc_core::sc_module_name& name, const cosim_options& opt, const te::te_config& cfg,
                   scoreboard& sb)
        : sc_core::sc_module(name), m_opt(opt), m_sb(sb) {
        const te::te_clock clk{cfg.clock_ghz};
        const uint64_t longest = 4 * (uint64_t(cfg.n_max) + cfg.min_ii + cfg.rows + cfg.cols + cfg.rows) + 10000;
        m_period = clk.time_of(longest);
        SC_THREAD(run);
    }

    std::string error;

private:
    void run() {
        uint64_t last[2] = {0, 0};
        for (;;) {
            wait(m_period);
            for (side_t s : {TLM, RTL}) {
                const uint64_t c = m_sb.completed(s);
                if (c < m_opt.tiles && c == last[s]) {
                    std::ostringstream os;
                    os << (s == TLM ? "TLM model" : "RTL") << ": no tile completed in " << m_period
                       << " (tile " << c << " outstanding, " << c << " of " << m_opt.tiles << " complete)";
                    error = os.str();
                    sc_core::sc_stop();
                    return;
                }
                last[s] = c;
            }
        }
    }

    const cosim_options& m_opt;
    scoreboard& m_sb;
    sc_core::sc_time m_period;
};

} // namespace

cosim_result run_cosim(const cosim_options& opt) {
    te::te_config cfg;
    cfg.rows = opt.rows;
    cfg.cols = opt.cols;
    if (!platform::rtl_build_params(cfg))
        throw config::config_error("trnsim cosim: this build has no RTL (configure with -DTRNSIM_RTL=ON)");
    te::te_config cfg_tlm = cfg, cfg_rtl = cfg;
    cfg_tlm.impl = te::te_impl::tlm;
    cfg_rtl.impl = te::te_impl::rtl;
    cfg_rtl.wave_file = opt.wave;

    platform::te_backend_handle tlm = platform::make_te_backend("tlm_te", cfg_tlm, nullptr);
    platform::te_backend_handle rtl = platform::make_te_backend("rtl_te", cfg_rtl, nullptr);
    // te_backend_rtl checks its stamps against te_timing too; the scoreboard reports differences itself.
    sc_core::sc_report_handler::set_actions("rtl_te", sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // sc_stop()

    scoreboard sb(opt, cfg);
    cosim_driver d_tlm("tlm_driver", TLM, opt, cfg_tlm, *tlm.backend, sb);
    cosim_driver d_rtl("rtl_driver", RTL, opt, cfg_rtl, *rtl.backend, sb);
    cosim_watchdog dog("watchdog", opt, cfg, sb);

    // The common run loop: a progress line on long runs (millions of tiles), the hang watchdog, deadlock reports.
    sim_probe probe;
    probe.finished = [&] {
        return !dog.error.empty() || (sb.completed(TLM) == opt.tiles && sb.completed(RTL) == opt.tiles);
    };
    probe.progress = [&] { return sb.completed(TLM) + sb.completed(RTL); };
    probe.progress_text = [&] {
        return "tiles " + std::to_string(std::min(sb.completed(TLM), sb.completed(RTL))) + "/" +
               std::to_string(opt.tiles);
    };
    probe.stuck = [&] {
        return std::vector<std::string>{std::to_string(sb.completed(TLM)) + " (TLM model) and " +
                                        std::to_string(sb.completed(RTL)) + " (RTL) of " + std::to_string(opt.tiles) +
                                        " tiles complete"};
    };
    const sim_options so;
    const double wall = opt.tiles > 0 ? run_to_completion(probe, so) : 0.0;

    if (!opt.wave.empty()) platform::rtl_finish_waves();  // throws when a waveform cannot be written whole
    cosim_result r = sb.result();
    r.wall_s = wall;
    r.rtl_clocked = platform::rtl_clocked_cycles(rtl.module.get());
    r.error = dog.error;
    if (r.error.empty() && (sb.completed(TLM) != opt.tiles || sb.completed(RTL) != opt.tiles)) {
        std::ostringstream os;
        os << "simulation ended with " << sb.completed(TLM) << " (TLM model) and " << sb.completed(RTL)
           << " (RTL) of " << opt.tiles << " tiles complete";
        r.error = os.str();
    }
    return r;
}

} // namespace trnsim::tb
