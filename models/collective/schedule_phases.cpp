// The ring phases of the ring-based algorithms: a chip's digit in each phase (schedule.cpp's header comment).
#include "models/collective/schedule_detail.h"

#include <functional>
#include <string>
#include <stdexcept>

namespace trnsim::collective::detail {

phase_layout make_layout(const topology& t, algo a) {
    phase_layout L;
    uint32_t n = t.chips();
    L.digits.assign(n, {});
    auto add_phase = [&](uint32_t radix, const std::function<uint32_t(uint32_t)>& digit) {
        if (radix <= 1) return;
        L.radix.push_back(radix);
        for (uint32_t c = 0; c < n; ++c) L.digits[c].push_back(digit(c));
    };
    switch (a) {
    case algo::ring:
    case algo::bidir_ring:
        add_phase(n, [](uint32_t c) { return c; });
        break;
    case algo::torus:
        if (t.k == topology::kind::ring)
            throw std::invalid_argument("torus algorithm needs a torus or cluster topology (this one is a ring)");
        for (int d = 0; d < 3; ++d) add_phase(t.dims[d], [&t, d](uint32_t c) { return t.coords(c)[d]; });
        if (t.k == topology::kind::cluster)
            add_phase(t.servers, [&t](uint32_t c) { return t.server_of(c); });
        break;
    case algo::hierarchical:
        if (t.k != topology::kind::cluster)
            throw std::invalid_argument("hierarchical algorithm needs a cluster topology (servers behind a network)");
        add_phase(t.chips_per_server, [&t](uint32_t c) { return c % t.chips_per_server; });
        add_phase(t.servers, [&t](uint32_t c) { return t.server_of(c); });
        break;
    case algo::direct:
        throw std::logic_error("direct algorithms do not use rings");
    }
    if (L.radix.empty()) {  // one chip
        L.radix.push_back(1);
        for (uint32_t c = 0; c < n; ++c) L.digits[c].push_back(0);
    }
    L.chip_of_label.assign(n, 0);
    for (uint32_t c = 0; c < n; ++c) L.chip_of_label[L.label(c)] = c;
    return L;
}

// The directions the ring algorithms may run in (+1: chip i sends to i+1). On a ring topology with down links a
// direction is usable only if all its links are up: `ring` takes + or else -, `bidir_ring` keeps the usable ones.
// Other topologies leave the down links to the platform's routing.
std::vector<int> ring_dirs(const topology& t, algo a) {
    std::vector<int> all = a == algo::bidir_ring ? std::vector<int>{+1, -1} : std::vector<int>{+1};
    uint32_t n = t.chips();
    if (t.k != topology::kind::ring || t.down.empty() || n < 2) return all;
    std::string broken[2];
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t up = (i + 1) % n, dn = (i + n - 1) % n;
        if (!t.link_up(i, up) && broken[0].empty()) broken[0] = std::to_string(i) + "->" + std::to_string(up);
        if (!t.link_up(i, dn) && broken[1].empty()) broken[1] = std::to_string(i) + "->" + std::to_string(dn);
    }
    std::vector<int> ok;
    if (broken[0].empty()) ok.push_back(+1);
    if (broken[1].empty()) ok.push_back(-1);
    if (ok.empty())
        throw std::invalid_argument("collective: the " + std::string(name_of(a)) +
                                    " algorithm has no usable direction round the ring: link " + broken[0] +
                                    " (direction +) and link " + broken[1] + " (direction -) are down");
    if (a == algo::bidir_ring) return ok;
    return {ok[0]};
}

} // namespace trnsim::collective::detail
