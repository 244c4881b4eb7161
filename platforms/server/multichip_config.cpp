#include "platforms/server/multichip_config.h"

#include "models/link/global_address.h"
#include "models/link/torus_routing.h"

#include <cstdio>
#include <set>

namespace trnsim::platform {

using config::node;

namespace {

link::link_config parse_link(const node& n, link::link_config p) {
    p.gbps = n.get_double("gbps", p.gbps, 1e-6, 1e6);
    p.latency_ns = n.get_double("latency_ns", p.latency_ns, 0, 1e9);
    p.payload_bytes = n.get_uint("payload_bytes", p.payload_bytes, 1, 1u << 30);
    p.overhead_bytes = n.get_uint("overhead_bytes", p.overhead_bytes, 0, 1u << 30);
    p.credits = uint32_t(n.get_uint("credits", p.credits, 1, 1u << 30));
    p.credit_return_ns = n.get_double("credit_return_ns", p.credit_return_ns, 0, 1e9);
    n.finish();
    return p;
}

chip_light::light_chip_config parse_light(const node& n, bool functional) {
    chip_light::light_chip_config p;
    p.hbm_bytes = n.get_uint("hbm_gib", p.hbm_bytes >> 30, 1, 4096) << 30;
    p.hbm_gbps = n.get_double("hbm_gbps", p.hbm_gbps, 1e-3, 1e7);
    p.hbm_latency_ns = n.get_double("hbm_latency_ns", p.hbm_latency_ns, 0, 1e9);
    p.dma_gbps = n.get_double("dma_gbps", p.dma_gbps, 1e-3, 1e7);
    p.dma_latency_ns = n.get_double("dma_latency_ns", p.dma_latency_ns, 0, 1e9);
    p.ve_clock_ghz = n.get_double("ve_clock_ghz", p.ve_clock_ghz, 1e-3, 100);
    p.ve_lanes_32bit = uint32_t(n.get_uint("ve_lanes_32bit", p.ve_lanes_32bit, 1, 1u << 20));
    p.ve_lanes_16bit = uint32_t(n.get_uint("ve_lanes_16bit", p.ve_lanes_16bit, 1, 1u << 20));
    p.reduce_engines = uint32_t(n.get_uint("reduce_engines", p.reduce_engines, 1, 1024));
    p.reduce_latency_ns = n.get_double("reduce_latency_ns", p.reduce_latency_ns, 0, 1e9);
    p.reduce_hbm_efficiency = n.get_double("reduce_hbm_efficiency", p.reduce_hbm_efficiency, 1e-3, 1.0);
    p.reduce_tile_elements = n.get_uint("reduce_tile_elements", p.reduce_tile_elements, 0, uint64_t(1) << 32);
    p.reduce_tiles = uint32_t(n.get_uint("reduce_tiles", p.reduce_tiles, 1, 1024));
    p.signal_ns = n.get_double("signal_ns", p.signal_ns, 0, 1e9);
    p.remote_signal_ns = n.get_double("remote_signal_ns", p.remote_signal_ns, 0, 1e9);
    p.functional = functional;
    n.finish();
    return p;
}

}  // namespace

multichip_config parse_multichip(const node& root, platform_kind kind, bool functional) {
    multichip_config c;
    c.kind = kind;
    if (kind == platform_kind::single_chip) {
        for (const char* k : {"server", "cluster", "chips"})
            if (root.has(k)) root.fail(k, "only multi-chip platforms (\"platform\": \"server\" or \"cluster\") have it");
        return c;
    }
    node s = root.child("server");
    std::string topo = s.get_choice("topology", "torus", {"ring", "torus"});
    auto dims = s.get_uint_list("dims", {4, 4}, 1, 1u << 20);
    if (dims.empty() || dims.size() > 3) s.fail("dims", "expected 1 to 3 dimensions");
    if (topo == "ring" && dims.size() != 1) s.fail("dims", "a ring has one dimension ([chips])");
    std::array<uint32_t, 3> d{1, 1, 1};
    uint64_t per = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
        d[i] = uint32_t(dims[i]);
        per *= dims[i];
    }
    if (per < 1 || per > (1u << 20)) s.fail("dims", "the server must have 1 .. 1048576 chips");
    link::link_config base = parse_link(s.child("link"), link::link_config{});
    c.links = {parse_link(s.child("link_x"), base), parse_link(s.child("link_y"), base),
               parse_link(s.child("link_z"), base)};
    node faults = s.child("faults");
    std::vector<node> fault_nodes = faults.children("links");
    faults.finish();
    s.finish();

