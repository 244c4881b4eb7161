#include "testbench/workloads/collective/collective_run.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

#include "testbench/workloads/collective/executor.h"

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

    platform::multichip_platform plat("platform", cfg);
    collective_executor ex("executor", plat, s);

    // Real data costs about three buffers per chip (input, output, scratch) in the chips' memories, and with the
    // check the reference's outputs: the reference runs first (its inputs and scratch are freed before the
    // simulation allocates anything), and each chip's input is generated again from the seed into one host buffer
    // to be loaded, so at no time do the reference and the simulation both hold inputs and scratch.
    std::vector<std::vector<uint8_t>> want;
    if (cfg.functional && opt.check) {
        std::vector<collective::chip_buffers> ref(r.chips);
        for (uint32_t c = 0; c < r.chips; ++c) {
            ref[c].input.resize(s.input_bytes);
            fill_input(ref[c].input, p.dt, opt.seed, c);
        }
        collective::execute_reference(s, ref);
        want.resize(r.chips);
        for (uint32_t c = 0; c < r.chips; ++c) {
            want[c] = std::move(ref[c].output);
            std::vector<uint8_t>().swap(ref[c].input);
            std::vector<uint8_t>().swap(ref[c].scratch);
        }
    }
    if (cfg.functional) {
        std::vector<uint8_t> in(s.input_bytes);
        for (uint32_t c = 0; c < r.chips; ++c) {
            fill_input(in, p.dt, opt.seed, c);
            plat.chip(c).load(ex.buffer_address(c, collective::buffer::input), in.data(), s.input_bytes);
        }
    }

    sim_probe probe;
    probe.finished = [&] { return ex.finished(); };
    probe.progress = [&] { return ex.completed(); };
    probe.progress_text = [&] {
        return std::to_string(ex.completed()) + "/" + std::to_string(s.steps.size()) + " collective steps";
    };
    probe.stuck = [&] {
        return std::vector<std::string>{"collective executor: " + std::to_string(ex.completed()) + " of " +
                                        std::to_string(s.steps.size()) + " steps complete, " +
                                        std::to_string(ex.issued()) + " issued"};
    };
    sim_options so = opt.sim;
    so.slice = sc_core::sc_time(1, sc_core::SC_MS);
    r.wall_s = run_to_completion(probe, so);

    r.copies = ex.copies();
    r.reduces = ex.reduces();
    r.copy_bytes = ex.copy_bytes();
    uint64_t ps = ex.end_ps() - ex.start_ps();
    r.sim_ns = double(ps) / 1000.0;
    r.algbw_gbps = ps ? double(p.bytes) / r.sim_ns : 0;
    r.busbw_gbps = r.algbw_gbps * collective::bus_factor(p.o, s.group_chips ? s.group_chips : r.chips);
    r.util = plat.utilisation_summary(ps);
    if (r.chips <= 4096) r.stats = plat.stats().flatten();

    if (!want.empty()) {
        r.checked = true;
        size_t es = numerics::size_of(p.dt);
        std::vector<uint8_t> got(s.output_bytes);
        for (uint32_t c = 0; c < r.chips; ++c) {
            plat.chip(c).dump(ex.buffer_address(c, collective::buffer::output), got.data(), s.output_bytes);
            const auto& w = want[c];
            for (uint64_t i = 0; i + es <= s.output_bytes; i += es) {
                if (std::memcmp(got.data() + i, w.data() + i, es) == 0) continue;
                if (r.mismatches++ == 0) {
                    float g = 0, x = 0;
                    numerics::decode(p.dt, got.data() + i, &g, 1);
                    numerics::decode(p.dt, w.data() + i, &x, 1);
                    char buf[160];
                    std::snprintf(buf, sizeof buf, "chip %u output element %llu: got %.9g, reference %.9g", c,
                                  static_cast<unsigned long long>(i / es), double(g), double(x));
                    r.first_mismatch = buf;
                }
            }
        }
        r.pass = r.mismatches == 0;
    }
    return r;
}

}  // namespace trnsim::tb
