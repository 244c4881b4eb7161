#include "models/chip_light/light_chip_config.h"

#include <algorithm>
#include <cmath>

#include "models/link/global_address.h"

namespace trnsim::chip_light {

double light_chip_config::reduce_gbps(numerics::dtype t) const {
    size_t es = numerics::size_of(t);
    double lanes = es >= 4 ? ve_lanes_32bit : ve_lanes_16bit;
    double ve = ve_clock_ghz * lanes * double(reduce_engines) * double(es);
    return std::min(ve, reduce_hbm_efficiency * hbm_gbps / 3.0);
}

uint64_t light_chip_config::reduce_booked_bytes(uint64_t bytes, numerics::dtype t) const {
    if (reduce_tile_elements == 0) return bytes;
    const uint64_t tile = reduce_tile_elements * numerics::size_of(t), tiles = (bytes + tile - 1) / tile;
    const uint64_t busiest = std::min(bytes, (tiles + reduce_tiles - 1) / reduce_tiles * tile);
    return busiest * reduce_tiles;
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
    if (!(reduce_hbm_efficiency > 0 && reduce_hbm_efficiency <= 1)) return "reduce_hbm_efficiency must be in (0, 1]";
    if (reduce_tiles == 0) return "reduce_tiles must be > 0";
    if (!(signal_ns >= 0) || !(remote_signal_ns >= 0)) return "signal_ns and remote_signal_ns must be >= 0";
    return "";
}

}  // namespace trnsim::chip_light
