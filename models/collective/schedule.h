// Collective operations as schedules: a DAG of copy and reduce steps over per-chip buffers.
//
// This is the one contract between the collective algorithms (which build schedules from a topology, plain C++,
// unit-tested without a kernel) and whoever executes them: the reference executor below (host memory, the golden
// model of every collective) and the multi-chip platforms (DMA engines over NeuronLink-style links and the switched
// network, reduction on each chip's reduction engine). An algorithm never knows addresses, links or timing; a
// platform never knows the algorithm.
//
// Buffers: every chip has three buffers of its own, `input` (read only for the collective), `output` and `scratch`
// (receive / staging space), sized by the schedule. A region names bytes in one of them.
//
// Steps:
//   copy   dst := src. src.chip executes it (its DMA pushes the bytes); src.chip and dst.chip may be equal (a local
//          copy), neighbours, or any two chips (the platform routes it over several hops or the network).
//   reduce dst := dst (+) src, elementwise in the schedule's dtype; src.chip == dst.chip, executed by that chip's
//          reduction engine. FP32 sums in FP32; BF16/FP16 decode to FP32, add, round to nearest even (one rounding
//          per reduce step, so results depend on the order the algorithm reduces in: the reference executor applies
//          the same order, and the golden model of an algorithm is its own reference execution).
//   A step may start once every step in `deps` has completed; steps without a path between them may run
//   concurrently, and an algorithm must not let two concurrent steps write overlapping bytes (validate() checks it
//   for writes ordered by no dependency path only on small schedules, see validate()).
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::collective {

enum class op : uint8_t { allreduce, reduce_scatter, allgather, alltoall, broadcast };
enum class algo : uint8_t {
    ring,          // one unidirectional ring over all chips (chip order of the topology)
    bidir_ring,    // the data split in two halves going round the ring in opposite directions
    torus,         // dimension by dimension over a 2D/3D torus (reduce-scatter x, y, z; all-gather z, y, x)
    hierarchical,  // intra-server first, then across servers (the cluster's network), then intra-server again
    direct,        // every chip to every other chip (all-to-all's natural algorithm; also broadcast/allgather)
};

std::string_view name_of(op o);
std::string_view name_of(algo a);
// Parse a name ("allreduce", "all-reduce", "reduce_scatter", ...; "ring", "bidir_ring", "torus", ...); throws
// std::invalid_argument naming the bad value and the accepted ones.
op parse_op(std::string_view s);
algo parse_algo(std::string_view s);

// Which chips exist and how they are numbered. Chip ids are dense, 0 .. chips()-1.
//   ring:    dims = {n, 1, 1}; chip i's neighbours are i-1 and i+1 (mod n).
//   torus:   dims = {x, y, z} (z = 1 for 2D); chip = x + dims[0] * (y + dims[1] * z); wrap-around in every
//            dimension of size > 2.
//   cluster: `servers` servers of chips_per_server chips each; chip = server * chips_per_server + local; the chips of
//            one server form a torus of dims (dims[0]*dims[1]*dims[2] == chips_per_server), the servers are joined
//            by the switched network (any chip's NIC reaches any other server).
//
// Link faults (docs/RELIABILITY.md "Link faults"): `down` lists the link directions (from chip, to chip; neighbours
// of one server) that carry nothing. The ring algorithms on a ring topology consult it: a ring whose + direction
// has a down link runs the other way round, a bidirectional ring keeps only its intact direction, and a ring with
// both directions broken fails naming the links. Other algorithms leave the routing to the platform, which takes
// the other way round the dimension of a down hop (torus_routing.h) or fails before the simulation starts.
struct topology {
    enum class kind : uint8_t { ring, torus, cluster };
    kind k = kind::ring;
    std::array<uint32_t, 3> dims{1, 1, 1};
    uint32_t servers = 1;
    uint32_t chips_per_server = 1;
    std::vector<std::pair<uint32_t, uint32_t>> down;  // link directions that carry nothing (from, to)
    bool link_up(uint32_t from, uint32_t to) const {
        for (const auto& d : down)
            if (d.first == from && d.second == to) return false;
        return true;
    }

    uint32_t chips() const;
    // Coordinates of a chip inside its server's torus, and the inverse.
    std::array<uint32_t, 3> coords(uint32_t chip) const;
    uint32_t server_of(uint32_t chip) const { return k == kind::cluster ? chip / chips_per_server : 0; }
    static topology make_ring(uint32_t n);
    static topology make_torus(uint32_t x, uint32_t y, uint32_t z = 1);
    static topology make_cluster(uint32_t servers, std::array<uint32_t, 3> server_dims);
};

enum class buffer : uint8_t { input, output, scratch };

struct region {
    uint32_t chip = 0;
    buffer buf = buffer::input;
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

enum class step_kind : uint8_t { copy, reduce };

struct step {
    step_kind kind = step_kind::copy;
    region src;
    region dst;                   // dst.bytes == src.bytes
    std::vector<uint32_t> deps;   // indices of earlier steps (deps[i] < this step's index)
    // Which of the algorithm's independent streams the step belongs to (a bidirectional ring's two directions: 0 and
    // 1; 0 for everything else). An executor that serves its work in order keeps the lanes apart.
    uint32_t lane = 0;
};

// What to build. `bytes` is the collective's message size in the nccl-tests sense:
//   allreduce, broadcast: every chip's input and output hold `bytes`;
//   reduce_scatter:       input `bytes`, output bytes / n (chip r gets block r);
//   allgather:            input bytes / n, output `bytes` (chip r's input is block r);
//   alltoall:             input and output `bytes`, block j of chip i's input lands in block i of chip j's output.
// bytes must be a multiple of size_of(dtype); reduce_scatter, allgather and alltoall give every chip a block of the
// same size, so for them bytes must be a multiple of n * size_of(dtype). allreduce and broadcast take any element
// count: where a ring splits the data in n blocks that do not divide evenly, the first blocks get one element more.
// `chunks` > 1 splits each transfer into that many pipelined pieces (element-aligned, the first ones one element
// longer where they do not divide evenly).
struct params {
    op o = op::allreduce;
    algo a = algo::ring;
    numerics::dtype dt = numerics::dtype::fp32;
    uint64_t bytes = 0;
    uint32_t chunks = 1;
    uint32_t root = 0;            // broadcast source
    // The most steps the builder makes: a larger schedule throws std::length_error (schedule_too_large) before it
    // takes the host's memory (the caller sets it from the memory it may use; step ids are 32-bit).
    uint64_t max_steps = UINT32_MAX;
};

// What the builder throws when a schedule would exceed params::max_steps.
struct schedule_too_large : std::length_error {
    using std::length_error::length_error;
};
// Throws schedule_too_large if a schedule of `steps` steps exceeds p.max_steps.
void check_step_budget(const params& p, uint64_t steps);
// An upper bound of the steps build(topo, p) makes, in closed form (nothing is built): chunks x (6 n K + 2 n), n the
// chips and K the chips of the rings a chip takes part in (n for the ring, bidirectional-ring and direct algorithms;
// the sum of the torus dimensions, plus the servers on a cluster, for torus and hierarchical). The schedules hold
// about 3 n (n - 1) steps a chunk for a ring allreduce and 6 n (n - 1) for a bidirectional one (tests/collective
// check every algorithm against it), so the host memory of a schedule is known before it is built.
double step_bound(const topology& topo, const params& p);

struct schedule {
    params p;
    topology topo;
    uint64_t input_bytes = 0;     // per chip
    uint64_t output_bytes = 0;
    uint64_t scratch_bytes = 0;
    // Chips taking part in one collective, for the bus bandwidth: 0 is every chip of topo (build); group schedules
    // (groups.h) set their groups' size (the largest when they differ), a pairwise send 2.
    uint32_t group_chips = 0;
    std::vector<step> steps;
};

// Builds the schedule of p on topo; throws std::invalid_argument naming what is wrong (e.g. "torus algorithm
// needs a torus or cluster topology", "bytes 10 is not a multiple of the fp32 element size 4").
schedule build(const topology& topo, const params& p);

// Structural checks (region bounds, dependency order, reduce on one chip, equal sizes); throws std::logic_error
// naming the step.
void validate(const schedule& s);

// Host buffers of one chip, for the reference executor and for loading/checking a platform's memory.
struct chip_buffers {
    std::vector<uint8_t> input, output, scratch;
};

// dst[i] := dst[i] (+) src[i] for n elements of dt, the reduction rule above (FP32 adds in FP32; narrower types
// decode to FP32, add, round to nearest even). ta, tb: reusable scratch. Executors use it to reduce bit-exactly.
void reduce_into(numerics::dtype dt, void* dst, const void* src, size_t n, std::vector<float>& ta,
                 std::vector<float>& tb);

// Executes s on host buffers in step order (a valid topological order). bufs[i] is chip i's; output and scratch are
// resized to the schedule's sizes.
void execute_reference(const schedule& s, std::vector<chip_buffers>& bufs);

// nccl-tests conventions (docs/collectives.md): algbw = bytes / time; busbw = algbw * bus_factor(op, n), with
// allreduce 2(n-1)/n, reduce_scatter and allgather and alltoall (n-1)/n, broadcast 1.
double bus_factor(op o, uint32_t n);

}  // namespace trnsim::collective
