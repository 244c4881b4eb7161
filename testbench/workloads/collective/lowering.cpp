#include "testbench/workloads/collective/lowering.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "models/core/core_config.h"
#include "models/link/global_address.h"

namespace trnsim::tb {

namespace {

// The chip that executes a step: a copy's source (its DMA pushes), a reduce's chip.
uint32_t executor_of(const collective::step& st) {
    return st.kind == collective::step_kind::copy ? st.src.chip : st.dst.chip;
}

// A copy into another chip (a send over the fabric).
bool remote_copy(const collective::step& st) {
    return st.kind == collective::step_kind::copy && st.src.chip != st.dst.chip;
}

core::instruction dma_instruction(std::vector<core::sem_wait> waits, int32_t signal, const dma::dma_descriptor& d) {
    core::instruction in;
    in.op = core::opcode::dma;
    in.waits = std::move(waits);
    in.signal = signal;
    in.dma = d;
    return in;
}

void push_unique(std::vector<uint32_t>& v, uint32_t x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// A tile of `parts` x `free` consecutive elements starting at element `first` of a region.
struct tile {
    uint64_t first;
    uint32_t parts, free;
};

// Whole tiles of partitions x tile_free, then one of partitions x (what is left / partitions), then one row of
// the rest.
std::vector<tile> tiles_of(uint64_t elements, uint32_t partitions, uint32_t tile_free) {
    std::vector<tile> t;
    const uint64_t full = uint64_t(partitions) * tile_free;
    uint64_t e = 0;
    for (; e + full <= elements; e += full) t.push_back({e, partitions, tile_free});
    if (uint64_t rows = (elements - e) / partitions) {
        t.push_back({e, partitions, uint32_t(rows)});
        e += rows * partitions;
    }
    if (e < elements) t.push_back({e, 1, uint32_t(elements - e)});
    return t;
}

}  // namespace

lowered_collective lower(const collective::schedule& s, const lowering_layout& L) {
    const uint32_t n = s.topo.chips();
    const uint64_t es = numerics::size_of(s.p.dt);
    const uint64_t operand = uint64_t(L.tile_free) * es;  // bytes per partition of one staged operand
    if (L.dma_queues == 0 || L.slots == 0 || L.tile_free == 0 || L.partitions == 0 || L.cores == 0 ||
        L.copy_piece == 0 || L.copy_piece > UINT32_MAX)
        throw std::invalid_argument("collective lowering: cores, dma_queues, slots, tile_free, partitions and copy_piece "
                                    "must be >= 1 (copy_piece < 4 GiB)");
    const uint64_t staging = L.staging_bytes ? L.staging_bytes : L.partition_bytes;
    if (!L.reduce_by_dma && 2 * operand * L.slots > staging)
        throw std::invalid_argument("collective lowering: " + std::to_string(L.slots) + " staging slots of two " +
                                    std::to_string(L.tile_free) + "-element " + std::string(numerics::name_of(s.p.dt)) +
                                    " operands need " + std::to_string(2 * operand * L.slots) +
                                    " bytes per SBUF partition, " + std::to_string(staging) + " are free for them");
    // An agent is one core of one chip: agent = chip * cores + core.
    const uint32_t C = L.cores;
    const size_t agents = size_t(n) * C;
    auto chip_of = [C](uint32_t agent) { return agent / C; };
    auto window = [&](uint32_t agent) { return L.core_base + uint64_t(L.first_core + agent % C) * L.core_stride; };

    lowered_collective out;
    out.programs.assign(n, std::vector<core::core_program>(L.first_core + C));
    for (auto& chip : out.programs)
        for (auto& p : chip) {
            p.dma.resize(2 * L.dma_queues);  // the second half: semaphore signals
            p.semaphores = L.sem_first;
        }
    auto prog = [&](uint32_t agent) -> core::core_program& {
        return out.programs[chip_of(agent)][L.first_core + agent % C];
    };
    std::vector<uint32_t> next_slot(agents, 0), next_core(n, 0);
    auto new_sem = [&](uint32_t agent) { return prog(agent).semaphores++; };
    // Lanes (step::lane: a bidirectional ring's two directions) have queues of their own on every agent: lane l of
    // `lanes` rotates over queues l, l + lanes, ... of the data queues and of the signal queues. The schedule lists one
    // direction's steps before the other's, so in shared queues the second direction's first steps sat behind the
    // first direction's last ones, which wait for the ring: the two ran nearly one after the other (an 8 MiB
    // bidir_ring all-reduce on ring-8's full chips took 133.6 us, 85.0 with lanes apart).
    uint32_t lanes = 1;
    for (const auto& st : s.steps) lanes = std::max(lanes, st.lane + 1);
    lanes = std::min(lanes, L.dma_queues);
    const uint32_t per_lane = L.dma_queues / lanes;
    std::vector<std::vector<uint32_t>> next_queue(agents, std::vector<uint32_t>(lanes, 0)),
        next_signal_queue(agents, std::vector<uint32_t>(lanes, 0));
    auto queue_of = [&](std::vector<uint32_t>& next, uint32_t lane) {
        const uint32_t l = lane % lanes;
        return l + lanes * (next[l]++ % per_lane);
    };
    // A lane's sends to other chips go out in the schedule's order, one queue per lane (a channel, queue l): the DMA
    // engines serve their data descriptors in order, so a send starts streaming when the one before it has streamed,
    // and a send whose data is late holds up the lane's later sends instead of sharing the link with them. The rest
    // rotates over the lane's queues.
    auto push_dma = [&](uint32_t agent, const collective::step& st, core::instruction in) {
        const uint32_t q = remote_copy(st) ? st.lane % lanes : queue_of(next_queue[agent], st.lane);
        prog(agent).dma[q].push_back(std::move(in));
        ++out.dma_instructions;
    };
    auto address = [&](const collective::region& r) {
        switch (r.buf) {
        case collective::buffer::input: return L.input + r.offset;
        case collective::buffer::output: return L.output + r.offset;
        case collective::buffer::scratch: return L.scratch + r.offset;
        }
        return r.offset;
    };

    // Who runs what: a copy on one core of its source chip, each tile of a reduce on one core of its chip (both
    // rotating over the chip's cores). A Vector Engine reduce serves its adds in one queue per core, in order: there
    // the lanes take cores of their own, so that an add waiting for one direction's data does not hold up the
    // other's (8 MiB FP32 bidir_ring all-reduce on ring-8's full chips: 141.5 us with the cores shared).
    const bool split_cores = !L.reduce_by_dma && lanes > 1 && C - 1 >= lanes;
    std::vector<uint32_t> next_lane_core(size_t(n) * lanes, 0);
    const size_t steps = s.steps.size();
    std::vector<std::vector<tile>> tiles(steps);
    std::vector<std::vector<uint32_t>> tile_agent(steps);  // per tile (a copy: one entry)
    std::vector<std::vector<uint32_t>> agents_of(steps);   // distinct agents of a step
    for (size_t i = 0; i < steps; ++i) {
        const auto& st = s.steps[i];
        const uint32_t x = executor_of(st);
        // A copy to another chip runs on core 0; a copy inside the chip (HBM to HBM) runs like reduce tiles, spread
        // over the other cores, so it neither waits behind nor holds up the sends on core 0's DMA engines (the
        // all-gather's first send waited behind the local copy of its own block in every engine) and it moves at
        // the DMA rate of several cores.
        const bool copy = st.kind == collective::step_kind::copy;
        const bool remote = remote_copy(st);
        if (copy) {
            // Pieces of up to copy_piece bytes (first = byte offset, free = bytes): a long copy does not hold every
            // DMA engine of one core while that core's reduce tiles queue behind it. A local copy: one piece per
            // core it is spread over (4 KiB aligned).
            uint64_t piece = L.copy_piece;
            if (!remote && C > 1)
                piece = std::min(piece, std::max<uint64_t>(4096, (st.src.bytes / (C - 1) + 4095) & ~uint64_t(4095)));
            for (uint64_t off = 0; off < st.src.bytes; off += piece)
                tiles[i].push_back({off, 1, uint32_t(std::min<uint64_t>(piece, st.src.bytes - off))});
        } else {
            tiles[i] = tiles_of(st.src.bytes / es, L.partitions, L.tile_free);
        }
        for (size_t t = 0; t < tiles[i].size(); ++t) {
            // Copies to other chips on core 0, reduce tiles and local copies on the others (a send's descriptors would
            // sit in front of tile loads in every DMA engine of its core); one core does both.
            uint32_t core = 0;
            if (C > 1 && !remote) {
                if (split_cores) {  // the step's lane's cores: 1 + lane, 1 + lane + lanes, ...
                    const uint32_t l = st.lane % lanes, count = (C - 1 - l + lanes - 1) / lanes;
                    core = 1 + l + lanes * (next_lane_core[size_t(x) * lanes + l]++ % count);
                } else {
                    core = 1 + next_core[x]++ % (C - 1);
                }
            }
            const uint32_t a = x * C + core;
            tile_agent[i].push_back(a);
            push_unique(agents_of[i], a);
        }
    }
    // The agents that run a step depending on step i.
    std::vector<std::vector<uint32_t>> consumers(steps);
    for (size_t j = 0; j < steps; ++j)
        for (uint32_t d : s.steps[j].deps)
            for (uint32_t z : agents_of[j]) push_unique(consumers[d], z);
    // done[i]: per agent of step i, the semaphores its part of the step signals.
    std::vector<std::vector<std::pair<uint32_t, core::sem_wait>>> done(steps);
    std::unordered_map<uint64_t, uint32_t> remote_sem;  // (consumer, step, producer) -> semaphore on the consumer
    auto key = [agents](uint32_t consumer, size_t step, uint32_t producer) {
        return (uint64_t(step) * agents + consumer) * agents + producer;
    };
    // What agent z must wait for before running its part of step j.
    auto waits_for = [&](uint32_t z, size_t j) {
        std::vector<core::sem_wait> w;
        for (uint32_t d : s.steps[j].deps)
            for (uint32_t a : agents_of[d]) {
                if (a != z) {
                    w.push_back({remote_sem.at(key(z, d, a)), 1});
                    continue;
                }
                for (const auto& [b, sw] : done[d])
                    if (b == z) w.push_back(sw);
            }
        return w;
    };
    std::vector<std::vector<std::vector<core::sem_wait>>> slot_busy(agents,
                                                                    std::vector<std::vector<core::sem_wait>>(L.slots));

    // Agent a's part of step i as one DMA instruction, once the step's dependencies are met; its semaphore says done.
    auto one_dma = [&](uint32_t a, size_t i, const dma::dma_descriptor& d) {
        const uint32_t sem = new_sem(a);
        push_dma(a, s.steps[i], dma_instruction(waits_for(a, i), int32_t(sem), d));
        done[i].push_back({a, {sem, 1}});
    };
    for (size_t i = 0; i < steps; ++i) {
        const auto& st = s.steps[i];
        if (st.kind == collective::step_kind::copy) {
            for (size_t k = 0; k < tiles[i].size(); ++k) {
                const uint32_t a = tile_agent[i][k], x = chip_of(a);
                const tile& t = tiles[i][k];
                dma::dma_descriptor d;
                d.src = address(st.src) + t.first;
                d.dst = address(st.dst) + t.first;
                if (st.dst.chip != x) d.dst = link::global_address(st.dst.chip, d.dst);
                d.row_bytes = t.free;
                one_dma(a, i, d);
            }
        } else if (L.reduce_by_dma) {
            for (size_t k = 0; k < tiles[i].size(); ++k) {
                const tile& t = tiles[i][k];
                dma::dma_descriptor d;
                d.src = address(st.src) + t.first * es;
                d.dst = address(st.dst) + t.first * es;
                d.row_bytes = uint64_t(t.parts) * t.free * es;
                d.reduce = s.p.dt;
                one_dma(tile_agent[i][k], i, d);
                ++out.tiles;
            }
        } else {
            const uint64_t dst = address(st.dst), src = address(st.src);
            for (size_t k = 0; k < tiles[i].size(); ++k) {
                const tile& t = tiles[i][k];
                const uint32_t a = tile_agent[i][k];
                const uint32_t slot = next_slot[a]++ % L.slots;
                const uint64_t a_off = uint64_t(slot) * 2 * operand, b_off = a_off + operand;
                const uint64_t sbuf_chip = window(a) + L.sbuf_core;
                std::vector<core::sem_wait> tw = waits_for(a, i);
                tw.insert(tw.end(), slot_busy[a][slot].begin(), slot_busy[a][slot].end());
                // Loads: dst and src tiles, row p of the tile into partition p.
                dma::dma_descriptor ld;
                ld.row_bytes = uint64_t(t.free) * es;
                ld.rows = t.parts;
                ld.src_stride = int64_t(ld.row_bytes);
                ld.dst_stride = int64_t(L.partition_bytes);
                const int32_t loaded = int32_t(new_sem(a));
                ld.src = dst + t.first * es;
                ld.dst = sbuf_chip + a_off;
                push_dma(a, st, dma_instruction(tw, loaded, ld));
                ld.src = src + t.first * es;
                ld.dst = sbuf_chip + b_off;
                push_dma(a, st, dma_instruction(std::move(tw), loaded, ld));
                // The add, in place in the dst operand's slot.
                core::instruction v;
                v.op = core::opcode::vector;
                v.waits = {{uint32_t(loaded), 2}};
                v.signal = int32_t(new_sem(a));
                v.vec.op = ve::vop::add;
                v.vec.parts = t.parts;
                v.vec.free = t.free;
                v.vec.a = {s.p.dt, L.sbuf_core + a_off, L.partition_bytes};
                v.vec.b = {s.p.dt, L.sbuf_core + b_off, L.partition_bytes};
                v.vec.out = v.vec.a;
                const uint32_t added = uint32_t(v.signal);
                prog(a).vector.push_back(std::move(v));
                ++out.vector_instructions;
                // The store back to dst.
                dma::dma_descriptor sd;
                sd.src = sbuf_chip + a_off;
                sd.dst = dst + t.first * es;
                sd.row_bytes = ld.row_bytes;
                sd.rows = t.parts;
                sd.src_stride = int64_t(L.partition_bytes);
                sd.dst_stride = int64_t(sd.row_bytes);
                const uint32_t stored = new_sem(a);
                push_dma(a, st, dma_instruction({{added, 1}}, int32_t(stored), sd));
                slot_busy[a][slot] = {{stored, 1}};
                done[i].push_back({a, {stored, 1}});
                ++out.tiles;
            }
        }
        // Signals: once its part of the step is done, each agent of the step writes one semaphore register of every
        // other agent that waits for the step (over the NoC on its own chip, over the fabric on another).
        std::vector<uint32_t> targets = consumers[i];
        if (L.notify_landing && remote_copy(st) &&
            std::none_of(targets.begin(), targets.end(), [&](uint32_t z) { return chip_of(z) == st.dst.chip; }))
            targets.push_back(st.dst.chip * C);
        for (uint32_t a : agents_of[i]) {
            std::vector<core::sem_wait> mine;
            for (const auto& [b, sw] : done[i])
                if (b == a) mine.push_back(sw);
            for (uint32_t z : targets) {
                if (z == a) continue;
                const uint32_t r = new_sem(z);
                if (r >= L.max_semaphores)
                    throw std::invalid_argument("collective lowering: chip " + std::to_string(chip_of(z)) + " core " +
                                                std::to_string(L.first_core + z % C) + " needs more than " +
                                                std::to_string(L.max_semaphores) +
                                                " semaphores (its registers); use fewer chunks or larger tiles");
                remote_sem[key(z, i, a)] = r;
                const uint64_t reg = window(z) + L.sem_core + uint64_t(r) * core::core_config::SEM_REGISTER_BYTES;
                dma::dma_descriptor d;
                d.src = L.signal_word;
                d.dst = chip_of(z) == chip_of(a) ? reg : link::global_address(chip_of(z), reg);
                d.row_bytes = core::core_config::SEM_REGISTER_BYTES;
                d.control = true;  // a semaphore write: the engines serve it ahead of their queued data
                // On queues of their own: a signal waits for its step, and must not hold up data movement behind it.
                prog(a).dma[L.dma_queues + queue_of(next_signal_queue[a], st.lane)].push_back(dma_instruction(mine, -1, d));
                ++out.dma_instructions;
                ++out.remote_signals;
            }
        }
    }
    return out;
}

}  // namespace trnsim::tb