    uint32_t servers = 1;
    if (kind == platform_kind::cluster) {
        node cl = root.child("cluster");
        servers = uint32_t(cl.get_uint("servers", 2, 1, 1u << 16));
        node nw = cl.child("network");
        c.network.nic = parse_link(nw.child("nic"), c.network.nic);
        c.network.switch_latency_ns = nw.get_double("switch_latency_ns", c.network.switch_latency_ns, 0, 1e9);
        c.network.servers_per_leaf = uint32_t(nw.get_uint("servers_per_leaf", c.network.servers_per_leaf, 1, 1u << 16));
        c.network.oversubscription = nw.get_double("oversubscription", c.network.oversubscription, 1, 1e6);
        nw.finish();
        cl.finish();
    } else if (root.has("cluster")) {
        root.fail("cluster", "only \"platform\": \"cluster\" has it");
    }
    if (uint64_t(servers) * per > link::MAX_CHIPS) root.fail("cluster", "more chips than the 21-bit chip id holds");
    // The topology as collective::topology describes it (fields set here, so the config does not need the
    // algorithms library).
    c.topo.k = kind == platform_kind::cluster ? collective::topology::kind::cluster
               : topo == "ring"               ? collective::topology::kind::ring
                                              : collective::topology::kind::torus;
    c.topo.dims = d;
    c.topo.servers = servers;
    c.topo.chips_per_server = uint32_t(per);
    c.n_chips = servers * uint32_t(per);

    for (const node& f : fault_nodes) {
        link_fault lf;
        lf.from = uint32_t(f.get_uint("from", 0, 0, link::MAX_CHIPS));
        lf.to = uint32_t(f.get_uint("to", 0, 0, link::MAX_CHIPS));
        if (!f.has("from")) f.fail("from", "required (the chip the faulty link direction leaves)");
        if (!f.has("to")) f.fail("to", "required (the chip the faulty link direction enters)");
        std::string state = f.get_choice("state", "", {"down", "degraded"});
        if (state.empty()) f.fail("state", "required (\"down\" or \"degraded\")");
        lf.down = state == "down";
        // Only read here; add_link_fault judges the values (and whether a down link may have them).
        if (f.has("bandwidth_factor")) lf.bandwidth_factor = f.get_double("bandwidth_factor", 1, -1e300, 1e300);
        if (f.has("extra_latency_ns")) lf.extra_latency_ns = f.get_double("extra_latency_ns", 0, -1e300, 1e300);
        f.finish();
        fault_origin o;
        o.where = f.path();
        add_link_fault(c, lf, o);
    }

    node ch = root.child("chips");
    std::string model = ch.get_choice("model", "light", {"light", "full"});
    c.full_chip.assign(c.n_chips, model == "full" ? 1 : 0);
    for (uint64_t id : ch.get_uint_list("full", {}, 0, c.n_chips - 1)) c.full_chip[id] = 1;
    c.light = parse_light(ch.child("light"), functional);
    ch.finish();
    return c;
}

int link_port(const multichip_config& c, uint32_t from, uint32_t to) {
    uint32_t per = c.topo.chips_per_server;
    if (from >= c.n_chips || to >= c.n_chips || from / per != to / per || from == to) return -1;
    link::torus_shape sh;
    sh.dims = c.topo.dims;
    for (int p = 0; p < link::PORTS; ++p)
        if (sh.has_port(p) && sh.neighbour(from % per, p) == to % per) return p;
    return -1;
}

