#include "models/vector_engine/vector_engine.h"

#include <cmath>

#include "models/numerics/dtype.h"
#include "models/vector_engine/ve_kernels.h"
#include "tlm/address_map.h"
#include "tlm/ext_error.h"
#include "tlm/ext_strided.h"
#include "tlm/transport.h"

namespace trnsim::ve {

vector_engine::vector_engine(sc_core::sc_module_name name, const ve_config& cfg, uint32_t partitions)
    : sc_module(name), out("out"), m_cfg(cfg), m_partitions(partitions), m_stats(basename()) {
    for (auto* s : {&m_instructions, &m_elements, &m_busy_cycles, &m_busy_ns, &m_bytes_read, &m_bytes_written})
        m_stats.add(*s);
}

std::string vector_engine::check(const vec_args& a) const { return ve::check(a, m_cfg, m_partitions); }

void vector_engine::read_tile(const operand& o, uint32_t parts, uint32_t free, std::vector<float>& dst,
                              sc_core::sc_time& delay) {
    // Timing-only instructions carry no bytes: the same transactions (addresses, lengths, bank reservations), nothing
    // copied, decoded or computed (as the Tensor Engine's).
    const bool data = m_cfg.functional;
    const uint64_t row = uint64_t(free) * numerics::size_of(o.type), n = row * parts;
    if (data) m_raw.resize(n);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    auto st = tlmx::transport(out, m_pool, tlm::TLM_READ_COMMAND, o.addr, data ? m_raw.data() : nullptr, n, d,
                              new tlmx::ext_strided(parts, o.part_stride));
    delay = std::max(delay, d);  // operands are read in parallel (separate read interfaces)
    if (st != tlm::TLM_OK_RESPONSE) {
        std::string msg = "operand read of " + std::to_string(parts) + " partitions x " + std::to_string(row) +
                          " bytes at core-local " + tlmx::hex(o.addr) + " failed: " + tlmx::status_name(st);
        SC_REPORT_ERROR(name(), msg.c_str());
    }
    m_bytes_read += double(n);
    if (!data) return;
    dst.resize(uint64_t(parts) * free);
    numerics::decode(o.type, m_raw.data(), dst.data(), dst.size());
}

void vector_engine::write_tile(const operand& o, uint32_t parts, uint32_t free, const std::vector<float>& src,
                               sc_core::sc_time& delay) {
    const uint64_t row = uint64_t(free) * numerics::size_of(o.type), n = row * parts;
    const bool data = m_cfg.functional;
    if (data) {
        m_raw.assign(n, 0);
        numerics::encode(o.type, src.data(), m_raw.data(), src.size());
    }
    auto st = tlmx::transport(out, m_pool, tlm::TLM_WRITE_COMMAND, o.addr, data ? m_raw.data() : nullptr, n, delay,
                              new tlmx::ext_strided(parts, o.part_stride));
    if (st != tlm::TLM_OK_RESPONSE) {
        std::string msg = "result write of " + std::to_string(parts) + " partitions x " + std::to_string(row) +
                          " bytes at core-local " + tlmx::hex(o.addr) + " failed: " + tlmx::status_name(st);
        SC_REPORT_ERROR(name(), msg.c_str());
    }
    m_bytes_written += double(n);
}

void vector_engine::execute(const vec_args& a) {
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    sc_core::sc_time reads = sc_core::SC_ZERO_TIME;
    read_tile(a.a, a.parts, a.free, m_a, reads);
    if (inputs_of(a.op) == 2) {
        uint32_t bp, bf;
        b_shape(a, bp, bf);
        read_tile(a.b, bp, bf, m_b, reads);
    }
    uint32_t op, of;
    out_shape(a, op, of);
    if (m_cfg.functional) {
        m_o.resize(uint64_t(op) * of);
        compute(a, m_a.data(), m_b.data(), m_o.data());
    }
    const uint64_t cyc = cycles(a, m_cfg);
    const sc_core::sc_time busy(std::round(double(cyc) * 1000.0 / m_cfg.clock_ghz), sc_core::SC_PS);
    // The engine streams while the operands arrive: the later of the two ends sets when the result is ready.
    sc_core::sc_time delay = std::max(reads, busy);
    write_tile(a.out, op, of, m_o, delay);
    if (delay > sc_core::SC_ZERO_TIME) m_clock.wait_for(delay);
    ++m_instructions;
    ++m_done;
    m_elements += double(elements(a));
    m_busy_cycles += double(cyc);
    m_busy_ns += (sc_core::sc_time_stamp() - t0).to_seconds() * 1e9;
}

} // namespace trnsim::ve
