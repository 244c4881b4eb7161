// The C++ compute back end of the Tensor Engine: closed-form timing (te_timing) and host-speed arithmetic
// (pe_array), with the same interface as the Verilated RTL back end.
#pragma once
#include <deque>
#include <future>

#include <systemc>

#include "models/tensor_engine/compute_pool.h"
#include "models/tensor_engine/te_config.h"
#include "models/tensor_engine/te_backend_if.h"
#include "models/tensor_engine/te_timing.h"
#include "tlm/scheduler.h"

namespace trnsim::te {

// Conversions between simulated time and Tensor Engine cycles counted from time zero.
struct te_clock {
    double ghz;
    uint64_t cycle_at_or_after(const sc_core::sc_time& t) const;
    sc_core::sc_time time_of(uint64_t cycle) const;
};

class te_backend_model : public sc_core::sc_module, public te_backend_if {
public:
    // `pool` (optional, shared by the chip's engines) computes results on host threads while simulation goes on.
    te_backend_model(sc_core::sc_module_name name, const te_config& cfg, compute_pool* pool = nullptr);
    void submit(te_job&& job) override;

    // Computes job.out from job's operands (decode + pe_array); shared with the co-simulation scoreboard.
    static void compute(te_job& job);

private:
    void completion_thread();

    const te_config& m_cfg;
    te_timing m_timing;
    te_clock m_clock;
    compute_pool* m_pool;
    struct pending {
        te_job job;
        std::future<void> result;
    };
    std::deque<pending> m_pending;  // in completion order (the array finishes instructions in order)
    sc_core::sc_event m_pushed;
    tlmx::timed_thread m_submit_clock, m_completion_clock;
};

} // namespace trnsim::te
