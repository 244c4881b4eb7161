#include "models/link/torus_routing.h"

#include <algorithm>
#include <map>

namespace trnsim::link {

bool torus_shape::has_port(int port) const {
    uint32_t n = dims[size_t(port / 2)];
    if (n <= 1) return false;
    if (n == 2) return port % 2 == 0;
    return true;
}

uint32_t torus_shape::neighbour(uint32_t chip, int port) const {
    auto c = coords(chip);
    size_t d = size_t(port / 2);
    uint32_t n = dims[d];
    c[d] = port % 2 == 0 ? (c[d] + 1) % n : (c[d] + n - 1) % n;
    return chip_at(c);
}

bool torus_shape::port_up(uint32_t chip, int port) const {
    for (const auto& d : down)
        if (d.first == chip && d.second == port) return false;
    return true;
}

bool torus_shape::way_up(uint32_t chip, int port, uint32_t hops) const {
    for (uint32_t h = 0; h < hops; ++h, chip = neighbour(chip, port))
        if (!port_up(chip, port)) return false;
    return true;
}

int torus_shape::next_port(uint32_t chip, uint32_t dst) const {
    auto a = coords(chip), b = coords(dst);
    for (int d = 0; d < 3; ++d) {
        if (a[size_t(d)] == b[size_t(d)]) continue;
        uint32_t n = dims[size_t(d)];
        if (n == 2) return port_up(chip, 2 * d) ? 2 * d : BLOCKED;
        uint32_t fwd = (b[size_t(d)] + n - a[size_t(d)]) % n;
        int first = fwd <= n / 2 ? 2 * d : 2 * d + 1, other = first ^ 1;
        uint32_t hops = first % 2 == 0 ? fwd : n - fwd;
        if (down.empty() || way_up(chip, first, hops)) return first;
        // The other way round this dimension. Along a way that is up, every later chip sees the rest of it up and
        // the way back through the source broken, so the hop-by-hop choice stays on one way.
        if (way_up(chip, other, n - hops)) return other;
        return BLOCKED;
    }
    return LOCAL;
}

std::vector<std::pair<uint32_t, int>> torus_shape::route(uint32_t src, uint32_t dst,
                                                         std::pair<uint32_t, int>* blocked) const {
    std::vector<std::pair<uint32_t, int>> r;
    uint32_t c = src;
    for (int p; (p = next_port(c, dst)) != LOCAL;) {
        if (p == BLOCKED) {
            if (blocked) {
                // Name the first down direction of the dimension-order (shortest) way.
                torus_shape plain = *this;
                plain.down.clear();
                for (uint32_t x = c; x != dst;) {
                    int q = plain.next_port(x, dst);
                    if (!port_up(x, q)) {
                        *blocked = {x, q};
                        break;
                    }
                    x = neighbour(x, q);
                }
            }
            return {};
        }
        r.emplace_back(c, p);
        c = neighbour(c, p);
    }
    return r;
}

std::vector<channel> route_channels(const torus_shape& t, uint32_t src, uint32_t dst, bool dateline) {
    std::vector<channel> out;
    int dim = -1, vc = 0;
    for (auto [chip, port] : t.route(src, dst)) {
        int d = port / 2;
        if (d != dim) dim = d, vc = 0;
        out.push_back({chip, port, vc});
        if (!dateline) continue;
        uint32_t x = t.coords(chip)[size_t(d)], n = t.dims[size_t(d)];
        bool wraps = n > 2 && ((port % 2 == 0 && x == n - 1) || (port % 2 == 1 && x == 0));
        if (wraps) vc = 1;  // the next channel of this dimension is past the dateline
    }
    return out;
}

dependency_graph channel_dependencies(const torus_shape& t, bool dateline) {
    dependency_graph g;
    std::map<channel, uint32_t> index;
    auto id = [&](const channel& c) {
        auto [it, fresh] = index.emplace(c, uint32_t(g.nodes.size()));
        if (fresh) {
            g.nodes.push_back(c);
            g.edges.emplace_back();
        }
        return it->second;
    };
    for (uint32_t s = 0; s < t.chips(); ++s)
        for (uint32_t d = 0; d < t.chips(); ++d) {
            auto ch = route_channels(t, s, d, dateline);
            for (size_t i = 0; i + 1 < ch.size(); ++i) {
                uint32_t a = id(ch[i]), b = id(ch[i + 1]);
                auto& e = g.edges[a];
                if (std::find(e.begin(), e.end(), b) == e.end()) e.push_back(b);
            }
            if (ch.size() == 1) id(ch[0]);
        }
    return g;
}

bool acyclic(const dependency_graph& g, std::vector<channel>* cycle) {
    // Iterative DFS with colours; a grey successor closes a cycle.
    std::vector<uint8_t> colour(g.nodes.size(), 0);
    std::vector<uint32_t> parent(g.nodes.size(), ~0u);
    for (uint32_t root = 0; root < g.nodes.size(); ++root) {
        if (colour[root]) continue;
        std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
        colour[root] = 1;
        while (!stack.empty()) {
            auto& [v, i] = stack.back();
            if (i == g.edges[v].size()) {
                colour[v] = 2;
                stack.pop_back();
                continue;
            }
            uint32_t w = g.edges[v][i++];
            if (colour[w] == 1) {
                if (cycle) {
                    cycle->clear();
                    for (uint32_t u = v; u != w && u != ~0u; u = parent[u]) cycle->push_back(g.nodes[u]);
                    cycle->push_back(g.nodes[w]);
                    std::reverse(cycle->begin(), cycle->end());
                }
                return false;
            }
            if (!colour[w]) {
                colour[w] = 1;
                parent[w] = v;
                stack.push_back({w, 0});
            }
        }
    }
    return true;
}

} // namespace trnsim::link
