// The transactor for one Verilated matrix engine size (see me_rtl_adapter.h). Included only by the generated
// factory of library trnsim_rtl, which instantiates it for every model it builds.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include <systemc>

#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_sc.h"
#endif
#if VM_TRACE_VCD
#include "verilated_vcd_sc.h"
#endif

#include "models/numerics/dtype.h"
#include "models/tensor_engine/te_config.h"
#include "tlm/output_file.h"
#include "tlm/wave_check.h"
#include "models/tensor_engine/me_rtl_adapter.h"

namespace trnsim::rtl {

namespace detail {

// Fields of port values: integral (ports up to 64 bits) or sc_bv (wider).
template <class T>
inline std::enable_if_t<std::is_integral_v<T>> set_field(T& v, unsigned lsb, unsigned w, uint32_t x) {
    const T mask = T((w >= 32 ? 0xFFFFFFFFull : ((1ull << w) - 1)) << lsb);
    v = T((v & ~mask) | ((T(x) << lsb) & mask));
}
template <int N> inline void set_field(sc_dt::sc_bv<N>& v, unsigned lsb, unsigned w, uint32_t x) {
    // lanes are 16 or 32 bits and aligned: a field never straddles two words
    const unsigned word = lsb / 32, sh = lsb % 32;
    const uint32_t mask = (w >= 32 ? 0xFFFFFFFFu : ((1u << w) - 1)) << sh;
    v.set_word(int(word), (v.get_word(int(word)) & ~mask) | ((x << sh) & mask));
}
template <class T> inline std::enable_if_t<std::is_integral_v<T>, uint32_t> get_field(const T& v, unsigned lsb,
                                                                                      unsigned w) {
    return uint32_t((uint64_t(v) >> lsb) & (w >= 32 ? 0xFFFFFFFFull : ((1ull << w) - 1)));
}
template <int N> inline uint32_t get_field(const sc_dt::sc_bv<N>& v, unsigned lsb, unsigned w) {
    return (uint32_t(v.get_word(int(lsb / 32))) >> (lsb % 32)) & (w >= 32 ? 0xFFFFFFFFu : ((1u << w) - 1));
}

template <class P> using port_data_t = typename std::remove_reference_t<P>::data_type;  // ports may be references

} // namespace detail

template <class VTop, uint32_t ROWS, uint32_t COLS>
class me_rtl_adapter final : public sc_core::sc_module, public me_rtl_adapter_if {
    using cmd_field_t = detail::port_data_t<decltype(VTop::cmd_k)>;
    using dtype_t = detail::port_data_t<decltype(VTop::cmd_dtype)>;
    using w_data_t = detail::port_data_t<decltype(VTop::w_data)>;
    using m_data_t = detail::port_data_t<decltype(VTop::m_data)>;
    using out_data_t = detail::port_data_t<decltype(VTop::out_data)>;

public:
    SC_HAS_PROCESS(me_rtl_adapter);

    // `name` by value: it must live until the members (the model) are constructed.
    me_rtl_adapter(sc_core::sc_module_name name, double clock_ghz)
        : sc_core::sc_module(name), m_ghz(clock_ghz), m_top("me_top") {
        m_rst_n.write(false);  // the first rising edge (time 0) resets the RTL
        m_out_ready.write(true);
        m_top.clk(m_clk);
        m_top.rst_n(m_rst_n);
        m_top.cmd_valid(m_cmd_valid);
        m_top.cmd_ready(m_cmd_ready);
        m_top.cmd_dtype(m_cmd_dtype);
        m_top.cmd_k(m_cmd_k);
        m_top.cmd_m(m_cmd_m);
        m_top.cmd_n(m_cmd_n);
        m_top.w_valid(m_w_valid);
        m_top.w_ready(m_w_ready);
        m_top.w_data(m_w_data);
        m_top.m_valid(m_m_valid);
        m_top.m_ready(m_m_ready);
        m_top.m_data(m_m_data);
        m_top.out_valid(m_out_valid);
        m_top.out_ready(m_out_ready);
        m_top.out_last(m_out_last);
        m_top.out_data(m_out_data);
        m_top.idle(m_idle);
        SC_THREAD(clock);
        SC_THREAD(run);
    }

    ~me_rtl_adapter() override { close_trace(); }

    uint32_t rows() const override { return ROWS; }
    uint32_t cols() const override { return COLS; }
    uint64_t cycles() const override { return m_clocked; }

