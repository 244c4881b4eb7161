#include "models/sram/sram.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "models/numerics/dtype.h"
#include "tlm/ext_accumulate.h"
#include "tlm/ext_strided.h"
#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::sram {

sram::sram(sc_core::sc_module_name name, const sram_config& cfg)
    : sc_module(name), in("in"), m_cfg(cfg), m_data(static_cast<uint8_t*>(std::calloc(cfg.size(), 1))),
      m_stats(basename()) {
    if (!m_data) throw std::runtime_error(std::string(this->name()) + ": cannot allocate " + std::to_string(cfg.size()) + " bytes");
    m_banks.resize(cfg.banks, tlmx::gap_port(cfg.bank_bytes_per_ns));
    in.register_b_transport(this, &sram::b_transport);
    in.register_transport_dbg(this, &sram::transport_dbg);
    in.register_get_direct_mem_ptr(this, &sram::get_direct_mem_ptr);
    for (auto* s : {&m_bytes_read, &m_bytes_written, &m_accumulates, &m_accumulate_bytes, &m_bank_wait}) m_stats.add(*s);
}

void sram::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* st = gp.get_extension<tlmx::ext_strided>();
    const uint32_t rows = st ? st->rows : 1;
    const uint64_t n = gp.get_data_length();
    if (rows == 0 || n % rows) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    const uint64_t row_bytes = n / rows, stride = st ? st->stride : 0;
    const uint64_t a0 = gp.get_address(), extent = st ? st->extent(n) : n;
    if (a0 > m_cfg.size() || extent > m_cfg.size() - a0) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return;
    }
    const bool acc = m_cfg.accumulate && gp.get_extension<tlmx::ext_accumulate>();
    if (acc && (a0 % 4 || row_bytes % 4 || stride % 4)) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    // Every row goes to the bank of its partition; rows on different banks proceed in parallel, so the slowest
    // bank sets the delay.
    const uint32_t parts_per_bank = std::max<uint32_t>(1, m_cfg.partitions / m_cfg.banks);
    const uint64_t start = tlmx::to_ps(sc_core::sc_time_stamp() + delay) + uint64_t(m_cfg.access_latency_ns * 1000);
    uint64_t done = start;
    const uint64_t horizon = tlmx::to_ps(sc_core::sc_time_stamp());  // no later call reserves before this
    for (uint32_t r = 0; r < rows; ++r) {
        const uint64_t a = a0 + r * stride;
        uint8_t* mem = m_data.get() + a;
        uint8_t* buf = gp.get_data_ptr() + r * row_bytes;
        if (!m_cfg.functional) {
        } else if (gp.is_read()) {
            std::memcpy(buf, mem, row_bytes);
        } else if (acc) {
            const auto* src = reinterpret_cast<const float*>(buf);
            auto* dst = reinterpret_cast<float*>(mem);
            for (uint64_t i = 0; i < row_bytes / 4; ++i) {
                float s = dst[i] + src[i];
                if (std::isnan(s)) std::memcpy(&s, &numerics::canonical_nan_bits, 4);
                dst[i] = s;
            }
        } else {
            std::memcpy(mem, buf, row_bytes);
        }
        auto& bank = m_banks[(a / m_cfg.partition_bytes / parts_per_bank) % m_cfg.banks];
        uint64_t before = bank.wait_ps();
        bank.forget_before(horizon);
        done = std::max(done, bank.reserve(start, row_bytes));
        m_bank_wait += double(bank.wait_ps() - before) / 1000.0;
    }
    if (gp.is_read()) m_bytes_read += double(n);
    else m_bytes_written += double(n);
    if (acc) {
        ++m_accumulates;
        m_accumulate_bytes += double(n);
    }
    delay = tlmx::from_ps(done) - sc_core::sc_time_stamp();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned sram::transport_dbg(tlm::tlm_generic_payload& gp) {
    uint64_t a = gp.get_address(), n = gp.get_data_length();
    if (a > m_cfg.size() || n > m_cfg.size() - a) return 0;
    if (gp.is_read()) std::memcpy(gp.get_data_ptr(), m_data.get() + a, n);
    else if (gp.is_write()) std::memcpy(m_data.get() + a, gp.get_data_ptr(), n);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return unsigned(n);
}

bool sram::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    dmi.set_dmi_ptr(m_data.get());
    dmi.set_start_address(0);
    dmi.set_end_address(m_cfg.size() - 1);
    dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
    return gp.get_address() < m_cfg.size();
}

} // namespace trnsim::sram
