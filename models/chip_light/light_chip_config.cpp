#include "models/chip_light/light_chip_config.h"

#include <algorithm>
#include <cmath>

#include "models/link/global_address.h"

namespace trnsim::chip_light {

double light_chip_config::reduce_gbps(numerics::dtype t) const {
    size_t es = numerics::size_of(t);
    double lanes = es >= 4 ? ve_lanes_32bit : ve_lanes_16bit;
    double ve = ve_clock_ghz * lanes * double(reduce_engines) * double(es);
    return std::min(ve, hbm_gbps / 3.0);
}

std::string light_chip_config::check() const {
    if (hbm_bytes == 0 || hbm_bytes > link::LOCAL_MASK + 1) return "hbm_bytes must be in 1 .. 4 TiB (42 address bits)";
    if (!(hbm_gbps > 0)) return "hbm_gbps must be > 0";
    if (!(hbm_latency_ns >= 0)) return "hbm_latency_ns must be >= 0";
    if (!(dma_gbps > 0)) return "dma_gbps must be > 0";
    if (!(dma_latency_ns >= 0)) return "dma_latency_ns must be >= 0";
    if (!(ve_clock_ghz > 0)) return "ve_clock_ghz must be > 0";
    if (ve_lanes_32bit == 0 || ve_lanes_16bit == 0) return "ve_lanes_32bit and ve_lanes_16bit must be > 0";
    if (reduce_engines == 0) return "reduce_engines must be > 0";
    if (!(reduce_latency_ns >= 0)) return "reduce_latency_ns must be >= 0";
    if (!(signal_ns >= 0) || !(remote_signal_ns >= 0)) return "signal_ns and remote_signal_ns must be >= 0";
    return "";
}

}  // namespace trnsim::chip_light