    void submit(te::te_job&& job) override {
        check(job);
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        const uint64_t id = m_next_seq++;
        slot s;
        s.seq = id;
        s.ready = cycle_at_or_after(now);
        s.beats_w = (job.k + build().ls_rows_per_cycle - 1) / build().ls_rows_per_cycle;
        s.job = std::move(job);
        s.job.out.assign(size_t(s.job.m) * s.job.n, 0.0f);
        m_jobs.push_back(std::move(s));
        // The adapter's thread presents it (one writer per signal): from this cycle when called on a clock edge.
        m_dirty = true;
        m_want_sleep = false;
        m_wake_ev.notify(sc_core::SC_ZERO_TIME);
        m_submit_ev.notify(sc_core::SC_ZERO_TIME);
        while (m_cmd_granted < id + 1) wait(m_accept_ev);
    }

    void open_trace(const std::string& file) override {
        const std::string ext = te::wave_format(file), wrapper = te::wave_wrapper_file(file);
        for (const std::string& f : {file, wrapper}) {
            const std::string why = platform::output_file_problem(f);
            if (!why.empty()) {
                SC_REPORT_ERROR(name(), ("cannot write waveform '" + f + "' (chip.core.te.wave): " + why).c_str());
                return;
            }
        }
        if (ext != build().trace_format) {
            std::ostringstream os;
            os << "cannot write waveform '" << file << "': the RTL was built with "
               << (*build().trace_format ? build().trace_format : "no") << " trace support (TRNSIM_RTL_TRACE)";
            SC_REPORT_ERROR(name(), os.str().c_str());
            return;
        }
        // Neither Verilator's writers nor SystemC's report write errors, and the FST writer seeks in its file: they
        // write into a private directory (tlm/output_file.h, captured_output), the FST file spooled and checked at
        // finish_trace(), the VCDs streamed; the targets are replaced only when the whole file was written.
        try {
            m_wave_out = std::make_unique<platform::captured_output>(
                file, "", ext == "fst" ? platform::capture_mode::spool : platform::capture_mode::stream);
            m_wrapper_out = std::make_unique<platform::captured_output>(wrapper, ".vcd");
        } catch (const platform::output_error& e) {
            SC_REPORT_ERROR(name(), e.what());
            return;
        }
#if VM_TRACE_FST
        m_fst = std::make_unique<VerilatedFstSc>();
        m_top.trace(m_fst.get(), 99);
        m_fst->open(m_wave_out->library_name().c_str());
#endif
#if VM_TRACE_VCD
        m_vcd = std::make_unique<VerilatedVcdSc>();
        m_top.trace(m_vcd.get(), 99);
        m_vcd->open(m_wave_out->library_name().c_str());
#endif
        open_wrapper_trace(m_wrapper_out->library_name());  // SystemC adds the .vcd
    }

    void finish_trace() override {
        close_trace();
        using check_fn = std::function<std::string(const std::string&)>;
        std::string err;
        const auto finish = [&err](std::unique_ptr<platform::captured_output>& out, const check_fn& check) {
            if (!out) return;
            try {
                out->finish(check);
            } catch (const platform::output_error& e) {
                if (err.empty()) err = e.what();
            }
            out.reset();
        };
        finish(m_wave_out, std::string(build().trace_format) == "fst" ? check_fn(platform::fst_file_problem) : check_fn());
        finish(m_wrapper_out, {});
        if (!err.empty()) throw platform::output_error(err);
    }

private:
    struct slot {
        uint64_t seq = 0, ready = 0;
        uint32_t beats_w = 0;
        te::te_job job;
    };

    static const me_rtl_build& build() { return me_rtl_build_params(); }

    void check(const te::te_job& j) const {
        using numerics::dtype;
        std::ostringstream os;
        const auto& computed = build().dtypes;
        if (std::find(computed.begin(), computed.end(), j.in_type) == computed.end())
            os << "job " << j.id << ": the RTL does not compute " << numerics::name_of(j.in_type) << " (me_pkg::DT_COMPUTED)";
        else if (j.k < 1 || j.k > ROWS || j.m < 1 || j.m > COLS || j.n < 1 || j.n > build().n_max)
            os << "job " << j.id << ": k=" << j.k << " m=" << j.m << " n=" << j.n << " outside 1.." << ROWS << ", 1.."
               << COLS << ", 1.." << build().n_max;
        else if (j.stationary.size() != size_t(j.k) * j.m * numerics::size_of(j.in_type) ||
                 j.moving.size() != size_t(j.k) * j.n * numerics::size_of(j.in_type))
            os << "job " << j.id << ": operand sizes do not match k, m, n";
        if (!os.str().empty()) SC_REPORT_ERROR(name(), os.str().c_str());
    }

