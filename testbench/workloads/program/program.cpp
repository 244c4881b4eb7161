#include "testbench/chip_probe.h"
#include "testbench/workloads/program/program.h"

#include <cstdio>
#include <cstring>

#include "models/dma/dma_checksum.h"
#include "platforms/single_chip/chip.h"
#include "testbench/stimulus.h"

namespace trnsim::tb {

using config::config_error;

program_result run_program(const platform::platform_config& cfg, const program_file& pf, const sim_options& opt,
                           bool check) {
    const auto& cc = cfg.chip;
    program_result r;
    auto fail = [&](const std::string& path, const std::string& msg) {
        throw config_error(path + ": " + msg + " (in " + pf.file + ")");
    };
    platform::chip chip("chip0", cc);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    // Host: initial memory contents.
    for (const auto& f : pf.init) {
        std::vector<uint8_t> data = f.data;
        if (f.kind == "random") {
            data.resize(f.bytes);
            rng g(f.seed);
            for (auto& b : data) b = uint8_t(g.next() >> 56);
        } else if (f.kind == "zero") {
            data.assign(f.bytes, 0);
        }
        try {
            chip.host_write(f.addr, data.data(), data.size());
        } catch (const std::out_of_range& e) {
            fail(f.path, e.what());
        }
    }
    // What the engines can run (shape limits), expected checksums from memory as initialised.
    std::vector<core::core_program> progs = pf.cores;
    for (size_t c = 0; c < progs.size(); ++c) {
        for (size_t i = 0; i < progs[c].te.size(); ++i) {
            std::string why = chip.cores[c]->te().check(progs[c].te[i].mm);
            if (!why.empty()) fail(pf.where[c].te[i], "the Tensor Engine cannot run this matmul: " + why);
        }
        for (size_t q = 0; q < progs[c].dma.size(); ++q)
            for (size_t i = 0; i < progs[c].dma[q].size(); ++i) {
                if (!pf.where[c].dma_checksum[q][i] || !cfg.functional) continue;
                auto& d = progs[c].dma[q][i].dma;
                try {
                    d.checksum = dma::checksum_of(d, [&](uint64_t a, uint8_t* b, uint64_t n) { chip.host_read(a, b, n); });
                } catch (const std::out_of_range& e) {
                    fail(pf.where[c].dma[q][i], std::string("checksum: the source is not readable: ") + e.what());
                }
            }
    }
    for (size_t c = 0; c < progs.size(); ++c)
        if (!progs[c].empty()) chip.cores[c]->load(std::move(progs[c]));

    sim_probe probe = make_chip_probe(chip);
    r.wall_s = run_to_completion(probe, opt);

    sc_core::sc_time end = last_completion(chip);
    r.sim_ns = end.to_seconds() * 1e9;
    r.stats = chip.stats().flatten();
    for (uint32_t c = 0; c < cc.cores; ++c) {
        const std::string p = "chip0.core" + std::to_string(c);
        r.te_instructions += uint64_t(r.stats[p + ".te.instructions"]);
        r.dma_instructions += uint64_t(r.stats[p + ".dma_instructions"]);
        for (uint32_t e = 0; e < cc.core.dma.engines; ++e) r.dma_bytes += r.stats[p + ".dma" + std::to_string(e) + ".bytes"];
    }
    if (check && cfg.functional && !pf.checks.empty()) {
        r.checked = true;
        for (const auto& k : pf.checks) {
            ++r.checks;
            std::vector<uint8_t> got(k.bytes), want = k.data;
            try {
                chip.host_read(k.addr, got.data(), k.bytes);
                if (k.against_memory) {
                    want.resize(k.bytes);
                    chip.host_read(k.equals_addr, want.data(), k.bytes);
                }
            } catch (const std::out_of_range& e) {
                fail(k.path, e.what());
            }
            r.digests.push_back(digest_hex(got.data(), got.size()));
            if (got == want) continue;
            ++r.failed;
            if (r.first_failure.empty()) {
                uint64_t i = 0;
                while (got[i] == want[i]) ++i;
                char buf[200];
                std::snprintf(buf, sizeof buf, "%s: byte %llu (address 0x%llx) is 0x%02x, expected 0x%02x", k.path.c_str(),
                              (unsigned long long)i, (unsigned long long)(k.addr + i), got[i], want[i]);
                r.first_failure = buf;
            }
        }
        r.pass = r.failed == 0;
    }
    return r;
}

} // namespace trnsim::tb
