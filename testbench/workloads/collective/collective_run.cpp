#include "testbench/workloads/collective/collective_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>

#include "testbench/chip_probe.h"
#include "testbench/workloads/collective/executor.h"
#include "testbench/workloads/collective/lowering.h"

namespace trnsim::tb {

void fill_input(std::vector<uint8_t>& buf, numerics::dtype t, uint64_t seed, uint32_t chip) {
    size_t es = numerics::size_of(t);
    size_t n = buf.size() / es;
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + chip + 1);
    // Small integers plus a fraction: sums stay well inside every type's range and rounding still happens.
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    std::vector<float> f(n);
    for (auto& v : f) v = u(rng);
    numerics::encode(t, f.data(), buf.data(), n);
}

static void require_multichip(const platform::platform_config& cfg) {
    if (cfg.multichip.kind == platform::platform_kind::single_chip)
        throw std::invalid_argument("platform '" + cfg.preset + "' is a single chip: collectives need a server or "
                                    "cluster platform (trnsim list)");
}

namespace {

// collective_options::chip_start_ns: at most one time per chip, each >= 0.
void check_chip_starts(const std::vector<double>& start_ns, uint32_t chips) {
    if (start_ns.size() > chips)
        throw std::invalid_argument("collective: chip_start_ns has " + std::to_string(start_ns.size()) +
                                    " entries, the platform " + std::to_string(chips) + " chips");
    for (size_t c = 0; c < start_ns.size(); ++c)
        if (!(start_ns[c] >= 0) || !std::isfinite(start_ns[c]))
            throw std::invalid_argument("collective: chip_start_ns[" + std::to_string(c) + "] must be >= 0 ns, not " +
                                        std::to_string(start_ns[c]));
}

// On every core of a chip that starts late, a semaphore of its own (the same index on each) that the first
// instruction of each of its queues waits for; returned per chip (0 for a chip at 0, which waits for none).
std::vector<uint32_t> hold_until_started(lowered_collective& low, const lowering_layout& L,
                                         const std::vector<double>& start_ns) {
    std::vector<uint32_t> sems(start_ns.size(), 0);
    for (uint32_t c = 0; c < start_ns.size(); ++c) {
        if (start_ns[c] == 0) continue;
        uint32_t sem = 0;
        for (uint32_t k = L.first_core; k < L.first_core + L.cores; ++k) sem = std::max(sem, low.programs[c][k].semaphores);
        sems[c] = sem;
        for (uint32_t k = L.first_core; k < L.first_core + L.cores; ++k) {
            core::core_program& pr = low.programs[c][k];
            pr.semaphores = sem + 1;
            auto hold = [sem](std::vector<core::instruction>& q) {
                if (!q.empty()) q.front().waits.insert(q.front().waits.begin(), core::sem_wait{sem, 1});
            };
            for (auto& q : pr.dma) hold(q);
            hold(pr.vector);
            hold(pr.scalar);
            hold(pr.te);
        }
    }
    return sems;
}

// A write to semaphore register `sem` of core k landing `at_ns` from now, through its register port.
void write_semaphore(core::neuron_core& k, uint32_t sem, double at_ns) {
    uint8_t one[core::core_config::SEM_REGISTER_BYTES] = {1};
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(uint64_t(sem) * core::core_config::SEM_REGISTER_BYTES);
    gp.set_data_ptr(one);
    gp.set_data_length(sizeof one);
    gp.set_streaming_width(sizeof one);
    sc_core::sc_time delay(at_ns, sc_core::SC_NS);
    k.sem_regs.get_base_export()->b_transport(gp, delay);
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::logic_error(std::string(k.name()) + ": the start semaphore write failed");
}

}  // namespace

collective_result run_collective(const platform::platform_config& cfg, const collective::params& p,
                                 const collective_options& opt) {
    using clock = std::chrono::steady_clock;
    require_multichip(cfg);
    auto t0 = clock::now();
    collective::schedule s = collective::build(cfg.multichip.topo, p);
    const double build_s = std::chrono::duration<double>(clock::now() - t0).count();
    collective_result r = run_schedule(cfg, s, opt);
    r.build_s += build_s;
    return r;
}

