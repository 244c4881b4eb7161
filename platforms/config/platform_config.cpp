#include "platforms/config/platform_config.h"

#include <algorithm>
#include <filesystem>

#include "models/numerics/dtype.h"

#ifndef TRNSIM_CONFIG_DIR
#define TRNSIM_CONFIG_DIR "configs"
#endif

namespace trnsim::platform {

using config::config_error;
using config::node;

namespace {

constexpr uint64_t KiB = 1024, GiB = 1024ull * 1024 * 1024;

te::te_config parse_te(const node& n) {
    te::te_config c;
    c.rows = uint32_t(n.get_uint("rows", c.rows, 1, 1024));
    c.cols = uint32_t(n.get_uint("cols", c.cols, 1, 1024));
    c.clock_ghz = n.get_double("clock_ghz", c.clock_ghz, 0.01, 10);
    c.n_max = uint32_t(n.get_uint("n_max", c.n_max, 1, 65536));
    c.ls_rows_per_cycle = uint32_t(n.get_uint("ls_rows_per_cycle", c.ls_rows_per_cycle, 1, 1024));
    c.min_ii = uint32_t(n.get_uint("min_ii", c.min_ii, 1, 65536));
    c.fp32_passes = uint32_t(n.get_uint("fp32_passes", c.fp32_passes, 1, 16));
    c.pipeline_latency = uint32_t(n.get_uint("pipeline_latency", c.pipeline_latency, 0, 1024));
    c.fp8_double_row = n.get_bool("fp8_double_row", c.fp8_double_row);
    c.impl = n.get_choice("impl", "tlm", {"tlm", "rtl"}) == "rtl" ? te::te_impl::rtl : te::te_impl::tlm;
    c.wave_file = n.get_string("wave", "");
    n.finish();
    return c;
}

sram::sram_config parse_sram(const node& n, sram::sram_config c) {
    c.partitions = uint32_t(n.get_uint("partitions", c.partitions, 1, 4096));
    c.partition_bytes = n.get_uint("partition_kib", c.partition_bytes / KiB, 1, 1 << 20) * KiB;
    c.banks = uint32_t(n.get_uint("banks", c.banks, 1, 4096));
    c.bank_bytes_per_ns = n.get_double("bank_gbps", c.bank_bytes_per_ns, 0.001, 1e6);
    c.access_latency_ns = n.get_double("access_latency_ns", c.access_latency_ns, 0, 1e6);
    if (c.partitions % c.banks) n.fail("banks", std::to_string(c.banks) + " does not divide the " +
                                                std::to_string(c.partitions) + " partitions");
    n.finish();
    return c;
}

dma::dma_config parse_dma(const node& n) {
    dma::dma_config c;
    c.engines = uint32_t(n.get_uint("engines", c.engines, 1, 1024));
    c.engine_gbps = n.get_double("engine_gbps", c.engine_gbps, 0.001, 1e6);
    c.max_burst = n.get_uint("max_burst", c.max_burst, 16, 1 << 24);
    c.outstanding = uint32_t(n.get_uint("outstanding", c.outstanding, 1, 256));
    c.descriptor_latency_ns = n.get_double("descriptor_latency_ns", c.descriptor_latency_ns, 0, 1e6);
    n.finish();
    return c;
}

hbm::hbm_config parse_hbm(const node& n) {
    hbm::hbm_config c;
    c.model = n.get_choice("model", c.model, {"simple", "dram"});
    c.stacks = uint32_t(n.get_uint("stacks", c.stacks, 1, 64));
    c.channels_per_stack = uint32_t(n.get_uint("channels_per_stack", c.channels_per_stack, 1, 256));
    c.capacity_bytes = uint64_t(n.get_double("capacity_gib", double(c.capacity_bytes) / double(GiB), 1.0 / 1024, 65536) * double(GiB));
    c.bandwidth_gbps = n.get_double("bandwidth_gbps", c.bandwidth_gbps, 0.001, 1e7);
    c.latency_ns = n.get_double("latency_ns", c.latency_ns, 0, 1e6);
    c.interleave_bytes = n.get_uint("interleave_bytes", c.interleave_bytes, 32, 1 << 30);
    if (c.interleave_bytes & (c.interleave_bytes - 1)) n.fail("interleave_bytes", "must be a power of two");
    c.memspec = n.get_string("memspec", c.memspec);
    c.channel_hash = n.get_bool("channel_hash", c.channel_hash);
    if (c.model == "dram" && c.memspec.empty()) n.fail("memspec", "model \"dram\" needs a memspec (hbm2e, hbm3, hbm3e)");
    n.finish();
    return c;
}

energy::energy_config parse_energy(const node& n) {
    energy::energy_config c;
    node mac = n.child("mac_pj");
    for (size_t i = 0; i < energy::DTYPES; ++i)
        c.mac_pj[i] = mac.get_double(std::string(numerics::name_of(numerics::all_dtypes[i])), c.mac_pj[i], 0, 1e6);
    mac.finish();
    c.sbuf_read_pj_per_byte = n.get_double("sbuf_read_pj_per_byte", c.sbuf_read_pj_per_byte, 0, 1e6);
    c.sbuf_write_pj_per_byte = n.get_double("sbuf_write_pj_per_byte", c.sbuf_write_pj_per_byte, 0, 1e6);
    c.psum_read_pj_per_byte = n.get_double("psum_read_pj_per_byte", c.psum_read_pj_per_byte, 0, 1e6);
    c.psum_write_pj_per_byte = n.get_double("psum_write_pj_per_byte", c.psum_write_pj_per_byte, 0, 1e6);
    c.hbm_pj_per_bit = n.get_double("hbm_pj_per_bit", c.hbm_pj_per_bit, 0, 1e6);
    c.dma_pj_per_byte = n.get_double("dma_pj_per_byte", c.dma_pj_per_byte, 0, 1e6);
    c.noc_pj_per_byte = n.get_double("noc_pj_per_byte", c.noc_pj_per_byte, 0, 1e6);
    c.link_pj_per_bit = n.get_double("link_pj_per_bit", c.link_pj_per_bit, 0, 1e6);
    c.static_w_per_core = n.get_double("static_w_per_core", c.static_w_per_core, 0, 1e6);
    c.static_w_chip = n.get_double("static_w_chip", c.static_w_chip, 0, 1e7);
    c.static_mw_per_pe = n.get_double("static_mw_per_pe", c.static_mw_per_pe, 0, 1e6);
    n.finish();
    return c;
}

core::core_config parse_core(const node& n) {
    core::core_config c;
    c.te = parse_te(n.child("te"));
    sram::sram_config sbuf_def;
    c.sbuf = parse_sram(n.child("sbuf"), sbuf_def);
    sram::sram_config psum_def;
    psum_def.partition_bytes = 16 * KiB;
    psum_def.banks = 128;
    psum_def.bank_bytes_per_ns = 19.2;
    psum_def.accumulate = true;
    c.psum = parse_sram(n.child("psum"), psum_def);
    c.dma = parse_dma(n.child("dma"));
    // Consistency: K lives on SBUF partitions, M on PSUM partitions, one moving tile's results fit a PSUM partition.
    if (c.sbuf.partitions < c.te.rows)
        n.child("sbuf").fail("partitions", std::to_string(c.sbuf.partitions) + " partitions cannot feed " +
                                               std::to_string(c.te.rows) + " array rows (chip.core.te.rows)");
    if (c.psum.partitions < c.te.cols)
        n.child("psum").fail("partitions", std::to_string(c.psum.partitions) + " partitions cannot take " +
                                               std::to_string(c.te.cols) + " array columns (chip.core.te.cols)");
    if (c.psum.partition_bytes < uint64_t(c.te.n_max) * 4)
        n.child("psum").fail("partition_kib", "a PSUM partition of " + std::to_string(c.psum.partition_bytes) +
                                                  " bytes cannot hold one moving tile of n_max = " +
                                                  std::to_string(c.te.n_max) + " FP32 results");
    if (c.sbuf.size() > c.window / 2 || c.psum.size() > c.window / 2)
        n.fail("sbuf", "SBUF or PSUM larger than half the core window");
    n.finish();
    return c;
}

chip_config parse_chip(const node& n) {
    chip_config c;
    c.name = n.get_string("name", c.name);
    c.cores = uint32_t(n.get_uint("cores", c.cores, 1, 256));
    c.core = parse_core(n.child("core"));
    c.hbm = parse_hbm(n.child("hbm"));
    c.energy = parse_energy(n.child("energy"));
    node noc = n.child("noc");
    c.noc.hop_latency_ns = noc.get_double("hop_latency_ns", c.noc.hop_latency_ns, 0, 1e6);
    c.noc.hbm_port_gbps = noc.get_double("hbm_port_gbps", c.noc.hbm_port_gbps, 0, 1e7);
    c.noc.core_port_gbps = noc.get_double("core_port_gbps", c.noc.core_port_gbps, 0, 1e7);
    noc.finish();
    node am = n.child("address_map");
    c.hbm_base = am.get_uint("hbm_base", c.hbm_base, 0, ~0ull);
    c.core_base = am.get_uint("core_base", c.core_base, 0, ~0ull);
    c.core_stride = am.get_uint("core_stride", c.core_stride, 1, ~0ull);
    am.finish();
    if (c.core_stride < c.core.window)
        am.fail("core_stride", "smaller than the core window (" + std::to_string(c.core.window) + " bytes)");
    uint64_t hbm_end = c.hbm_base + c.hbm.capacity_bytes;
    uint64_t cores_end = c.core_base + uint64_t(c.cores) * c.core_stride;
    if (c.hbm_base < cores_end && c.core_base < hbm_end)
        am.fail("core_base", "the core windows overlap HBM [" + std::to_string(c.hbm_base) + ", " + std::to_string(hbm_end) + ")");
    c.headline_bf16_tflops = n.get_double("headline_bf16_tflops", 0, 0, 1e9);
    n.finish();
    return c;
}

} // namespace

std::string default_config_dir() { return TRNSIM_CONFIG_DIR; }

std::vector<std::string> list_presets(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

platform_config parse_platform(const nlohmann::json& j, const std::string& source) {
    node root = node::root(j, source);
    platform_config p;
    p.description = root.get_string("description", "");
    root.get_string("extends", "");  // already resolved by load_platform
    root.get_string("platform", "single_chip");
    p.chip = parse_chip(root.child("chip"));
    node sim = root.child("sim");
    p.functional = sim.get_bool("functional", true);
    p.chip.compute_threads = uint32_t(sim.get_uint("compute_threads", p.chip.compute_threads, 0, 64));
    // Waveform signals in the models (--vcd turns this on): off by default, so models skip them.
    p.chip.core.signals = p.chip.core.te.signals = p.chip.core.dma.signals = sim.get_bool("signals", false);
    sim.finish();
    // Timing-only runs: every model skips its data path, nothing else changes.
    p.chip.core.te.functional = p.chip.core.sbuf.functional = p.chip.core.psum.functional = p.chip.hbm.functional =
        p.functional;
    root.finish();
    p.source = j;
    return p;
}

platform_config load_platform(const std::string& name_or_file, const std::vector<std::string>& overrides,
                              const std::string& dir) {
    namespace fs = std::filesystem;
    auto resolve = [&](const std::string& n) -> std::string {
        if (n.size() > 5 && n.substr(n.size() - 5) == ".json") return n;
        fs::path p = fs::path(dir) / (n + ".json");
        if (!fs::exists(p)) {
            std::string known;
            for (auto& s : list_presets(dir)) known += (known.empty() ? "" : ", ") + s;
            throw config_error("unknown preset '" + n + "' (presets in " + dir + ": " + known + ")");
        }
        return p.string();
    };
    std::string file = resolve(name_or_file);
    nlohmann::json merged = config::load_json_file(file);
    std::vector<std::string> chain{file};
    while (merged.contains("extends")) {
        if (!merged["extends"].is_string()) throw config_error(chain.back() + ": extends: expected a preset name");
        std::string parent = merged["extends"].get<std::string>();
        std::string pf = resolve(parent);
        if (std::find(chain.begin(), chain.end(), pf) != chain.end()) throw config_error(file + ": extends loops through " + pf);
        chain.push_back(pf);
        nlohmann::json base = config::load_json_file(pf);
        merged.erase("extends");
        config::merge(base, merged);
        merged = std::move(base);
    }
    for (const auto& o : overrides) config::apply_override(merged, o);
    platform_config p = parse_platform(merged, file);
    p.preset = fs::path(file).stem().string();
    return p;
}

} // namespace trnsim::platform
