// The alpha-beta cost model of the collective algorithms (docs/collectives.md derives the formulas).
//
// A transfer of m bytes over one hop costs alpha + m / beta (alpha: latency of the hop, beta: bandwidth of one link
// direction); a reduce of m bytes costs m / gamma (gamma: the reduction engine's bandwidth). Closed forms hold for
// unpipelined schedules (chunks = 1) and blocks of equal size; critical_path() evaluates any schedule under the same
// model without link contention (each step starts when its dependencies end), so for the uncongested cases the two
// agree and the platform's simulated time can be checked against both.
#pragma once
#include <functional>
#include <vector>

#include "models/collective/schedule.h"

namespace trnsim::collective {

struct hop_cost {
    uint32_t k = 1;          // ring size of this phase
    double alpha_s = 0;      // per-step latency
    double beta_Bps = 1;     // bandwidth of one link direction
};

// allreduce over phases (ring: one phase; torus: one per dimension; hierarchical: server then network), reduce-
// scatter phase by phase, all-gather in reverse: sum over phases d of 2 (k_d - 1) (alpha_d + B_d / (k_d beta_d)) +
// (k_d - 1) B_d / (k_d gamma), B_0 = B, B_{d+1} = B_d / k_d. Bidirectional ring: two rings of B/2 on opposite link
// directions, i.e. B halved.
double allreduce_time(uint64_t bytes, const std::vector<hop_cost>& phases, double gamma_Bps, bool bidir = false);
// reduce_scatter: the first half of the sum above; allgather: (k-1)(alpha + B_d/(k beta)) per phase, no reduction.
double reduce_scatter_time(uint64_t bytes, const std::vector<hop_cost>& phases, double gamma_Bps);
double allgather_time(uint64_t bytes, const std::vector<hop_cost>& phases);
// broadcast along one ring (a chain of k-1 hops), unpipelined.
double broadcast_time(uint64_t bytes, const hop_cost& ring);

// Longest path through the schedule's DAG, every step lasting cost(step).
double critical_path(const schedule& s, const std::function<double(const step&)>& cost);

}  // namespace trnsim::collective