link::torus_shape server_shape(const multichip_config& c, uint32_t index) {
    link::torus_shape sh;
    sh.dims = c.topo.dims;
    uint32_t per = sh.chips();
    for (const auto& f : c.faults)
        if (f.down && f.from / per == index) sh.down.emplace_back(f.from % per, link_port(c, f.from, f.to));
    return sh;
}

std::string unroutable_copy(const multichip_config& c, const collective::schedule& s) {
    if (c.topo.down.empty()) return "";
    uint32_t per = c.topo.chips_per_server;
    std::vector<link::torus_shape> shapes;
    for (uint32_t i = 0; i < c.topo.servers; ++i) shapes.push_back(server_shape(c, i));
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (size_t i = 0; i < s.steps.size(); ++i) {
        const auto& st = s.steps[i];
        uint32_t a = st.src.chip, b = st.dst.chip;
        if (st.kind != collective::step_kind::copy || a == b || a / per != b / per) continue;
        if (!seen.insert({a, b}).second) continue;
        std::pair<uint32_t, int> blocked{0, 0};
        const auto& sh = shapes[a / per];
        if (!sh.route(a % per, b % per, &blocked).empty()) continue;
        uint32_t first = a / per * per;
        int dim = blocked.second / 2;
        return "collective " + std::string(collective::name_of(s.p.a)) + " algorithm: copy step " +
               std::to_string(i) + " from chip " + std::to_string(a) + " to chip " + std::to_string(b) +
               " has no route: link " + std::to_string(first + blocked.first) + "->" +
               std::to_string(first + sh.neighbour(blocked.first, blocked.second)) + " is down and " +
               (sh.dims[size_t(dim)] == 2 ? std::string("it is the only link of that pair")
                                          : "the other way round dimension " + std::string(1, "xyz"[dim]) +
                                                " is broken too") +
               " (choose another algorithm or fewer faults)";
    }
    return "";
}

void add_link_fault(multichip_config& c, const link_fault& f, const fault_origin& o) {
    auto fail_at = [](const std::string& where, const std::string& m) { throw config::config_error(where + ": " + m); };
    auto fail = [&](const std::string& m) { fail_at(o.where, m); };
    if (c.kind == platform_kind::single_chip) fail("a single chip has no chip-to-chip links");
    for (uint32_t id : {f.from, f.to})
        if (id >= c.n_chips)
            fail("chip " + std::to_string(id) + " does not exist (chips 0.." + std::to_string(c.n_chips - 1) + ")");
    std::string dir = std::to_string(f.from) + "->" + std::to_string(f.to);
    if (link_port(c, f.from, f.to) < 0)
        fail("no link " + dir + " (a fault needs two neighbouring chips of one server; servers talk through the "
             "network)");
    if (c.fault(f.from, f.to)) fail("link " + dir + " already has a fault");
    auto num = [](double x) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", x);
        return std::string(b);
    };
    if (f.down) {
        if (f.bandwidth_factor) fail_at(o.at(o.factor), "only a \"degraded\" link has it");
        if (f.extra_latency_ns) fail_at(o.at(o.extra), "only a \"degraded\" link has it");
    } else {
        // At least 1e-6: a link a million times slower is as good as down, and smaller factors overflow the
        // picosecond times of a transfer.
        if (f.bandwidth_factor && !(*f.bandwidth_factor >= 1e-6 && *f.bandwidth_factor < 1))
            fail_at(o.at(o.factor), "must be >= 1e-06 and < 1 (a down link is " + o.down + "), got " +
                                        num(*f.bandwidth_factor));
        if (f.extra_latency_ns && !(*f.extra_latency_ns >= 0 && *f.extra_latency_ns <= 1e9))
            fail_at(o.at(o.extra), "must be >= 0 and <= 1e9 ns, got " + num(*f.extra_latency_ns));
        if (!f.bandwidth_factor && f.extra_ns() == 0)
            fail("degraded link " + dir + " changes nothing: it needs " + o.factor + " (0 < f < 1) or " + o.extra +
                 " > 0");
    }
    c.faults.push_back(f);
    if (f.down) c.topo.down.emplace_back(f.from, f.to);
}

}  // namespace trnsim::platform
