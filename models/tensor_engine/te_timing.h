// The Tensor Engine's cycle timing as a closed formula (docs/tensor_engine.md), plain C++.
// One instance tracks the pipeline state across consecutive instructions of one engine.
#pragma once
#include <algorithm>
#include <cstdint>

#include "models/numerics/dtype.h"
#include "models/tensor_engine/te_config.h"

namespace trnsim::te {

struct te_schedule {
    uint64_t load_start, load_end, stream_start, done;
};

class te_timing {
public:
    explicit te_timing(const te_config& cfg) : m_cfg(cfg) {}

    // Passes per moving column and PE rows used by an instruction of type t with contraction size k.
    uint32_t passes(numerics::dtype t) const { return t == numerics::dtype::fp32 ? m_cfg.fp32_passes : 1; }
    uint32_t macs_per_pe(numerics::dtype t) const { return double_row(t) ? 2 : 1; }
    uint32_t k_rows(numerics::dtype t, uint32_t k) const { return (k + macs_per_pe(t) - 1) / macs_per_pe(t); }
    uint64_t weight_load_cycles(numerics::dtype t, uint32_t k) const {
        return (k_rows(t, k) + m_cfg.ls_rows_per_cycle - 1) / m_cfg.ls_rows_per_cycle;
    }
    uint64_t stream_cycles(numerics::dtype t, uint32_t n) const {
        return std::max<uint64_t>(uint64_t(n) * passes(t), m_cfg.min_ii);
    }
    uint64_t drain_cycles() const { return uint64_t(m_cfg.rows) + m_cfg.cols + m_cfg.pipeline_latency; }

    // Schedules the next instruction whose operands are available at cycle `ready`.
    te_schedule schedule(numerics::dtype t, uint32_t k, uint32_t n, uint64_t ready) {
        te_schedule s;
        s.load_start = std::max({ready, m_load_end, m_stream_start});
        s.load_end = s.load_start + weight_load_cycles(t, k);
        s.stream_start = std::max(s.load_end, m_stream_start + m_stream_len);
        s.done = s.stream_start + stream_cycles(t, n) + drain_cycles();
        m_load_end = s.load_end;
        m_stream_start = s.stream_start;
        m_stream_len = stream_cycles(t, n);
        return s;
    }

    bool double_row(numerics::dtype t) const {
        return m_cfg.fp8_double_row && (t == numerics::dtype::fp8_e4m3 || t == numerics::dtype::fp8_e5m2);
    }

private:
    const te_config& m_cfg;
    uint64_t m_load_end = 0, m_stream_start = 0, m_stream_len = 0;
};

} // namespace trnsim::te
