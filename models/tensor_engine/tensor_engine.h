// The Tensor Engine as seen by its core: reads a MATMUL's operands from SBUF through TLM, hands them to the compute
// back end (C++ model or RTL), and writes (or near-memory accumulates) the results into PSUM through TLM.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/numerics/dtype.h"
#include "models/tensor_engine/matmul_args.h"
#include "models/tensor_engine/te_config.h"
#include "models/tensor_engine/te_backend_if.h"
#include "models/tensor_engine/te_timing.h"
#include "tlm/observer.h"
#include "tlm/payload_pool.h"
#include "tlm/scheduler.h"
#include "tlm/stats.h"

namespace trnsim::te {

class tensor_engine;

// One completed MATMUL as an observer sees it: the array's schedule (weight load, moving stream, drain) in
// simulated time, and where its operands and results were.
struct matmul_event {
    const tensor_engine* engine;
    const matmul_args* args;
    uint64_t id;  // engine-local instruction number
    sc_core::sc_time load_start, load_end, stream_start, stream_end, done;
    sc_core::sc_time retired;  // results written to PSUM (the instruction's semaphore fires now)
};

class tensor_engine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<tensor_engine> out;  // to the core's SBUF / PSUM

    tensor_engine(sc_core::sc_module_name name, const te_config& cfg, te_backend_if& backend);

    // Empty if the engine can execute `a`, else why not (shape limits of the array).
    std::string check(const matmul_args& a) const;
    // Called from the core's TE queue thread: reads operands, submits, returns once the back end accepted it.
    // on_done runs once the results are in PSUM.
    void matmul(const matmul_args& a, std::function<void()> on_done);

    stats::group& stats() { return m_stats; }
    void observe(tlmx::observer_list<matmul_event>::callback cb) { m_observers.add(std::move(cb)); }
    // Adds this engine's signals (busy, MATMULs in flight) to a waveform; nothing when sim.signals is off.
    void trace(sc_core::sc_trace_file* tf) const override;
    double peak_macs_per_cycle(numerics::dtype t) const;
    const te_config& config() const { return m_cfg; }

private:
    void read_rows(uint64_t addr, uint64_t stride, uint64_t plane, uint32_t plane_rows, uint32_t rows,
                   uint64_t row_bytes, uint8_t* dst, sc_core::sc_time& delay);
    void writeback_thread();

    const te_config& m_cfg;
    te_backend_if& m_backend;
    te_timing m_limits;
    tlmx::payload_pool m_pool;
    struct finished {
        te_job job;
        matmul_args args;
        std::function<void()> on_done;
    };
    std::deque<finished> m_done;
    // Operand and result buffers of written-back jobs, reused by the next MATMULs: a tile of the same shape then
    // needs no allocation and no zero fill (every element is overwritten by the SBUF read or the back end).
    std::vector<te_job> m_spare;
    // Whether MATMULs carry operand and result bytes: functional runs and the RTL back end (which computes on pins).
    bool carries_data() const { return m_cfg.functional || m_cfg.impl == te_impl::rtl; }
    sc_core::sc_event m_done_ev;
    tlmx::timed_thread m_issue_clock, m_writeback_clock;  // timed waits of the issuing and write-back threads
    uint64_t m_next_id = 0;
    tlmx::observer_list<matmul_event> m_observers;
    struct waves {
        sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS> busy{"busy"};
        sc_core::sc_signal<uint32_t, sc_core::SC_UNCHECKED_WRITERS> in_flight{"in_flight"};
    };
    std::unique_ptr<waves> m_waves;  // only with sim.signals
    uint32_t m_in_flight = 0;
    void set_in_flight(uint32_t n);

    stats::group m_stats;
    stats::counter m_instructions{"instructions", "count", "MATMUL instructions completed"};
    stats::counter m_macs{"macs", "count", "useful multiply-accumulates"};
    stats::counter m_stream_cycles{"stream_cycles", "cycles", "cycles the moving port was occupied"};
    stats::counter m_capacity_macs{"capacity_macs", "count",
                                   "MACs the array could have done in the stream cycles (rows*cols*d per cycle)"};
    std::vector<std::unique_ptr<stats::counter>> m_macs_by_type;  // "macs_<dtype>", indexed by numerics::dtype
    stats::counter m_last_done_cycle{"last_done_cycle", "cycles", "completion cycle of the last instruction"};
};

} // namespace trnsim::te
