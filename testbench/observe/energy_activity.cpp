#include "testbench/observe/energy_activity.h"

#include <stdexcept>

namespace trnsim::tb {

energy::activity chip_activity(const std::map<std::string, double>& stats, const std::string& prefix,
                               const platform::chip_config& chip, double seconds) {
    auto get = [&](const std::string& path) {
        auto it = stats.find(prefix + "." + path);
        if (it == stats.end()) throw std::out_of_range("energy: no statistic '" + prefix + "." + path + "'");
        return it->second;
    };
    energy::activity a;
    a.seconds = seconds;
    a.cores = chip.cores;
    a.pes = double(chip.core.te.rows) * chip.core.te.cols * chip.cores;
    for (uint32_t c = 0; c < chip.cores; ++c) {
        const std::string core = "core" + std::to_string(c) + ".";
        for (size_t i = 0; i < energy::DTYPES; ++i)
            a.macs[i] += get(core + "te.macs_" + std::string(numerics::name_of(numerics::all_dtypes[i])));
        a.sbuf_read_bytes += get(core + "sbuf.bytes_read");
        a.sbuf_write_bytes += get(core + "sbuf.bytes_written");
        a.psum_read_bytes += get(core + "psum.bytes_read");
        a.psum_write_bytes += get(core + "psum.bytes_written");
        a.psum_accumulate_bytes += get(core + "psum.accumulate_bytes");
        for (uint32_t e = 0; e < chip.core.dma.engines; ++e) a.dma_bytes += get(core + "dma" + std::to_string(e) + ".bytes");
    }
    a.hbm_bytes = get("hbm.bytes_read") + get("hbm.bytes_written");
    a.noc_bytes = get("noc.bytes");
    return a;
}

} // namespace trnsim::tb
