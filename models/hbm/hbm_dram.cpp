#include "models/hbm/hbm_dram.h"

#include <cmath>
#include <cstring>

#include "tlm/ext_error.h"
#include "tlm/scheduler.h"
#include "tlm/time.h"

namespace trnsim::hbm {

using namespace sc_core;

namespace {
hbm_config standalone() {
    hbm_config c;
    c.model = "dram";
    return c;
}
const hbm_dram_config& dram_of(const hbm_config& cfg) {
    if (!cfg.dram) throw std::invalid_argument("hbm_dram: hbm_config::dram is not set (chip.hbm.model \"dram\")");
    return *cfg.dram;
}
} // namespace

hbm_dram::hbm_dram(sc_module_name name, const hbm_config& cfg) : hbm_dram(name, dram_of(cfg), cfg) {}

hbm_dram::hbm_dram(sc_module_name name, const hbm_dram_config& cfg) : hbm_dram(name, cfg, standalone()) {}

hbm_dram::hbm_dram(sc_module_name name, const hbm_dram_config& dram, const hbm_config& cfg)
    : hbm_model(name, cfg.functional, cfg.faults, dram.spec.pcs_per_stack() * dram.stacks), m_sys(dram, basename()),
      m_store(m_sys.capacity()), m_tck_ps(dram.spec.tck_ns * 1000.0), m_peq(this, &hbm_dram::peq_cb) {
    register_nb();
    m_faults.add_stats(m_sys.stats());
    m_sys.set_sink(this);
    SC_METHOD(wake);
    sensitive << m_wake;
    dont_initialize();
    tlmx::scheduler::note_blocking_target();  // b_transport waits for the controller
}

sc_time hbm_dram::time_of(cycle_t c) const { return sc_time(std::round(double(c) * m_tck_ps), SC_PS); }

cycle_t hbm_dram::cycle_of(const sc_time& t) const {
    double ps = t.to_seconds() * 1e12;
    return cycle_t(std::floor((ps + 0.5) / m_tck_ps));
}

void hbm_dram::set_command_trace(command_trace f) {
    if (!f) {
        m_sys.set_observer(nullptr);
        return;
    }
    m_sys.set_observer([this, f](const command_record& r) { f(r, time_of(r.cycle)); });
}

bool hbm_dram::check(tlm::tlm_generic_payload& trans) const {
    uint64_t a = trans.get_address(), n = trans.get_data_length();
    if (n == 0 || a >= capacity() || n > capacity() - a) {
        trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (trans.get_streaming_width() < n) {
        trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    return true;
}

bool hbm_dram::route(tlm::tlm_generic_payload& trans) {
    m_pcs.clear();
    if (m_faults.empty() && m_observers.empty()) return true;
    const double now_ns = sc_time_stamp().to_seconds() * 1e9;
    const auto& map = m_sys.mapper();
    const uint64_t bb = map.burst_bytes(), a = trans.get_address(), n = trans.get_data_length();
    for (uint64_t b = a & ~(bb - 1); b < a + n; b += bb) {
        size_t pc = map.pc_index(map.decode(b));
        if (!m_faults.empty()) {
            std::string why;
            pc = m_faults.serving_channel(pc, b / bb, now_ns, why);
            if (pc == hbm_faults::NONE) {
                tlmx::set_error(trans, tlm::TLM_GENERIC_ERROR_RESPONSE, why);
                return false;
            }
        }
        m_pcs.push_back(pc);
    }
    return true;
}

void hbm_dram::access_data(tlm::tlm_generic_payload& trans) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    if (!m_functional) return;
    uint64_t a = trans.get_address(), n = trans.get_data_length();
    unsigned char* d = trans.get_data_ptr();
    const unsigned char* be = trans.get_byte_enable_ptr();
    unsigned bel = trans.get_byte_enable_length();
    if (trans.is_write()) {
        if (!be) {
            m_store.write(a, d, n);
        } else {
            for (uint64_t i = 0; i < n; ++i)
                if (be[i % bel] == TLM_BYTE_ENABLED) m_store.write(a + i, d + i, 1);
        }
    } else if (trans.is_read()) {
        if (!be) {
            m_store.read(a, d, n);
        } else {
            for (uint64_t i = 0; i < n; ++i)
                if (be[i % bel] == TLM_BYTE_ENABLED) m_store.read(a + i, d + i, 1);
        }
    }
    if (!m_faults.empty())
        m_faults.corrupt(trans, m_pcs, m_sys.mapper().burst_bytes(), m_store, sc_time_stamp().to_seconds() * 1e9);
}

uint32_t hbm_dram::submit(tlm::tlm_generic_payload& trans, sc_event* lt_done) {
    uint32_t tag;
    if (m_free.empty()) {
        tag = uint32_t(m_entries.size());
        m_entries.emplace_back();
    } else {
        tag = m_free.back();
        m_free.pop_back();
    }
    entry& e = m_entries[tag];
    e.trans = &trans;
    e.lt_done = lt_done;
    e.free = false;
    e.arrival_ps = tlmx::to_ps(sc_time_stamp());
    e.slow_ps = m_faults.empty() ? 0 : m_faults.added_latency_ps(m_pcs, double(e.arrival_ps) / 1000.0);
    e.pcs.swap(m_pcs);
    // A request arriving during cycle c is served from cycle c + 1 on (commands of cycle c may already be issued).
    cycle_t arrival = cycle_of(sc_time_stamp()) + 1;
    m_sys.submit(tag, trans.is_write(), trans.get_address(), trans.get_data_length(), arrival,
                 e.pcs.empty() ? nullptr : e.pcs.data());
    schedule_wake();
    return tag;
}

void hbm_dram::schedule_wake() {
    cycle_t next = m_sys.next_event();
    if (next == NEVER) return;
    sc_time t = time_of(next), now = sc_time_stamp();
    m_wake.notify(t > now ? t - now : SC_ZERO_TIME);
}

void hbm_dram::wake() {
    m_sys.advance(cycle_of(sc_time_stamp()) + 1);  // every command up to and including the current cycle
    schedule_wake();
}

void hbm_dram::accepted(uint64_t tag, cycle_t at) {
    entry& e = m_entries[tag];
    if (e.lt_done) return;
    sc_time t = time_of(at), now = sc_time_stamp();
    m_peq.notify(*e.trans, tlm::END_REQ, t > now ? t - now : SC_ZERO_TIME);
}

void hbm_dram::completed(uint64_t tag, cycle_t at) {
    entry& e = m_entries[tag];
    if (!m_observers.empty()) notify_observers(e, at);
    sc_time t = time_of(at) + tlmx::from_ps(e.slow_ps), now = sc_time_stamp();
    sc_time d = t > now ? t - now : SC_ZERO_TIME;
    if (e.lt_done) e.lt_done->notify(d);
    else m_peq.notify(*e.trans, tlm::BEGIN_RESP, d);
    e.trans = nullptr;
    e.lt_done = nullptr;
    e.free = true;
    e.pcs.clear();
    m_free.push_back(uint32_t(tag));
}

void hbm_dram::notify_observers(const entry& e, cycle_t done) {
    // One event per run of consecutive bursts on one pseudo-channel.
    const tlm::tlm_generic_payload& tr = *e.trans;
    const uint64_t bb = m_sys.mapper().burst_bytes(), a = tr.get_address(), end = a + tr.get_data_length();
    const uint64_t end_ps = tlmx::to_ps(time_of(done)) + e.slow_ps;
    uint64_t first = a & ~(bb - 1);
    for (size_t i = 0; i < e.pcs.size();) {
        size_t j = i + 1;
        while (j < e.pcs.size() && e.pcs[j] == e.pcs[i]) ++j;
        uint64_t lo = std::max(a, first + i * bb), hi = std::min(end, first + j * bb);
        m_observers.notify({uint32_t(e.pcs[i]), lo, hi - lo, tr.is_read(), e.arrival_ps, end_ps});
        i = j;
    }
}

void hbm_dram::b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
    // Synchronise first: requests must reach the controllers in time order.
    if (delay > SC_ZERO_TIME) {
        wait(delay);
        delay = SC_ZERO_TIME;
    }
    if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
        trans.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (!check(trans) || !route(trans)) return;
    access_data(trans);
    sc_event done;
    submit(trans, &done);
    wait(done);
}

tlm::tlm_sync_enum hbm_dram::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
        if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
            trans.set_response_status(tlm::TLM_OK_RESPONSE);
            phase = tlm::BEGIN_RESP;
            return tlm::TLM_COMPLETED;
        }
        if (!check(trans)) {
            phase = tlm::BEGIN_RESP;
            return tlm::TLM_COMPLETED;
        }
        if (trans.has_mm()) trans.acquire();
        m_peq.notify(trans, phase, delay);
        return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::END_RESP) {
        response_done(trans);
        return tlm::TLM_COMPLETED;
    }
    SC_REPORT_ERROR(name(), "nb_transport_fw: unexpected phase (only BEGIN_REQ and END_RESP)");
    return tlm::TLM_COMPLETED;
}

