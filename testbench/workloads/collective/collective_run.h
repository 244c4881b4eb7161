// Runs one collective end to end on a multi-chip platform from config: builds the schedule of the algorithm on the
// platform's topology, loads every chip's input (seeded random values of the dtype), executes the schedule with
// collective_executor, and (functional runs) compares every byte of every chip's output with
// collective::execute_reference on the same inputs.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/collective/schedule.h"
#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"
#include "testbench/sim_run.h"
#include "tlm/stats.h"

namespace trnsim::tb {

struct collective_options {
    bool check = true;       // functional runs: compare with the reference execution
    uint64_t seed = 1;
    sim_options sim;
    // Full chips: called once the platform is built, before time 0 (observers attach here: a timeline gives each
    // chip a track group of its own, with its links).
    std::function<void(platform::multichip_platform&)> on_platform;
    // Full chips: copies cut in DMA instructions of at most this many bytes (0: lowering_layout's default).
    uint64_t copy_piece = 0;
    // Full chips: the cores the collective runs on, [first_core, first_core + cores) (cores 0: all of them).
    uint32_t first_core = 0, cores = 0;
    // Full chips: an all-reduce in place, its output over its input (as a training step all-reduces an activation
    // where it lies). The ring-family schedules read a chip's input block only before the reduced block that
    // replaces it can exist (it depends on that read), so the lowered steps need nothing more; ring, bidir_ring and
    // torus all-reduces only (std::invalid_argument otherwise).
    bool in_place = false;
    // Full chips, in place: the buffer at this offset from the HBM base, and the collective's scratch in the region
    // from `region_at` (as a training step reduces an activation where it lies and keeps each stream's scratch in a
    // region of its own: under the channel hash the time depends on where the buffers are). 0: the layout's own.
    uint64_t tensor_at = 0, region_at = 0;
    // Full chips: every copy into another chip also signals that chip once landed (lowering_layout::notify_landing),
    // as the collectives of a training step simulated whole are lowered.
    bool notify_landing = false;
    // Full chips: chip c's part starts chip_start_ns[c] ns late (chips missing from the end: at 0), as chips arrive
    // at a collective out of step from the compute before it. Every queue of the chip's cores first waits for a
    // semaphore that a write to its register sets at that time, as a runtime starts a chip's streams.
    std::vector<double> chip_start_ns;
};

struct collective_result {
    collective::params p;
    uint32_t chips = 0;
    size_t steps = 0, copies = 0, reduces = 0;
    uint64_t copy_bytes = 0;
    double sim_ns = 0;        // first step issued to last step completed
    double algbw_gbps = 0;    // bytes / time (nccl-tests: GB/s = 1e9 B/s)
    double busbw_gbps = 0;    // algbw * bus_factor(op, n), n = the schedule's group_chips (0: all chips)
    double wall_s = 0;        // simulation only
    double build_s = 0;       // building the schedule
    bool functional = true;
    bool checked = false, pass = false;
    uint64_t mismatches = 0;  // elements whose bits differ from the reference
    std::string first_mismatch;
    // Full-chip platforms: the instructions the schedule was lowered to (lowering.h).
    uint64_t lowered_dma = 0, lowered_vector = 0, remote_signals = 0;
    uint64_t input_addr = 0, output_addr = 0;  // where the input and output are on every chip (chip-local HBM)
    std::vector<platform::multichip_platform::utilisation> util;
    std::map<std::string, double> stats;
};

// Throws std::invalid_argument for a bad request (single-chip platform, bytes the op cannot split, ...).
collective_result run_collective(const platform::platform_config& cfg, const collective::params& p,
                                 const collective_options& opt);
// Runs a schedule built elsewhere (collective/groups.h: concurrent group collectives, point-to-point sends) the
// same way. result.chips is the platform's chip count.
collective_result run_schedule(const platform::platform_config& cfg, const collective::schedule& s,
                               const collective_options& opt);

// Where a collective's buffers and staging live on a full chip of cfg (lowering.h); throws std::invalid_argument
// if the buffers do not fit the chip's HBM.
struct lowering_layout;
// `hbm_from` (0: chip.address_map.hbm_base), `sbuf_from` (bytes of each SBUF partition left to another program),
// `sem_first` (semaphores left to another program): where to start when the chips run something else too.
lowering_layout full_chip_layout(const platform::platform_config& cfg, const collective::schedule& s,
                                 uint64_t hbm_from = 0, uint64_t sbuf_from = 0, uint32_t sem_first = 0);
// Whether an all-reduce by algorithm a can reduce in place (its output over its input: ring, bidir_ring, torus).
bool reduces_in_place(collective::algo a);

// The full-chip placement options of opt (copy_piece, first_core and cores, in_place) applied to layout L.
void apply_options(lowering_layout& L, const collective::schedule& s, const collective_options& opt);
// Throws std::invalid_argument for cores that are not the chip's, or in place for an operation or algorithm that
// cannot run so.

// Every chip's expected output (collective::execute_reference on the inputs fill_input makes from `seed`).
std::vector<std::vector<uint8_t>> reference_outputs(const collective::schedule& s, uint32_t chips, uint64_t seed);
// Compares every chip's output (read_output(chip, buffer of s.output_bytes)) with `want`: the mismatching elements,
// and the first one described in `first`.
uint64_t compare_outputs(const collective::schedule& s, const std::vector<std::vector<uint8_t>>& want,
                         const std::function<void(uint32_t, uint8_t*)>& read_output, std::string& first);

// Fills one chip's input deterministically from (seed, chip) with finite values of dtype t.
void fill_input(std::vector<uint8_t>& buf, numerics::dtype t, uint64_t seed, uint32_t chip);

}  // namespace trnsim::tb
