// Lowers a collective::schedule to the instruction streams full chips run (the multi-chip platforms' members made
// of the modelled chip, platforms/single_chip): nothing computes completion times, the chips' own engines do the work.
//
//   copy step    DMA instructions (pieces of up to copy_piece bytes) on the source chip: its input/output/scratch
//                region in HBM to the destination chip's region (a global address: NoC -> fabric router -> links / network -> the other chip's fabric
//                router -> its NoC -> its HBM), or a chip-local address for a copy inside one chip.
//   reduce step  dst := dst (+) src in HBM, through SBUF in tiles of up to `partitions` x `tile_free` elements: two
//                DMA loads into a staging slot, a Vector Engine add (FP32 arithmetic, the result rounded once into
//                the dtype, as collective::reduce_into), a DMA store back to dst. `slots` staging slots rotate, so
//                loads of later tiles overlap the add and store of earlier ones.
//                With reduce_by_dma: one accumulating DMA copy per tile, src into dst in HBM (the DMA engine
//                reads both, adds as collective::reduce_into does, writes dst), spread over the cores like local copies.
//   dependencies a dependency on a step of the same chip waits on that step's semaphores; one on another chip's
//                step waits on a semaphore that the other chip's DMA signals when the step is done, by writing the
//                waiting core's semaphore register over the fabric (core_config::sem_base; one 8-byte write, whose
//                data is ignored).
// The work is spread over `cores` NeuronCores of the chip from first_core (0 unless the layout says otherwise):
// copies to other chips run on the first of them and a reduce's tiles rotate over the others (each core stages in its own SBUF and adds on its own Vector Engine; a DMA engine serves its
// descriptors in order, so a copy's descriptors on a core would sit in front of that core's tile loads); on a core, DMA instructions rotate over
// `dma_queues` queues and are dealt to that core's DMA engines, and the semaphore signals rotate over as many queues
// of their own (a signal waits for its step: in a data queue it would hold up the transfers behind it). A dependency between two cores of one chip is a
// semaphore-register write over the NoC, as between chips.
// Instructions are generated in step order, and every wait names an instruction generated earlier, so no queue can
// wait on one behind it: the lowered program cannot deadlock.
// Plain C++ (no SystemC): the streams are built and checked without a kernel.
#pragma once
#include <cstdint>
#include <vector>

#include "models/collective/schedule.h"
#include "models/core/instruction.h"

namespace trnsim::tb {

// Where things are on every chip (all chips alike) and how the lowering cuts the work.
struct lowering_layout {
    uint64_t input = 0, output = 0, scratch = 0;  // chip-local addresses of the three buffers (in HBM)
    uint64_t signal_word = 0;   // chip-local address of 8 readable bytes (the source of remote signal writes)
    uint32_t cores = 1;         // NeuronCores used per chip: first_core .. first_core + cores - 1
    // Collectives that run at the same time on a chip (a step's tensor-parallel all-reduces and its gradient
    // buckets) each on cores of their own, so that neither waits behind the other's descriptors in a DMA engine's
    // queue (the model's engines serve their descriptors in order; the hardware arbitrates between 16 queues per
    // engine, docs/sources.md). The programs of the cores below first_core are empty.
    uint32_t first_core = 0;
    uint64_t core_base = 0, core_stride = 0;  // chip-local address of core i's window: core_base + i * core_stride
    uint64_t sbuf_core = 0;     // core-local address of the SBUF (the Vector Engine's operands)
    uint64_t sem_core = 0;      // core-local address of semaphore register 0
    uint32_t partitions = 128;
    uint64_t partition_bytes = 0;  // SBUF partition stride
    uint32_t tile_free = 2048;     // elements per partition per staged operand
    uint32_t slots = 4;            // staging slots (each two operands of tile_free elements per partition)
    uint32_t dma_queues = 16;
    uint64_t copy_piece = uint64_t(1) << 30;  // a copy step is cut in DMA instructions of at most this many bytes
    uint32_t max_semaphores = 131072;  // the semaphore registers a core has (core_config::SEM_WINDOW_BYTES / 8)
    // Sharing the cores with another program (trnsim run --platform --concurrent): the collective's semaphores
    // start at sem_first, and its staging slots use staging_bytes of each partition from sbuf_core (0: all of it).
    uint32_t sem_first = 0;
    uint64_t staging_bytes = 0;
    // Reduce steps as accumulating DMA copies (dma_descriptor::reduce, HBM to HBM, no staging, no Vector Engine)
    // instead of the staged Vector Engine add (chip.collective_reduce = "dma").
    bool reduce_by_dma = false;
    // A copy to another chip that no step of that chip depends on also signals the destination chip (a register
    // write to its core 0 once the copy has landed), so that every chip can tell when all its output has arrived
    // (op_sequence.h: an operation has finished on a core when the signals aimed at it have landed).
    bool notify_landing = false;
};

struct lowered_collective {
    std::vector<std::vector<core::core_program>> programs;  // [chip][core]
    uint64_t dma_instructions = 0, vector_instructions = 0, remote_signals = 0, tiles = 0;
};

// Throws std::invalid_argument naming what does not fit (staging slots larger than an SBUF partition, more
// semaphores than a core has registers).
lowered_collective lower(const collective::schedule& s, const lowering_layout& L);

}  // namespace trnsim::tb