void hbm_dram::send_response(tlm::tlm_generic_payload& trans) {
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_time d = SC_ZERO_TIME;
    m_resp_busy = true;
    tlm::tlm_sync_enum s = in->nb_transport_bw(trans, phase, d);
    if (s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::END_RESP)) response_done(trans);
}

void hbm_dram::response_done(tlm::tlm_generic_payload& trans) {
    m_resp_busy = false;
    if (trans.has_mm()) trans.release();
    if (m_resp_queue.empty()) return;
    tlm::tlm_generic_payload* next = m_resp_queue.front();
    m_resp_queue.pop_front();
    send_response(*next);
}

void hbm_dram::peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase) {
    if (phase == tlm::BEGIN_REQ) {
        if (!route(trans)) {  // a disabled pseudo-channel: the error response goes out at once
            m_peq.notify(trans, tlm::BEGIN_RESP, SC_ZERO_TIME);
            return;
        }
        access_data(trans);
        submit(trans, nullptr);
    } else if (phase == tlm::END_REQ) {
        tlm::tlm_phase p = tlm::END_REQ;
        sc_time d = SC_ZERO_TIME;
        in->nb_transport_bw(trans, p, d);
    } else if (phase == tlm::BEGIN_RESP) {
        if (m_resp_busy) m_resp_queue.push_back(&trans);
        else send_response(trans);
    }
}

unsigned hbm_dram::transport_dbg(tlm::tlm_generic_payload& trans) {
    uint64_t a = trans.get_address(), n = trans.get_data_length();
    if (a >= capacity()) return 0;
    n = std::min<uint64_t>(n, capacity() - a);
    if (trans.is_write()) m_store.write(a, trans.get_data_ptr(), n);
    else if (trans.is_read()) m_store.read(a, trans.get_data_ptr(), n);
    else return 0;
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return unsigned(n);
}

void hbm_dram::finish() {
    if (m_finished) return;
    m_finished = true;
    // Requests still in flight stay unfinished (no callbacks after the simulation has ended).
    m_sys.set_sink(nullptr);
    m_sys.finish(cycle_of(sc_time_stamp()), false);
}

void hbm_dram::end_of_simulation() { finish(); }

} // namespace trnsim::hbm