collective_result run_schedule(const platform::platform_config& cfg, const collective::schedule& s,
                               const collective_options& opt) {
    using clock = std::chrono::steady_clock;
    collective_result r;
    const collective::params& p = s.p;
    r.p = p;
    r.functional = cfg.functional;
    const auto& mc = cfg.multichip;
    require_multichip(cfg);
    auto t0 = clock::now();
    if (s.steps.size() <= 200000) collective::validate(s);
    // Down links: every copy must have a route before anything runs (the watchdog is not what should catch it).
    std::string cut = platform::unroutable_copy(mc, s);
    if (!cut.empty()) throw std::invalid_argument(cut);
    r.build_s = std::chrono::duration<double>(clock::now() - t0).count();
    r.chips = mc.chips();
    r.steps = s.steps.size();
    check_chip_starts(opt.chip_start_ns, r.chips);

    platform::multichip_platform plat("platform", cfg);
    // The chips' side of the run: a light-chip platform executes the schedule with collective_executor, a platform
    // of full chips runs it lowered to every chip's instruction streams (lowering.h).
    std::function<void(uint32_t, const uint8_t*)> load_input;
    std::function<void(uint32_t, uint8_t*)> read_output;
    std::function<uint64_t()> end_ps;
    std::unique_ptr<collective_executor> ex;
    sim_probe probe;
    if (plat.any_full()) {
        if (!plat.all_full())
            throw std::invalid_argument("chips.full: a collective needs every chip of the platform to be a full chip "
                                        "(chips.model: \"full\") or every one light; this platform mixes them");
        lowering_layout L = full_chip_layout(cfg, s, opt.region_at ? cfg.chip.hbm_base + opt.region_at : 0);
        if (opt.tensor_at) {
            if (!opt.in_place) throw std::invalid_argument("collective: a tensor's place (tensor_at) needs in_place");
            if (opt.tensor_at + s.input_bytes > cfg.chip.hbm.capacity_bytes)
                throw std::invalid_argument("collective: the tensor at offset " + std::to_string(opt.tensor_at) +
                                            " (" + std::to_string(s.input_bytes) + " bytes) is beyond the chip's HBM");
            L.input = cfg.chip.hbm_base + opt.tensor_at;
        }
        apply_options(L, s, opt);
        r.input_addr = L.input, r.output_addr = L.output;
        lowered_collective low = lower(s, L);
        const std::vector<uint32_t> start_sems = hold_until_started(low, L, opt.chip_start_ns);
        size_t to_spawn = 0;
        for (const auto& chip_programs : low.programs)
            for (const auto& prog : chip_programs) to_spawn += core::neuron_core::threads_for(prog);
        check_thread_stacks("platform '" + cfg.preset + "' (" + std::to_string(r.chips) + " full chips)", to_spawn);
        if (opt.on_platform) opt.on_platform(plat);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: the chips' bindings are final, time is 0
        r.lowered_dma = low.dma_instructions;
        r.lowered_vector = low.vector_instructions;
        r.remote_signals = low.remote_signals;
        std::vector<core::neuron_core*> cores;
        for (uint32_t c = 0; c < r.chips; ++c)
            for (uint32_t k = L.first_core; k < L.first_core + L.cores; ++k) {
                cores.push_back(plat.full_chip(c)->cores[k].get());
                cores.back()->load(std::move(low.programs[c][k]));
                if (c < start_sems.size() && opt.chip_start_ns[c] > 0)
                    write_semaphore(*cores.back(), start_sems[c], opt.chip_start_ns[c]);
            }
        load_input = [&plat, &s, L](uint32_t c, const uint8_t* in) {
            plat.full_chip(c)->host_write(L.input, in, s.input_bytes);
        };
        read_output = [&plat, &s, L](uint32_t c, uint8_t* out) {
            plat.full_chip(c)->host_read(L.output, out, s.output_bytes);
        };
        end_ps = [cores] { return uint64_t(last_completion(cores).value()); };
        probe = make_cores_probe(cores);
        probe.progress_text = [cores] {
            size_t done = 0;
            for (auto* k : cores) done += k->finished();
            return std::to_string(done) + "/" + std::to_string(cores.size()) + " cores finished";
        };
        probe.stuck = [all = probe.stuck] {
            auto out = all();
            if (out.size() > 64) out.resize(64);  // a deadlock of many chips: the first 64 lines
            return out;
        };
    } else {
        if (std::any_of(opt.chip_start_ns.begin(), opt.chip_start_ns.end(), [](double t) { return t > 0; }))
            throw std::invalid_argument("collective: chip_start_ns holds back full chips' instruction streams; this "
                                        "platform's chips are light");
        ex = std::make_unique<collective_executor>("executor", plat, s);
        load_input = [&](uint32_t c, const uint8_t* in) {
            plat.chip(c).load(ex->buffer_address(c, collective::buffer::input), in, s.input_bytes);
        };
        read_output = [&](uint32_t c, uint8_t* out) {
            plat.chip(c).dump(ex->buffer_address(c, collective::buffer::output), out, s.output_bytes);
        };
        end_ps = [&] { return ex->end_ps() - ex->start_ps(); };
        probe.finished = [&] { return ex->finished(); };
        probe.progress = [&] { return ex->completed(); };
        probe.progress_text = [&] {
            return std::to_string(ex->completed()) + "/" + std::to_string(s.steps.size()) + " collective steps";
        };
        probe.stuck = [&] {
            return std::vector<std::string>{"collective executor: " + std::to_string(ex->completed()) + " of " +
                                            std::to_string(s.steps.size()) + " steps complete, " +
                                            std::to_string(ex->issued()) + " issued"};
        };
    }

    // Real data costs about three buffers per chip (input, output, scratch) in the chips' memories, and with the
    // check the reference's outputs: the reference runs first (its inputs and scratch are freed before the
    // simulation allocates anything), and each chip's input is generated again from the seed into one host buffer
    // to be loaded, so at no time do the reference and the simulation both hold inputs and scratch.
    std::vector<std::vector<uint8_t>> want;
    if (cfg.functional && opt.check) want = reference_outputs(s, r.chips, opt.seed);
    if (cfg.functional) {
        std::vector<uint8_t> in(s.input_bytes);
        for (uint32_t c = 0; c < r.chips; ++c) {
            fill_input(in, p.dt, opt.seed, c);
            load_input(c, in.data());
        }
    }

    sim_options so = opt.sim;
    so.slice = sc_core::sc_time(1, sc_core::SC_MS);
    r.wall_s = run_to_completion(probe, so);

    for (const auto& st : s.steps) {
        if (st.kind == collective::step_kind::copy) {
            ++r.copies;
            r.copy_bytes += st.src.bytes;
        } else {
            ++r.reduces;
        }
    }
    uint64_t ps = end_ps();
    r.sim_ns = double(ps) / 1000.0;
    r.algbw_gbps = ps ? double(p.bytes) / r.sim_ns : 0;
    r.busbw_gbps = r.algbw_gbps * collective::bus_factor(p.o, s.group_chips ? s.group_chips : r.chips);
    r.util = plat.utilisation_summary(ps);
    if (r.chips <= 4096) r.stats = plat.stats().flatten();

    if (!want.empty()) {
        r.checked = true;
        r.mismatches = compare_outputs(s, want, read_output, r.first_mismatch);
        r.pass = r.mismatches == 0;
    }
    return r;
}