    static uint16_t element(const std::vector<uint8_t>& v, size_t i, size_t bytes) {
        return bytes == 1 ? uint16_t(v[i]) : uint16_t(v[2 * i] | (v[2 * i + 1] << 8));
    }

    slot* at(uint64_t seq) {
        if (seq < m_done_seq || seq - m_done_seq >= m_jobs.size()) return nullptr;
        return &m_jobs[size_t(seq - m_done_seq)];
    }

    // Cycle c starts at time_of(c), the Tensor Engine's cycle times (te_clock of the C++ back end).
    uint64_t cycle_at_or_after(const sc_core::sc_time& t) const {
        return uint64_t(std::ceil(t.to_seconds() * m_ghz * 1e9 - 1e-6));
    }
    sc_core::sc_time time_of(double cycle) const {
        return sc_core::sc_time(std::round(cycle * 1000.0 / m_ghz), sc_core::SC_PS);
    }
    void wait_until(const sc_core::sc_time& t) {
        if (t > sc_core::sc_time_stamp()) wait(t - sc_core::sc_time_stamp());
    }

    // Presents the inputs of the current cycle from the state of the jobs. Idempotent within a cycle.
    void drive() {
        m_dirty = false;
        const uint64_t c = m_cycle;
        // command and weights: the job whose command is next (commands are accepted one at a time, after the
        // previous job's last weight beat)
        slot* wj = at(m_w_seq);
        const bool cmd_v = wj && m_cmd_accepted == m_w_seq && c >= wj->ready;
        const bool w_v = wj && c >= wj->ready;
        m_drv_cmd = cmd_v;
        m_drv_w = w_v;
        m_cmd_valid.write(cmd_v);
        m_w_valid.write(w_v);
        if (cmd_v) {
            m_cmd_dtype.write(dtype_t(uint8_t(wj->job.in_type)));
            m_cmd_k.write(cmd_field_t(wj->job.k));
            m_cmd_m.write(cmd_field_t(wj->job.m));
            m_cmd_n.write(cmd_field_t(wj->job.n));
        }
        if (w_v && m_w_presented != std::make_pair(m_w_seq, m_w_beat)) {
            const te::te_job& j = wj->job;
            const size_t bytes = numerics::size_of(j.in_type);
            const uint32_t ls = build().ls_rows_per_cycle;
            w_data_t v{};
            for (uint32_t q = 0; q < ls; q++)
                for (uint32_t col = 0; col < j.m; col++) {
                    const uint32_t kk = m_w_beat * ls + q;
                    if (kk < j.k)
                        detail::set_field(v, (q * COLS + col) * 16, 16,
                                          element(j.stationary, size_t(kk) * j.m + col, bytes));
                }
            m_w_data.write(v);
            m_w_presented = {m_w_seq, m_w_beat};
        }
        // moving beats
        slot* mj = at(m_m_seq);
        const bool m_v = mj && c >= mj->ready;
        m_drv_m = m_v;
        m_m_valid.write(m_v);
        if (m_v && m_m_presented != std::make_pair(m_m_seq, m_m_beat)) {
            const te::te_job& j = mj->job;
            const size_t bytes = numerics::size_of(j.in_type);
            m_data_t v{};
            for (uint32_t r = 0; r < j.k; r++)
                detail::set_field(v, r * 16, 16, element(j.moving, size_t(r) * j.n + m_m_beat, bytes));
            m_m_data.write(v);
            m_m_presented = {m_m_seq, m_m_beat};
        }
    }

    // The engine clock: rising edge of cycle c at time_of(c), falling edge half-way. It stops after a cycle in which
    // no job is outstanding (an idle engine costs no evaluation and leaves no pending event) and restarts with the
    // first cycle that starts at or after the next submit().
    void clock() {
        uint64_t c = 0;
        for (;;) {
            wait_until(time_of(double(c)));
            m_cycle = c;
            m_clk.write(true);
            wait_until(time_of(double(c) + 0.5));
            m_clk.write(false);
            c++;
            if (m_want_sleep) {
                m_stopped = true;
                wait(m_wake_ev);
                m_stopped = false;
                c = std::max(c, cycle_at_or_after(sc_core::sc_time_stamp()));
            }
        }
    }

