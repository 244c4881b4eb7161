#include "models/chip_light/light_chip.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/collective/schedule.h"
#include "models/link/global_address.h"
#include "models/link/transfer_ext.h"
#include "tlm/transport.h"

namespace trnsim::chip_light {

using sc_core::sc_time;

namespace {
// Host-side staging for copies and reduces, one per process rather than one per chip: every light chip's copy() and
// reduce() run to completion in the calling thread (the executor's one SystemC thread; nothing waits), so no two
// calls use it at once, and a platform of N chips holds one segment's worth instead of N.
struct staging {
    std::vector<uint8_t> a, b;
    std::vector<float> fa, fb;
};
staging& shared_staging() {
    static thread_local staging s;
    return s;
}
}  // namespace

fabric_memory::fabric_memory(sc_core::sc_module_name name, uint64_t size, double write_latency_ns, bool functional)
    : sc_module(name), in("in"), m_store(size), m_write_latency(write_latency_ns, sc_core::SC_NS),
      m_read_latency(write_latency_ns, sc_core::SC_NS), m_functional(functional) {
    in.register_b_transport(this, &fabric_memory::b_transport);
    in.register_transport_dbg(this, &fabric_memory::transport_dbg);
}

void fabric_memory::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    if (!tlmx::check_payload(gp, m_store.size())) return;
    uint64_t n = gp.get_data_length();
    if (gp.is_write()) {
        if (m_functional && gp.get_data_ptr()) m_store.write(gp.get_address(), gp.get_data_ptr(), n);
        m_written += n;
        delay += m_write_latency;
    } else {
        if (gp.get_data_ptr()) {
            if (m_functional) m_store.read(gp.get_address(), gp.get_data_ptr(), n);
            else std::memset(gp.get_data_ptr(), 0, n);
        }
        delay += m_read_latency;
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned fabric_memory::transport_dbg(tlm::tlm_generic_payload& gp) {
    if (!m_functional) {
        uint64_t n = gp.get_data_length();
        if (gp.is_read() && gp.get_data_ptr()) std::memset(gp.get_data_ptr(), 0, n);
        return unsigned(n);
    }
    return tlmx::serve_debug(m_store, gp);
}

namespace {
link::link_config dma_params(const light_chip_config& p) {
    link::link_config d;
    d.gbps = p.dma_gbps;
    d.latency_ns = p.dma_latency_ns;
    d.payload_bytes = 4096;   // a DMA burst
    d.overhead_bytes = 0;
    d.credits = 1u << 30;     // outstanding bursts are not what limits the chip's DMA
    return d;
}
}  // namespace

light_chip::light_chip(sc_core::sc_module_name name, const light_chip_config& p, uint32_t chip, uint32_t first_chip,
                       const link::torus_shape& shape, uint32_t total)
    : sc_module(name), router("router", chip, first_chip, shape, total),
      mem("mem", p.hbm_bytes, p.hbm_latency_ns, p.functional), dma_out("dma_out"), m_p(p), m_id(chip),
      m_dma(dma_params(p)), m_reduce_lat_ps(uint64_t(std::llround(p.reduce_latency_ns * 1000.0))),
      m_stats(basename()) {
    dma_out.bind(router.in);
    router.bind_local(mem.in);
    for (auto* s : std::initializer_list<stats::stat*>{&m_copies, &m_copy_bytes, &m_reduces, &m_reduce_bytes,
                                                       &m_reduce_busy, &m_dma_busy})
        m_stats.add(*s);
    m_stats.add(router.stats());
}

uint64_t light_chip::copy(uint64_t src_local, uint64_t dst_global, uint64_t bytes) {
    // TLM lengths are 32-bit: larger copies go as several transfers, back to back through the DMA.
    constexpr uint64_t MAX_SEG = uint64_t(1) << 30;
    uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t done = now;
    ++m_copies;
    m_copy_bytes += double(bytes);
    for (uint64_t off = 0; off < bytes || (bytes == 0 && off == 0); off += MAX_SEG) {
        uint64_t n = std::min(MAX_SEG, bytes - off);
        unsigned char* data = nullptr;
        if (m_p.functional) {
            std::vector<uint8_t>& buf = shared_staging().a;
            buf.resize(n);
            if (!mem.store().contains(src_local + off, n))
                SC_REPORT_ERROR(name(), "DMA source outside the chip's memory");
            mem.store().read(src_local + off, buf.data(), n);
            data = buf.data();
        }
        m_dma.forget_before(now);
        link::flight f = m_dma.reserve({now, now}, n);
        link::transfer_ext ext;
        ext.tail_ps = f.tail_ps;
        m_gp.set_command(tlm::TLM_WRITE_COMMAND);
        m_gp.set_address(dst_global + off);
        m_gp.set_data_ptr(data);
        m_gp.set_data_length(unsigned(n));
        m_gp.set_streaming_width(unsigned(n));
        m_gp.set_byte_enable_ptr(nullptr);
        m_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        m_gp.set_extension(&ext);
        sc_time delay = sc_time::from_value(f.head_ps - now);
        dma_out->b_transport(m_gp, delay);
        m_gp.clear_extension(&ext);
        if (m_gp.get_response_status() != tlm::TLM_OK_RESPONSE)
            SC_REPORT_ERROR(name(), ("DMA write failed: " + tlmx::describe(m_gp) + ": " +
                                     m_gp.get_response_string())
                                        .c_str());
        done = std::max<uint64_t>(done, now + delay.value());
        if (bytes == 0) break;
    }
    return done;
}

uint64_t light_chip::reduce(uint64_t dst_local, uint64_t src_local, uint64_t bytes, numerics::dtype t) {
    uint64_t now = sc_core::sc_time_stamp().value();
    ++m_reduces;
    m_reduce_bytes += double(bytes);
    if (m_p.functional) {
        auto& st = mem.store();
        if (!st.contains(dst_local, bytes) || !st.contains(src_local, bytes))
            SC_REPORT_ERROR(name(), "reduce operand outside the chip's memory");
        staging& g = shared_staging();
        g.a.resize(bytes);
        g.b.resize(bytes);
        st.read(dst_local, g.a.data(), bytes);
        st.read(src_local, g.b.data(), bytes);
        // The reference executor's own arithmetic (one rounding per reduce step), so results match bit for bit.
        collective::reduce_into(t, g.a.data(), g.b.data(), bytes / numerics::size_of(t), g.fa, g.fb);
        st.write(dst_local, g.a.data(), bytes);
    }
    // FCFS on the reduction engine at its rate for this type (rate changes per call: configure each time).
    m_reduce.configure(m_p.reduce_gbps(t), 0);
    return m_reduce.reserve(now, m_p.reduce_booked_bytes(bytes, t)) + m_reduce_lat_ps;
}

void light_chip::load(uint64_t local, const void* data, uint64_t bytes) {
    if (!m_p.functional) return;
    if (!mem.store().contains(local, bytes)) SC_REPORT_ERROR(name(), "load outside the chip's memory");
    mem.store().write(local, data, bytes);
}

void light_chip::dump(uint64_t local, void* data, uint64_t bytes) {
    if (!m_p.functional) {
        std::memset(data, 0, bytes);
        return;
    }
    if (!mem.store().contains(local, bytes)) SC_REPORT_ERROR(name(), "dump outside the chip's memory");
    mem.store().read(local, data, bytes);
}

}  // namespace trnsim::chip_light
