#include "models/tensor_engine/tensor_engine.h"

#include <cmath>
#include <cstring>

#include "tlm/address_map.h"
#include "tlm/ext_accumulate.h"
#include "tlm/ext_error.h"
#include "tlm/ext_strided.h"
#include "tlm/transport.h"

namespace trnsim::te {

tensor_engine::tensor_engine(sc_core::sc_module_name name, const te_config& cfg, te_backend_if& backend)
    : sc_module(name), out("out"), m_cfg(cfg), m_backend(backend), m_limits(cfg), m_stats(basename()) {
    SC_HAS_PROCESS(tensor_engine);
    SC_THREAD(writeback_thread);
    for (auto* s : {&m_instructions, &m_macs, &m_stream_cycles, &m_capacity_macs, &m_last_done_cycle}) m_stats.add(*s);
    if (cfg.signals) m_waves = std::make_unique<waves>();
    for (auto t : numerics::all_dtypes) {
        std::string tn(numerics::name_of(t));
        m_macs_by_type.push_back(std::make_unique<stats::counter>("macs_" + tn, "count", "useful MACs with " + tn + " inputs"));
        m_stats.add(*m_macs_by_type.back());
    }
}

double tensor_engine::peak_macs_per_cycle(numerics::dtype t) const {
    return double(m_cfg.rows) * m_cfg.cols * m_limits.macs_per_pe(t) / m_limits.passes(t);
}

std::string tensor_engine::check(const matmul_args& a) const {
    uint32_t kmax = m_cfg.rows * m_limits.macs_per_pe(a.in_type);
    if (a.k == 0 || a.m == 0 || a.n == 0) return "zero-sized matmul (k, m, n must be >= 1)";
    if (a.k > kmax) return "k = " + std::to_string(a.k) + " exceeds " + std::to_string(kmax) + " (array rows x MACs per PE)";
    if (a.m > m_cfg.cols) return "m = " + std::to_string(a.m) + " exceeds the array's " + std::to_string(m_cfg.cols) + " columns";
    if (a.n > m_cfg.n_max) return "n = " + std::to_string(a.n) + " exceeds n_max " + std::to_string(m_cfg.n_max);
    if (a.plane_rows == 0) return "plane_rows is 0";
    // PSUM holds FP32 results (near-memory accumulation works on whole 4-byte elements).
    if (a.y_addr % 4) return "y_addr " + tlmx::hex(a.y_addr) + " is not 4-byte aligned (PSUM holds FP32 results)";
    if (a.m > 1 && a.y_stride % 4) return "y_stride " + std::to_string(a.y_stride) + " is not a multiple of 4 (FP32 PSUM rows)";
    return {};
}

void tensor_engine::read_rows(uint64_t addr, uint64_t stride, uint64_t plane, uint32_t plane_rows, uint32_t rows,
                              uint64_t row_bytes, uint8_t* dst, sc_core::sc_time& delay) {
    // One partition-strided read per plane: all partitions are read at once (each on its own bank), so the
    // slowest bank of the slowest plane sets the delay.
    const sc_core::sc_time base = delay;
    for (uint32_t r0 = 0, p = 0; r0 < rows; r0 += plane_rows, ++p) {
        const uint32_t n = std::min(plane_rows, rows - r0);
        sc_core::sc_time d = base;
        const uint64_t a = addr + p * plane;
        auto st = tlmx::transport(out, m_pool, tlm::TLM_READ_COMMAND, a, dst ? dst + r0 * row_bytes : nullptr,
                                  n * row_bytes, d, new tlmx::ext_strided(n, stride));
        delay = std::max(delay, d);
        if (st != tlm::TLM_OK_RESPONSE) {
            std::string msg = "operand read of " + std::to_string(n) + " rows x " + std::to_string(row_bytes) +
                              " bytes at core-local " + tlmx::hex(a) + " failed: " + tlmx::status_name(st);
            SC_REPORT_ERROR(name(), msg.c_str());
        }
    }
}

void tensor_engine::matmul(const matmul_args& a, std::function<void()> on_done) {
    const size_t es = numerics::size_of(a.in_type);
    te_job job;
    if (!m_spare.empty()) {
        job = std::move(m_spare.back());
        m_spare.pop_back();
    }
    job.id = m_next_id++;
    job.in_type = a.in_type;
    job.k = a.k;
    job.m = a.m;
    job.n = a.n;
    // Timing-only MATMULs of the C++ model carry no bytes: the SBUF reads and the PSUM write are the same
    // transactions (same addresses, lengths, bank reservations) with nothing copied (the memories of a timing-only
    // run store nothing). The RTL computes on real pins, so its operands are always read.
    const bool data = carries_data();
    if (data) {
        job.stationary.resize(size_t(a.k) * a.m * es);
        job.moving.resize(size_t(a.k) * a.n * es);
    }
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    read_rows(a.s_addr, a.s_stride, a.s_plane, a.plane_rows, a.k, uint64_t(a.m) * es,
              data ? job.stationary.data() : nullptr, delay);
    read_rows(a.x_addr, a.x_stride, a.x_plane, a.plane_rows, a.k, uint64_t(a.n) * es,
              data ? job.moving.data() : nullptr, delay);
    // The moving operand streams from SBUF while the array runs; only the stationary read must precede the
    // weight load. The SBUF read of both still occupies the SBUF bank ports (contention is accounted there).
    if (delay > sc_core::SC_ZERO_TIME) m_issue_clock.wait_for(delay);

    m_macs += double(a.k) * a.m * a.n;
    *m_macs_by_type[size_t(a.in_type)] += double(a.k) * a.m * a.n;
    m_stream_cycles += double(m_limits.stream_cycles(a.in_type, a.n));
    m_capacity_macs += double(m_limits.stream_cycles(a.in_type, a.n)) * peak_macs_per_cycle(a.in_type);
    job.on_done = [this, a, cb = std::move(on_done)](te_job& j) mutable {
        m_done.push_back(finished{std::move(j), a, std::move(cb)});
        m_done_ev.notify();
    };
    set_in_flight(m_in_flight + 1);
    m_backend.submit(std::move(job));
}

void tensor_engine::set_in_flight(uint32_t n) {
    m_in_flight = n;
    if (m_waves) {
        m_waves->in_flight.write(n);
        m_waves->busy.write(n > 0);
    }
}

void tensor_engine::trace(sc_core::sc_trace_file* tf) const {
    if (!m_waves) return;
    sc_core::sc_trace(tf, m_waves->busy, m_waves->busy.name());
    sc_core::sc_trace(tf, m_waves->in_flight, m_waves->in_flight.name());
}

void tensor_engine::writeback_thread() {
    while (true) {
        if (m_done.empty()) sc_core::wait(m_done_ev);
        if (m_done.empty()) continue;
        finished f = std::move(m_done.front());
        m_done.pop_front();
        const matmul_args& a = f.args;
        // One partition-strided write of all M rows (near-memory accumulate when asked).
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_response_status st;
        if (a.accumulate) {
            tlm::tlm_generic_payload* gp = m_pool.acquire(uint64_t(a.m) * a.n * 4);
            gp->set_command(tlm::TLM_WRITE_COMMAND);
            gp->set_address(a.y_addr);
            if (carries_data()) std::memcpy(gp->get_data_ptr(), f.job.out.data(), gp->get_data_length());
            gp->set_extension(new tlmx::ext_strided(a.m, a.y_stride));
            gp->set_extension(new tlmx::ext_accumulate);
            out->b_transport(*gp, delay);
            st = gp->get_response_status();
            gp->release();
        } else {
            st = tlmx::transport(out, m_pool, tlm::TLM_WRITE_COMMAND, a.y_addr, carries_data() ? f.job.out.data() : nullptr,
                                 uint64_t(a.m) * a.n * 4, delay, new tlmx::ext_strided(a.m, a.y_stride));
        }
        if (st != tlm::TLM_OK_RESPONSE) {
            std::string msg = "PSUM write of " + std::to_string(a.m) + " rows at core-local " + tlmx::hex(a.y_addr) +
                              " failed: " + tlmx::status_name(st);
            SC_REPORT_ERROR(name(), msg.c_str());
        }
        if (delay > sc_core::SC_ZERO_TIME) m_writeback_clock.wait_for(delay);
        ++m_instructions;
        set_in_flight(m_in_flight - 1);
        m_last_done_cycle.set(double(f.job.done));
        if (!m_observers.empty()) {
            auto at = [this](uint64_t cycle) {
                return sc_core::sc_time(std::round(double(cycle) * 1000.0 / m_cfg.clock_ghz), sc_core::SC_PS);
            };
            const uint64_t load_end = f.job.load_start + m_limits.weight_load_cycles(a.in_type, a.k);
            const uint64_t stream_end = f.job.stream_start + m_limits.stream_cycles(a.in_type, a.n);
            m_observers.notify({this, &a, f.job.id, at(f.job.load_start), at(load_end), at(f.job.stream_start),
                                at(stream_end), at(f.job.done), sc_core::sc_time_stamp()});
        }
        if (f.on_done) f.on_done();
        if (m_spare.size() < 8) {
            te_job spare;
            spare.stationary = std::move(f.job.stationary);
            spare.moving = std::move(f.job.moving);
            spare.out = std::move(f.job.out);
            m_spare.push_back(std::move(spare));
        }
    }
}

} // namespace trnsim::te