    void run() {
        for (;;) {
            wait(m_clk.posedge_event() | m_submit_ev);
            const sc_core::sc_time now = sc_core::sc_time_stamp();
            if (!m_clk.posedge()) {
                // A job was submitted. On a clock edge still to come in this time step, or with the clock stopped,
                // the processing of that edge presents it: driving now would reach the model before the edge.
                const bool edge_pending = m_stopped || (time_of(double(cycle_at_or_after(now))) == now &&
                                                        m_last_edge != now);
                if (m_dirty && !edge_pending) {
                    drive();
                    settle_and_grant();
                }
                continue;
            }
            m_last_edge = now;
            m_clocked++;
            const uint64_t c = m_cycle;
            if (m_reset_done) {
                // handshakes of cycle c - 1 (the model evaluates this edge in this delta: reads see cycle c - 1)
                if (m_drv_cmd && m_cmd_ready.read()) m_cmd_accepted++;
                if (m_cmd_accepted != m_cmd_granted) SC_REPORT_ERROR(name(), "command handshake not as granted");
                if (m_drv_w && m_w_ready.read()) {
                    slot* s = at(m_w_seq);
                    if (m_w_beat == 0) s->job.load_start = c - 1;
                    if (++m_w_beat == s->beats_w) { m_w_seq++; m_w_beat = 0; }
                }
                if (m_drv_m && m_m_ready.read()) {
                    slot* s = at(m_m_seq);
                    if (m_m_beat == 0) s->job.stream_start = c - 1;
                    if (++m_m_beat == s->job.n) { m_m_seq++; m_m_beat = 0; }
                }
            }
            m_rst_n.write(true);
            m_reset_done = true;
            drive();
            // registered outputs of cycle c
            wait(sc_core::SC_ZERO_TIME);
            if (m_out_valid.read()) collect(c);
            if (m_dirty) drive();
            settle_and_grant();
            m_want_sleep = m_jobs.empty();
        }
    }

    // Once the inputs of this cycle have reached the model's outputs (one delta per evaluation), a command
    // presented with cmd_ready high is accepted at the end of the cycle: submit() returns in the cycle the RTL
    // accepts it (load_start), as with the C++ back end. The next edge checks the handshake against the grant.
    void settle_and_grant() {
        if (!m_drv_cmd || m_cmd_granted != m_cmd_accepted) return;  // no command waiting for its grant
        wait(sc_core::SC_ZERO_TIME);
        wait(sc_core::SC_ZERO_TIME);
        if (m_drv_cmd && m_cmd_ready.read() && m_cmd_granted == m_cmd_accepted) {
            m_cmd_granted = m_cmd_accepted + 1;
            m_accept_ev.notify(sc_core::SC_ZERO_TIME);
        }
    }

    void collect(uint64_t c) {
        slot* s = at(m_done_seq);
        if (!s || m_o_beat >= s->job.n) {
            SC_REPORT_ERROR(name(), "output beat with no job outstanding");
            return;
        }
        te::te_job& j = s->job;
        const out_data_t& d = m_out_data.read();
        for (uint32_t col = 0; col < j.m; col++) {
            const uint32_t bits = detail::get_field(d, col * 32, 32);
            std::memcpy(&j.out[size_t(col) * j.n + m_o_beat], &bits, 4);
        }
        if (++m_o_beat == j.n) {
            if (!m_out_last.read()) SC_REPORT_ERROR(name(), "last output beat without `last`");
            j.done = c;
            te::te_job done = std::move(j);
            m_jobs.pop_front();
            m_done_seq++;
            m_o_beat = 0;
            if (done.on_done) done.on_done(done);
        } else if (m_out_last.read()) {
            SC_REPORT_ERROR(name(), "`last` before the job's last output beat");
        }
    }

