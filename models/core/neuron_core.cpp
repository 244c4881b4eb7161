#include "models/core/neuron_core.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tlm/ext_error.h"
#include "tlm/time.h"

namespace trnsim::core {

neuron_core::neuron_core(sc_core::sc_module_name name, const core_config& cfg, te::te_backend_if& backend,
                         const std::vector<tlmx::fault_spec>& faults)
    : sc_module(name), local("local"), sbuf("sbuf", cfg.sbuf), psum("psum", cfg.psum), sem_regs("sem_regs"), m_cfg(cfg),
      m_te("te", cfg.te, backend), m_ve("vector", cfg.vector, cfg.sbuf.partitions),
      m_se("scalar", cfg.scalar, cfg.sbuf.partitions), m_stats(basename()) {
    local.map(cfg.sbuf_base, cfg.sbuf.size(), 0, std::string(basename()) + ".sbuf");
    local.map(cfg.psum_base, cfg.psum.size(), 1, std::string(basename()) + ".psum");
    local.map(cfg.sem_base, core_config::SEM_WINDOW_BYTES, 2, std::string(basename()) + ".semaphores");
    local.out.bind(sbuf.in);
    local.out.bind(psum.in);
    local.out.bind(sem_regs);
    sem_regs.register_b_transport(this, &neuron_core::sem_transport);
    sem_regs.register_transport_dbg(this, &neuron_core::sem_debug);
    m_te.out.bind(local.in);
    m_ve.out.bind(local.in);
    m_se.out.bind(local.in);
    const auto all_engines = tlmx::faults_under(faults, "dma");  // "dma" (every engine) and "dmaN"
    for (uint32_t e = 0; e < cfg.dma.engines; ++e) {
        std::vector<tlmx::fault_spec> mine;
        for (const auto& f : all_engines)
            if (f.target.empty()) mine.push_back(f);
        for (const auto& f : faults)
            if (f.target == "dma" + std::to_string(e)) {
                mine.push_back(f);
                mine.back().target.clear();
            }
        dma.push_back(std::make_unique<dma::dma_engine>(("dma" + std::to_string(e)).c_str(), cfg.dma, mine));
    }
    if (cfg.signals)
        for (uint32_t s = 0; s < cfg.traced_semaphores; ++s)
            m_sem_waves.push_back(std::make_unique<sc_core::sc_signal<uint64_t, sc_core::SC_UNCHECKED_WRITERS>>(
                ("sem" + std::to_string(s)).c_str()));
    m_stats.add(m_register_signals);
    m_stats.add(m_dma_instructions);
    m_stats.add(m_checksums);
    m_stats.add(m_checksum_bytes);
    m_stats.add(m_te.stats());
    m_stats.add(m_ve.stats());
    m_stats.add(m_se.stats());
    m_stats.add(sbuf.stats());
    m_stats.add(psum.stats());
    m_stats.add(local.stats());
    for (auto& d : dma) m_stats.add(d->stats());
}

void neuron_core::load(core_program prog) {
    auto fail = [&](const std::string& q, size_t i, const std::string& why) {
        throw std::invalid_argument(std::string(name()) + "." + q + " instruction #" + std::to_string(i) + ": " + why);
    };
    auto check_sync = [&](const std::string& q, size_t i, const instruction& in) {
        for (auto& w : in.waits)
            if (w.sem >= prog.semaphores)
                fail(q, i, "waits on semaphore " + std::to_string(w.sem) + " but the program has " +
                               std::to_string(prog.semaphores));
        if (in.signal >= int32_t(prog.semaphores))
            fail(q, i, "signals semaphore " + std::to_string(in.signal) + " but the program has " +
                           std::to_string(prog.semaphores));
    };
    for (size_t i = 0; i < prog.te.size(); ++i) {
        const auto& in = prog.te[i];
        if (in.op != opcode::matmul) fail("te", i, "the Tensor Engine queue runs only MATMUL instructions");
        check_sync("te", i, in);
        std::string why = m_te.check(in.mm);
        if (!why.empty()) fail("te", i, why);
    }
    for (size_t q = 0; q < prog.dma.size(); ++q)
        for (size_t i = 0; i < prog.dma[q].size(); ++i) {
            const auto& in = prog.dma[q][i];
            std::string qn = "dma_queue" + std::to_string(q);
            if (in.op != opcode::dma) fail(qn, i, "a DMA queue runs only DMA instructions");
            check_sync(qn, i, in);
            std::string why = dma::validate(in.dma, m_cfg.dma.align_bytes);
            if (!why.empty()) fail(qn, i, "bad descriptor " + dma::to_string(in.dma) + ": " + why);
        }
    auto check_vec = [&](const std::string& qn, const std::vector<instruction>& q, opcode op, const ve::vector_engine& e) {
        for (size_t i = 0; i < q.size(); ++i) {
            const auto& in = q[i];
            if (in.op != op) fail(qn, i, "the " + qn + " queue runs only " + (op == opcode::vector ? "VECTOR" : "SCALAR") + " instructions");
            check_sync(qn, i, in);
            std::string why = e.check(in.vec);
            if (!why.empty()) fail(qn, i, why);
        }
    };
    check_vec("vector", prog.vector, opcode::vector, m_ve);
    check_vec("scalar", prog.scalar, opcode::scalar, m_se);
    m_prog = std::move(prog);
    m_sems = std::vector<semaphore>(m_prog.semaphores);
    m_in_flight_signals.assign(m_prog.semaphores, 0);
    m_queues.clear();
    m_queues.push_back({"te", &m_prog.te});
    for (size_t q = 0; q < m_prog.dma.size(); ++q) m_queues.push_back({"dma_queue" + std::to_string(q), &m_prog.dma[q]});
    const size_t vq = m_queues.size();
    m_queues.push_back({"vector", &m_prog.vector});
    m_queues.push_back({"scalar", &m_prog.scalar});
    // Spawned processes are named after the core (load() may run outside the module's construction context).
    std::string prefix = name();
    for (auto& ch : prefix)
        if (ch == '.') ch = '_';
    sc_core::sc_spawn(sc_bind(&neuron_core::te_thread, this), (prefix + "_te_queue").c_str());
    for (size_t q = 0; q < m_prog.dma.size(); ++q)
        sc_core::sc_spawn(sc_bind(&neuron_core::dma_thread, this, q + 1),
                          (prefix + "_dma_queue" + std::to_string(q)).c_str());
    if (!m_prog.vector.empty())
        sc_core::sc_spawn(sc_bind(&neuron_core::vec_thread, this, vq, std::ref(m_ve), opcode::vector),
                          (prefix + "_vector_queue").c_str());
    if (!m_prog.scalar.empty())
        sc_core::sc_spawn(sc_bind(&neuron_core::vec_thread, this, vq + 1, std::ref(m_se), opcode::scalar),
                          (prefix + "_scalar_queue").c_str());
}

void neuron_core::wait_for(queue_state& q, const instruction& in) {
    for (const auto& w : in.waits) {
        q.waiting = &w;
        while (m_sems[w.sem].value < w.value) sc_core::wait(m_sems[w.sem].changed);
    }
    q.waiting = nullptr;
}

void neuron_core::signal(int32_t sem) {
    m_last_completion = sc_core::sc_time_stamp();
    if (sem < 0) return;
    --m_in_flight_signals[size_t(sem)];
    bump(uint32_t(sem));
}

void neuron_core::bump(uint32_t sem) {
    ++m_sems[sem].value;
    m_sems[sem].changed.notify();
    if (sem < m_sem_waves.size()) m_sem_waves[sem]->write(m_sems[sem].value);
}

// The registers a transaction covers, or false (with the response set) if it is not a whole number of registers of
// the loaded program's semaphores.
bool neuron_core::sem_access(tlm::tlm_generic_payload& gp, uint32_t& first, uint32_t& count) {
    const uint64_t a = gp.get_address(), len = gp.get_data_length(), w = core_config::SEM_REGISTER_BYTES;
    if (a % w || len % w || len == 0 || gp.get_byte_enable_ptr() || gp.get_streaming_width() < len) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    if (a / w + len / w > m_sems.size()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    first = uint32_t(a / w);
    count = uint32_t(len / w);
    return true;
}

void neuron_core::sem_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    uint32_t first = 0, count = 0;
    if (!sem_access(gp, first, count)) {
        tlmx::set_error(gp, gp.get_response_status(),
                        std::string(name()) + ".sem_regs: " +
                            (gp.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE
                                 ? "beyond the " + std::to_string(m_sems.size()) + " semaphores of the loaded program"
                                 : "not whole 8-byte registers"));
        return;
    }
    if (gp.is_read()) {
        sem_debug(gp);
    } else if (gp.is_write()) {
        const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
        for (uint32_t s = first; s < first + count; ++s) {
            m_register_writes.emplace_back(at, s);
            std::push_heap(m_register_writes.begin(), m_register_writes.end(), std::greater<>());
        }
        tlmx::scheduler::get().call_at(tlmx::to_ps(at), m_rank, this);
    } else {
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned neuron_core::sem_debug(tlm::tlm_generic_payload& gp) {
    uint32_t first = 0, count = 0;
    if (!gp.is_read() || !sem_access(gp, first, count)) return 0;
    for (uint32_t k = 0; k < count; ++k) {
        uint64_t v = m_sems[first + k].value;
        for (unsigned b = 0; b < core_config::SEM_REGISTER_BYTES; ++b)
            gp.get_data_ptr()[k * core_config::SEM_REGISTER_BYTES + b] = uint8_t(v >> (8 * b));
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return unsigned(count * core_config::SEM_REGISTER_BYTES);
}

void neuron_core::on_time(uint64_t) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (!m_register_writes.empty() && m_register_writes.front().first <= now) {
        const uint32_t s = m_register_writes.front().second;
        std::pop_heap(m_register_writes.begin(), m_register_writes.end(), std::greater<>());
        m_register_writes.pop_back();
        ++m_register_signals;
        m_last_completion = now;
        bump(s);
    }
}

void neuron_core::trace(sc_core::sc_trace_file* tf) const {
    m_te.trace(tf);
    for (const auto& d : dma) d->trace(tf);
    for (const auto& s : m_sem_waves) sc_core::sc_trace(tf, *s, s->name());
}

void neuron_core::te_thread() {
    queue_state& q = m_queues[0];
    for (; q.pc < q.instrs->size(); ++q.pc) {
        const instruction& in = (*q.instrs)[q.pc];
        wait_for(q, in);
        if (in.signal >= 0) ++m_in_flight_signals[size_t(in.signal)];
        m_te.matmul(in.mm, [this, sem = in.signal, idx = q.pc, &in, t0 = sc_core::sc_time_stamp()] {
            ++m_te_done;
            if (!m_observers.empty())
                m_observers.notify({this, 0, &m_queues[0].name, idx, &in, t0, sc_core::sc_time_stamp()});
            signal(sem);
        });
    }
}

void neuron_core::dma_thread(size_t queue) {
    queue_state& q = m_queues[queue];
    for (; q.pc < q.instrs->size(); ++q.pc) {
        const instruction& in = (*q.instrs)[q.pc];
        wait_for(q, in);
        run_dma(queue, q, in);
    }
}

void neuron_core::vec_thread(size_t queue, ve::vector_engine& eng, opcode) {
    queue_state& q = m_queues[queue];
    for (; q.pc < q.instrs->size(); ++q.pc) {
        const instruction& in = (*q.instrs)[q.pc];
        wait_for(q, in);
        if (in.signal >= 0) ++m_in_flight_signals[size_t(in.signal)];
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        eng.execute(in.vec);
        ++m_vec_done;
        if (!m_observers.empty()) m_observers.notify({this, queue, &q.name, q.pc, &in, t0, sc_core::sc_time_stamp()});
        signal(in.signal);
    }
}

void neuron_core::run_dma(size_t queue, const queue_state& q, const instruction& in) {
    auto parts = dma::split_across_engines(in.dma, uint32_t(dma.size()), m_cfg.dma.max_burst);
    auto remaining = std::make_shared<size_t>(parts.size());
    uint32_t first = m_next_engine;
    m_next_engine = (m_next_engine + uint32_t(parts.size())) % uint32_t(dma.size());
    std::shared_ptr<dma::checksum_state> check;
    if (m_cfg.dma.checksum && !in.dma.reduce) check = std::make_shared<dma::checksum_state>();
    std::string where = q.name + " instruction #" + std::to_string(q.pc);
    if (in.signal >= 0) ++m_in_flight_signals[size_t(in.signal)];
    for (auto& [e, d] : parts)
        dma[(first + e) % dma.size()]->submit(d, [this, remaining, check, where, desc = in.dma, sem = in.signal, queue,
                                                  index = q.pc, &in, t0 = sc_core::sc_time_stamp()] {
            if (--*remaining) return;
            if (check) verify(where, desc, *check);
            ++m_dma_instructions;
            if (!m_observers.empty())
                m_observers.notify({this, queue, &m_queues[queue].name, index, &in, t0, sc_core::sc_time_stamp()});
            signal(sem);
        }, check);
}

void neuron_core::verify(const std::string& where, const dma::dma_descriptor& d, const dma::checksum_state& c) {
    auto hex = [](uint64_t v) {
        char b[24];
        std::snprintf(b, sizeof b, "0x%016llx", (unsigned long long)v);
        return std::string(b);
    };
    std::string msg;
    if (d.checksum && c.source != *d.checksum)
        msg = "checksum mismatch at the source: the data read has checksum " + hex(c.source) + ", the descriptor carries " +
              hex(*d.checksum) + " (corrupted at rest or on the read path)";
    else if (!c.unverifiable && c.destination != c.source)
        msg = "checksum mismatch at the destination: the data read has checksum " + hex(c.source) +
              ", the destination holds " + hex(c.destination) + " (corrupted in flight or when written)";
    if (!msg.empty()) {
        msg = where + ": " + msg + "; descriptor " + dma::to_string(d);
        SC_REPORT_ERROR(name(), msg.c_str());
        return;
    }
    if (c.unverifiable) return;  // a destination without backdoor access: counted as neither
    ++m_checksums;
    m_checksum_bytes += double(c.bytes);
}

std::vector<std::string> neuron_core::stuck() const {
    std::vector<std::string> out;
    for (const auto& q : m_queues) {
        if (q.pc >= q.instrs->size()) continue;
        std::string s = std::string(name()) + "." + q.name + " stopped at instruction #" + std::to_string(q.pc) + " of " +
                        std::to_string(q.instrs->size());
        if (q.waiting) {
            const uint32_t sem = q.waiting->sem;
            s += ", waiting for semaphore " + std::to_string(sem) + " >= " + std::to_string(q.waiting->value) +
                 " (it is " + std::to_string(m_sems[sem].value);
            // Signals still to come: instructions issued but not completed, and those not yet issued.
            uint64_t pending = m_in_flight_signals[sem];
            for (const auto& o : m_queues)
                for (size_t i = o.pc; i < o.instrs->size(); ++i)
                    if ((*o.instrs)[i].signal == int32_t(sem)) ++pending;
            pending += uint64_t(std::count_if(m_register_writes.begin(), m_register_writes.end(),
                                              [&](const auto& w) { return w.second == sem; }));
            const bool short_of = m_sems[sem].value + pending < q.waiting->value;
            if (short_of)
                s += pending ? "; only " + std::to_string(pending) + " unfinished instructions signal it" :
                               "; no unfinished instruction signals it";
            s += ")";
            if (short_of) s += ", and no write to its register (core-local " + tlmx::hex(m_cfg.sem_register(sem)) + ") is on its way";
        }
        out.push_back(s);
    }
    for (const auto& d : dma)
        if (d->queued()) out.push_back(std::string(d->name()) + " has " + std::to_string(d->queued()) + " unfinished descriptors" +
                                       d->in_flight_text());
    return out;
}

uint64_t neuron_core::progress() const {
    uint64_t n = uint64_t(m_dma_instructions.value()) + m_te_done + m_vec_done;
    for (const auto& d : dma) n += d->bytes_landed();
    return n;
}

} // namespace trnsim::core
