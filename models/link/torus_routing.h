// Dimension-order routing on rings and 2D/3D tori, and the deadlock-freedom check of its channel dependencies.
// Plain C++.
//
// Chips are numbered chip = x + X * (y + Y * z) (as collective::topology). Each chip has up to six link ports:
// port 2d is the + direction of dimension d, port 2d+1 the - direction. A dimension of size 1 has no link; size 2 has
// one link between the two chips (both use their + port); size > 2 is a ring with wrap-around.
//
// Routing: correct x first, then y, then z; in each dimension take the shorter way round (a tie, distance n/2, goes
// +). Minimal, deterministic, and the same for every transfer between two chips.
//
// Deadlock freedom. With buffers and credits per link direction, a route that holds channel c and waits for channel
// c' makes a dependency c -> c'. Routing is deadlock free if this channel dependency graph (CDG) is acyclic (Dally &
// Seitz). Dimension order removes cycles between dimensions (a route never goes from a higher dimension back to a
// lower one); inside one ring the wrap-around closes a cycle, so each direction has two virtual channels with a
// dateline: a transfer starts a dimension on VC 0 and moves to VC 1 when it crosses the wrap edge (from coordinate
// n-1 to 0 going +, from 0 to n-1 going -); it never goes back to VC 0 in that dimension, and a route crosses the
// dateline at most once per dimension (minimal routes are shorter than the ring). channel_dependencies() builds
// the CDG over every source/destination pair; acyclic() checks it (tests show the graph without the dateline
// has a cycle and with it has none).
// The coarse transfer model reserves bandwidth instead of holding buffers, so the simulation itself cannot deadlock;
// this check is about the routing function a real link layer would need.
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace trnsim::link {

constexpr int PORTS = 6;
constexpr int LOCAL = -1;
constexpr int BLOCKED = -2;

struct torus_shape {
    std::array<uint32_t, 3> dims{1, 1, 1};
    // Link directions that are down: (chip, port) as the sending chip sees it (server-local chip numbers).
    // Routing avoids them: in the dimension it corrects, it takes the shorter way round unless that way crosses a
    // down direction, then the other way; if both are broken (or a size-2 dimension's only link is down) the pair
    // is unroutable (next_port returns BLOCKED).
    std::vector<std::pair<uint32_t, int>> down;
    bool port_up(uint32_t chip, int port) const;
    uint32_t chips() const { return dims[0] * dims[1] * dims[2]; }
    std::array<uint32_t, 3> coords(uint32_t chip) const {
        return {chip % dims[0], (chip / dims[0]) % dims[1], chip / (dims[0] * dims[1])};
    }
    uint32_t chip_at(const std::array<uint32_t, 3>& c) const { return c[0] + dims[0] * (c[1] + dims[1] * c[2]); }
    // Whether chip has a link on `port`, and the chip at its far end.
    bool has_port(int port) const;
    uint32_t neighbour(uint32_t chip, int port) const;
    // The port that leads from `chip` towards `dst` (LOCAL if chip == dst, BLOCKED if down links cut it off).
    int next_port(uint32_t chip, uint32_t dst) const;
    // Whether every hop of the way from `chip`, `hops` steps on `port`'s direction, is up.
    bool way_up(uint32_t chip, int port, uint32_t hops) const;
    // The route: (chip, port) for each hop; empty with *blocked set (if given) when next_port says BLOCKED
    // (*blocked = the first down direction of the shorter way: (chip, port)).
    std::vector<std::pair<uint32_t, int>> route(uint32_t src, uint32_t dst,
                                                std::pair<uint32_t, int>* blocked = nullptr) const;
};

// One channel: a link direction leaving `chip` on `port`, on a virtual channel.
struct channel {
    uint32_t chip;
    int port;
    int vc;
    bool operator<(const channel& o) const {
        return chip != o.chip ? chip < o.chip : port != o.port ? port < o.port : vc < o.vc;
    }
    bool operator==(const channel& o) const { return chip == o.chip && port == o.port && vc == o.vc; }
};

// The channels of a route, with their virtual channels (dateline VCs when `dateline`, else all VC 0).
std::vector<channel> route_channels(const torus_shape& t, uint32_t src, uint32_t dst, bool dateline);

// The CDG over all source/destination pairs: nodes are channels, edges consecutive channels of a route.
struct dependency_graph {
    std::vector<channel> nodes;
    std::vector<std::vector<uint32_t>> edges;  // edges[i] = successors of nodes[i]
};
dependency_graph channel_dependencies(const torus_shape& t, bool dateline);
// True if the graph has no cycle; else `cycle` (if given) gets one cycle's nodes.
bool acyclic(const dependency_graph& g, std::vector<channel>* cycle = nullptr);

} // namespace trnsim::link