std::vector<std::vector<uint8_t>> reference_outputs(const collective::schedule& s, uint32_t chips, uint64_t seed) {
    // Real data costs about three buffers per chip (input, output, scratch) in the chips' memories, and with the
    // check the reference's outputs: the reference runs first (its inputs and scratch are freed before the
    // simulation allocates anything), and each chip's input is generated again from the seed into one host buffer
    // to be loaded, so at no time do the reference and the simulation both hold inputs and scratch.
    std::vector<collective::chip_buffers> ref(chips);
    for (uint32_t c = 0; c < chips; ++c) {
        ref[c].input.resize(s.input_bytes);
        fill_input(ref[c].input, s.p.dt, seed, c);
    }
    collective::execute_reference(s, ref);
    std::vector<std::vector<uint8_t>> want(chips);
    for (uint32_t c = 0; c < chips; ++c) {
        want[c] = std::move(ref[c].output);
        std::vector<uint8_t>().swap(ref[c].input);
        std::vector<uint8_t>().swap(ref[c].scratch);
    }
    return want;
}

uint64_t compare_outputs(const collective::schedule& s, const std::vector<std::vector<uint8_t>>& want,
                         const std::function<void(uint32_t, uint8_t*)>& read_output, std::string& first) {
    uint64_t mismatches = 0;
    const size_t es = numerics::size_of(s.p.dt);
    std::vector<uint8_t> got(s.output_bytes);
    for (uint32_t c = 0; c < want.size(); ++c) {
        read_output(c, got.data());
        const auto& w = want[c];
        for (uint64_t i = 0; i + es <= s.output_bytes; i += es) {
            if (std::memcmp(got.data() + i, w.data() + i, es) == 0) continue;
            if (mismatches++ == 0) {
                float g = 0, x = 0;
                numerics::decode(s.p.dt, got.data() + i, &g, 1);
                numerics::decode(s.p.dt, w.data() + i, &x, 1);
                char buf[160];
                std::snprintf(buf, sizeof buf, "chip %u output element %llu: got %.9g, reference %.9g", c,
                              static_cast<unsigned long long>(i / es), double(g), double(x));
                first = buf;
            }
        }
    }
    return mismatches;
}

