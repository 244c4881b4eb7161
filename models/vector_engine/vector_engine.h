// The Vector and Scalar engines of a NeuronCore (one class, two configs): an instruction reads its operand tiles from
// SBUF/PSUM through the core's router (real bytes, real bank contention), computes in FP32 with the plain-C++
// kernels (ve_kernels.h), and writes the result tile back through the router. Timing: the engine's cycles
// (static overhead + pipeline latency + streaming at elements_per_cycle) overlap the operand reads; the write
// follows. Instructions of one engine run one after another, in order.
#pragma once
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/vector_engine/ve_config.h"
#include "models/vector_engine/vec_args.h"
#include "tlm/payload_pool.h"
#include "tlm/scheduler.h"
#include "tlm/stats.h"

namespace trnsim::ve {

class vector_engine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<vector_engine> out;  // to the core's SBUF / PSUM

    // `partitions`: of the memories the engine addresses (bounds transposes and partition counts).
    vector_engine(sc_core::sc_module_name name, const ve_config& cfg, uint32_t partitions);

    // Empty if the engine can run `a`, else why not.
    std::string check(const vec_args& a) const;
    // Runs one instruction (from the core's queue thread); returns once the result is written.
    void execute(const vec_args& a);

    const ve_config& config() const { return m_cfg; }
    stats::group& stats() { return m_stats; }
    uint64_t done() const { return m_done; }

private:
    void read_tile(const operand& o, uint32_t parts, uint32_t free, std::vector<float>& dst, sc_core::sc_time& delay);
    void write_tile(const operand& o, uint32_t parts, uint32_t free, const std::vector<float>& src, sc_core::sc_time& delay);

    const ve_config& m_cfg;
    uint32_t m_partitions;
    tlmx::payload_pool m_pool;
    std::vector<uint8_t> m_raw;
    std::vector<float> m_a, m_b, m_o;
    uint64_t m_done = 0;
    tlmx::timed_thread m_clock;  // the timed wait of the thread running execute()
    stats::group m_stats;
    stats::counter m_instructions{"instructions", "count", "instructions completed"};
    stats::counter m_elements{"elements", "count", "input elements processed (parts x free per instruction)"};
    stats::counter m_busy_cycles{"busy_cycles", "cycles", "engine cycles of the instructions (overhead + latency + stream)"};
    stats::counter m_busy_ns{"busy_ns", "ns", "time from instruction start to result written"};
    stats::counter m_bytes_read{"bytes_read", "B", "operand bytes read from SBUF/PSUM"};
    stats::counter m_bytes_written{"bytes_written", "B", "result bytes written to SBUF/PSUM"};
};

} // namespace trnsim::ve
