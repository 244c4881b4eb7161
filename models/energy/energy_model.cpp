#include "models/energy/energy_model.h"

#include <algorithm>

namespace trnsim::energy {

activity& activity::operator+=(const activity& o) {
    for (size_t i = 0; i < DTYPES; ++i) macs[i] += o.macs[i];
    sbuf_read_bytes += o.sbuf_read_bytes;
    sbuf_write_bytes += o.sbuf_write_bytes;
    psum_read_bytes += o.psum_read_bytes;
    psum_write_bytes += o.psum_write_bytes;
    psum_accumulate_bytes += o.psum_accumulate_bytes;
    hbm_bytes += o.hbm_bytes;
    dma_bytes += o.dma_bytes;
    noc_bytes += o.noc_bytes;
    link_bytes += o.link_bytes;
    seconds = std::max(seconds, o.seconds);
    cores += o.cores;
    pes += o.pes;
    return *this;
}

double breakdown::joules(const std::string& name) const {
    for (const auto& p : parts)
        if (p.name == name) return p.joules;
    return 0;
}

breakdown estimate(const energy_config& c, const activity& a, unsigned chips) {
    constexpr double PJ = 1e-12;
    breakdown b;
    b.seconds = a.seconds;
    auto dyn = [&](std::string name, double j) {
        b.parts.push_back({std::move(name), j});
        b.dynamic_j += j;
    };
    for (size_t i = 0; i < DTYPES; ++i)
        dyn("mac." + std::string(numerics::name_of(numerics::all_dtypes[i])), a.macs[i] * c.mac_pj[i] * PJ);
    dyn("sbuf.read", a.sbuf_read_bytes * c.sbuf_read_pj_per_byte * PJ);
    dyn("sbuf.write", a.sbuf_write_bytes * c.sbuf_write_pj_per_byte * PJ);
    dyn("psum.read", (a.psum_read_bytes + a.psum_accumulate_bytes) * c.psum_read_pj_per_byte * PJ);
    dyn("psum.write", a.psum_write_bytes * c.psum_write_pj_per_byte * PJ);
    dyn("hbm", a.hbm_bytes * 8 * c.hbm_pj_per_bit * PJ);
    dyn("dma", a.dma_bytes * c.dma_pj_per_byte * PJ);
    dyn("noc", a.noc_bytes * c.noc_pj_per_byte * PJ);
    dyn("link", a.link_bytes * 8 * c.link_pj_per_bit * PJ);
    auto stat = [&](std::string name, double w) {
        b.parts.push_back({std::move(name), w * a.seconds});
        b.static_j += w * a.seconds;
    };
    stat("static.cores", c.static_w_per_core * a.cores);
    stat("static.pes", c.static_mw_per_pe * 1e-3 * a.pes);
    stat("static.chip", c.static_w_chip * chips);
    b.total_j = b.dynamic_j + b.static_j;
    return b;
}

} // namespace trnsim::energy