    // The transactor's side of the pins and its own state, sc_trace'd into `stem`.vcd (SystemC's VCD writer).
    void open_wrapper_trace(const std::string& stem) {
        m_sc_trace = sc_core::sc_create_vcd_trace_file(stem.c_str());
        sc_core::sc_report_handler::set_actions("tracing timescale unit set", sc_core::SC_INFO,
                                                sc_core::SC_DO_NOTHING);  // "timescale unit set": as asked
        m_sc_trace->set_time_unit(1, sc_core::SC_PS);
        sc_core::sc_trace_file* tf = m_sc_trace;
        const std::string p = std::string(name()) + ".";
        for (const auto* sig : {&m_clk, &m_rst_n, &m_cmd_valid, &m_cmd_ready, &m_w_valid, &m_w_ready, &m_m_valid,
                                &m_m_ready, &m_out_valid, &m_out_ready, &m_out_last, &m_idle})
            sc_core::sc_trace(tf, *sig, p + sig->basename());
        sc_core::sc_trace(tf, m_cmd_dtype, p + m_cmd_dtype.basename());
        sc_core::sc_trace(tf, m_cmd_k, p + m_cmd_k.basename());
        sc_core::sc_trace(tf, m_cmd_m, p + m_cmd_m.basename());
        sc_core::sc_trace(tf, m_cmd_n, p + m_cmd_n.basename());
        sc_core::sc_trace(tf, m_w_data, p + m_w_data.basename());
        sc_core::sc_trace(tf, m_m_data, p + m_m_data.basename());
        sc_core::sc_trace(tf, m_out_data, p + m_out_data.basename());
        // transactor state: engine cycle, jobs submitted / commands accepted / weight, moving, output cursors
        sc_core::sc_trace(tf, m_cycle, p + "xactor.cycle");
        sc_core::sc_trace(tf, m_next_seq, p + "xactor.jobs_submitted");
        sc_core::sc_trace(tf, m_cmd_accepted, p + "xactor.cmds_accepted");
        sc_core::sc_trace(tf, m_w_seq, p + "xactor.weight_job");
        sc_core::sc_trace(tf, m_w_beat, p + "xactor.weight_beat");
        sc_core::sc_trace(tf, m_m_seq, p + "xactor.moving_job");
        sc_core::sc_trace(tf, m_m_beat, p + "xactor.moving_beat");
        sc_core::sc_trace(tf, m_done_seq, p + "xactor.jobs_done");
        sc_core::sc_trace(tf, m_o_beat, p + "xactor.output_beat");
    }

    void close_trace() {
        if (m_sc_trace) {
            sc_core::sc_close_vcd_trace_file(m_sc_trace);
            m_sc_trace = nullptr;
        }
#if VM_TRACE_FST
        if (m_fst) m_fst->close();
#endif
#if VM_TRACE_VCD
        if (m_vcd) m_vcd->close();
#endif
    }

    const double m_ghz;
    VTop m_top;
    sc_core::sc_signal<bool> m_clk{"clk"}, m_rst_n{"rst_n"}, m_cmd_valid{"cmd_valid"}, m_cmd_ready{"cmd_ready"};
    sc_core::sc_signal<dtype_t> m_cmd_dtype{"cmd_dtype"};
    sc_core::sc_signal<cmd_field_t> m_cmd_k{"cmd_k"}, m_cmd_m{"cmd_m"}, m_cmd_n{"cmd_n"};
    sc_core::sc_signal<bool> m_w_valid{"w_valid"}, m_w_ready{"w_ready"};
    sc_core::sc_signal<w_data_t> m_w_data{"w_data"};
    sc_core::sc_signal<bool> m_m_valid{"m_valid"}, m_m_ready{"m_ready"};
    sc_core::sc_signal<m_data_t> m_m_data{"m_data"};
    sc_core::sc_signal<bool> m_out_valid{"out_valid"}, m_out_ready{"out_ready"}, m_out_last{"out_last"};
    sc_core::sc_signal<out_data_t> m_out_data{"out_data"};
    sc_core::sc_signal<bool> m_idle{"idle"};

    std::deque<slot> m_jobs;  // submitted and not complete, in order; front is m_done_seq
    uint64_t m_next_seq = 0, m_done_seq = 0, m_cmd_accepted = 0, m_cmd_granted = 0, m_w_seq = 0, m_m_seq = 0;
    uint64_t m_cycle = 0, m_clocked = 0;
    uint32_t m_w_beat = 0, m_m_beat = 0, m_o_beat = 0;
    std::pair<uint64_t, uint32_t> m_w_presented{~0ull, 0}, m_m_presented{~0ull, 0};
    bool m_drv_cmd = false, m_drv_w = false, m_drv_m = false, m_reset_done = false, m_dirty = false;
    bool m_want_sleep = false, m_stopped = false;
    sc_core::sc_time m_last_edge = sc_core::SC_ZERO_TIME;
    sc_core::sc_event m_accept_ev, m_submit_ev, m_wake_ev;
    sc_core::sc_trace_file* m_sc_trace = nullptr;  // the wrapper's signals (VCD)
    // Where the waveforms go (declared before the writers: destroyed after them, when the writers have closed).
    std::unique_ptr<platform::captured_output> m_wave_out, m_wrapper_out;
#if VM_TRACE_FST
    std::unique_ptr<VerilatedFstSc> m_fst;
#endif
#if VM_TRACE_VCD
    std::unique_ptr<VerilatedVcdSc> m_vcd;
#endif
};

} // namespace trnsim::rtl
