// The stimulus-module pattern for SystemC tests: an initiator module whose SC_THREAD runs the test scenario.
// Build the design, create one of these bound to it, call run(); the scenario's failures propagate.
#pragma once
#include <exception>
#include <functional>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/payload_pool.h"
#include "tlm/transport.h"

namespace trnsim::test {

class stimulus : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<stimulus> out;
    tlmx::payload_pool pool;

    // With stop_when_done, the simulation stops when the scenario ends (the usual single-initiator bench).
    stimulus(sc_core::sc_module_name n, std::function<void(stimulus&)> body, bool stop_when_done = true)
        : sc_module(n), out("out"), m_body(std::move(body)), m_stop(stop_when_done) {
        SC_HAS_PROCESS(stimulus);
        SC_THREAD(thread);
    }
    // Runs the simulation to the end; rethrows what the scenario threw.
    void run() {
        sc_core::sc_start();
        if (m_error) std::rethrow_exception(m_error);
        REQUIRE_DONE();
    }
    bool done = false;

    tlm::tlm_response_status read(uint64_t a, void* d, uint64_t n, sc_core::sc_time& delay) {
        return tlmx::transport(out, pool, tlm::TLM_READ_COMMAND, a, d, n, delay);
    }
    tlm::tlm_response_status write(uint64_t a, const void* d, uint64_t n, sc_core::sc_time& delay) {
        return tlmx::transport(out, pool, tlm::TLM_WRITE_COMMAND, a, const_cast<void*>(d), n, delay);
    }

private:
    void REQUIRE_DONE() {
        if (!done) throw std::runtime_error("stimulus thread did not finish (deadlock?)");
    }
    void thread() {
        try {
            m_body(*this);
            done = true;
        } catch (...) {
            m_error = std::current_exception();
        }
        if (m_stop || m_error) sc_core::sc_stop();
    }
    std::function<void(stimulus&)> m_body;
    bool m_stop;
    std::exception_ptr m_error;
};

} // namespace trnsim::test
