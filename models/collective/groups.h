// Collectives of several chip groups at once, as one schedule on the whole platform: each group runs its own
// ring (or bidirectional ring) collective over its chips in the order given, all groups concurrently, so they
// meet in the links, DMA engines and NICs they share exactly as a training step's tensor- or data-parallel groups
// do. Also point-to-point sends (pipeline stages handing activations on). Plain C++.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "models/collective/schedule.h"

namespace trnsim::collective {

// Throws std::invalid_argument for groups that are empty, overlap, name chips outside `platform`, or an algorithm
// other than ring / bidir_ring (a group is a ring of its chips; the platform routes every copy).
schedule build_groups(const topology& platform, const std::vector<std::vector<uint32_t>>& groups, const params& p);

// Every pair (from, to) copies `bytes` of from's input to to's output, all at once (chunks as in p.chunks).
schedule build_sends(const topology& platform, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                     uint64_t bytes, uint32_t chunks = 1);

}  // namespace trnsim::collective