namespace {

// The output of L's all-reduce over its input.
void in_place(lowering_layout& L, const collective::schedule& s) {
    const auto a = s.p.a;
    if (s.p.o != collective::op::allreduce || !reduces_in_place(a))
        throw std::invalid_argument(std::string("collective in place: an all-reduce over a ring, bidir_ring or torus, "
                                                "not ") + std::string(collective::name_of(s.p.o)) + " (" +
                                    std::string(collective::name_of(a)) + ")");
    L.output = L.input;
}

// L on `count` cores from `first` (count 0: the rest of the chip's).
void use_cores(lowering_layout& L, uint32_t first, uint32_t count) {
    const uint32_t all = L.first_core + L.cores;
    if (count == 0) count = all - first;
    if (first >= all || count > all - first)
        throw std::invalid_argument("collective: cores " + std::to_string(first) + " .. " +
                                    std::to_string(first + count - 1) + " are not among the chip's " +
                                    std::to_string(all));
    L.first_core = first, L.cores = count;
}

} // namespace

bool reduces_in_place(collective::algo a) {
    return a == collective::algo::ring || a == collective::algo::bidir_ring || a == collective::algo::torus;
}

void apply_options(lowering_layout& L, const collective::schedule& s, const collective_options& opt) {
    if (opt.copy_piece) L.copy_piece = opt.copy_piece;
    use_cores(L, opt.first_core, opt.cores);
    if (opt.in_place) in_place(L, s);
    if (opt.notify_landing) L.notify_landing = true;
}

lowering_layout full_chip_layout(const platform::platform_config& cfg, const collective::schedule& s, uint64_t hbm_from,
                                 uint64_t sbuf_from, uint32_t sem_first) {
    const auto& ch = cfg.chip;
    auto align = [](uint64_t v) { return (v + 4095) & ~uint64_t(4095); };
    lowering_layout L;
    L.input = hbm_from ? align(hbm_from) : ch.hbm_base;
    L.output = L.input + align(s.input_bytes);
    L.scratch = L.output + align(s.output_bytes);
    L.signal_word = L.scratch + align(s.scratch_bytes);
    const uint64_t need = L.signal_word + 4096 - ch.hbm_base;
    if (need > ch.hbm.capacity_bytes)
        throw std::invalid_argument("the collective needs " + std::to_string(need - (L.input - ch.hbm_base)) +
                                    " bytes of HBM per chip (input, output, scratch)" +
                                    (L.input > ch.hbm_base ? " beside the " + std::to_string(L.input - ch.hbm_base) +
                                                                 " bytes of the GEMM's operands"
                                                           : std::string()) +
                                    ", a full chip has " + std::to_string(ch.hbm.capacity_bytes) + " (chip.hbm)");
    L.cores = ch.cores;
    L.reduce_by_dma = ch.collective_reduce == platform::chip_config::reduce_engine::dma;
    L.core_base = ch.core_base;
    L.core_stride = ch.core_stride;
    L.sbuf_core = ch.core.sbuf_base + sbuf_from;
    L.sem_first = sem_first;
    L.sem_core = ch.core.sem_register(0);
    L.partitions = ch.core.sbuf.partitions;
    L.partition_bytes = ch.core.sbuf.partition_bytes;
    L.max_semaphores = uint32_t(core::core_config::SEM_WINDOW_BYTES / core::core_config::SEM_REGISTER_BYTES);
    // Staging: four slots of two operands of at most 512 elements per partition (256 KiB FP32 tiles), within a
    // quarter of a partition.
    const uint64_t es = numerics::size_of(s.p.dt);
    L.slots = 4;
    L.staging_bytes = sbuf_from < L.partition_bytes ? L.partition_bytes - sbuf_from : 0;
    L.tile_free = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(512, L.staging_bytes / (2 * L.slots * es))));
    if (sbuf_from && L.staging_bytes == 0)
        throw std::invalid_argument("the collective has no SBUF left for its staging slots (the other program uses " +
                                    std::to_string(sbuf_from) + " bytes of every partition)");
    return L;
}

}  // namespace trnsim::tb
