// Validated runtime configuration of the energy model (chip.energy.*). Defaults and their sources: docs/energy.md.
// Every figure is an assumption unless docs/energy.md cites it; presets override what differs per generation.
#pragma once
#include <array>
#include <cstddef>

#include "models/numerics/dtype.h"

namespace trnsim::energy {

constexpr size_t DTYPES = sizeof(numerics::all_dtypes) / sizeof(numerics::all_dtypes[0]);

struct energy_config {
    // pJ per useful multiply-accumulate (FP32 accumulate included), indexed by numerics::dtype.
    static constexpr std::array<double, DTYPES> DEFAULT_MAC_PJ = {0.46, 0.20, 0.20, 0.20, 0.11, 0.11};
    static constexpr double DEFAULT_SBUF_READ_PJ_PER_BYTE = 0.50;
    static constexpr double DEFAULT_SBUF_WRITE_PJ_PER_BYTE = 0.60;
    static constexpr double DEFAULT_PSUM_READ_PJ_PER_BYTE = 0.30;
    static constexpr double DEFAULT_PSUM_WRITE_PJ_PER_BYTE = 0.35;
    static constexpr double DEFAULT_HBM_PJ_PER_BIT = 3.5;
    static constexpr double DEFAULT_DMA_PJ_PER_BYTE = 0.5;
    static constexpr double DEFAULT_NOC_PJ_PER_BYTE = 1.0;
    static constexpr double DEFAULT_LINK_PJ_PER_BIT = 5.0;
    static constexpr double DEFAULT_STATIC_W_PER_CORE = 20;
    static constexpr double DEFAULT_STATIC_MW_PER_PE = 0.3;
    static constexpr double DEFAULT_STATIC_W_CHIP = 100;

    std::array<double, DTYPES> mac_pj = DEFAULT_MAC_PJ;
    double sbuf_read_pj_per_byte = DEFAULT_SBUF_READ_PJ_PER_BYTE;
    double sbuf_write_pj_per_byte = DEFAULT_SBUF_WRITE_PJ_PER_BYTE;
    double psum_read_pj_per_byte = DEFAULT_PSUM_READ_PJ_PER_BYTE;   // also the read half of a near-memory accumulate
    double psum_write_pj_per_byte = DEFAULT_PSUM_WRITE_PJ_PER_BYTE;
    double hbm_pj_per_bit = DEFAULT_HBM_PJ_PER_BIT;                 // read or written, at the DRAM interface
    double dma_pj_per_byte = DEFAULT_DMA_PJ_PER_BYTE;               // DMA engine datapath, per byte moved
    double noc_pj_per_byte = DEFAULT_NOC_PJ_PER_BYTE;               // chip interconnect, per byte routed
    double link_pj_per_bit = DEFAULT_LINK_PJ_PER_BIT;               // chip-to-chip links (multi-chip platforms)
    double static_w_per_core = DEFAULT_STATIC_W_PER_CORE;           // leakage + clock tree + unmodelled engines
    double static_mw_per_pe = DEFAULT_STATIC_MW_PER_PE;             // Tensor Engine leakage per PE (scales with area)
    double static_w_chip = DEFAULT_STATIC_W_CHIP;                   // uncore: HBM PHY/refresh, NoC, IO, idle links
};

} // namespace trnsim::energy
