#include "platforms/config/platform_config.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "models/hbm/dram/hbm_dram_config.h"
#include "models/link/global_address.h"
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
    if (!c.wave_file.empty()) {
        if (te::wave_format(c.wave_file).empty())
            n.fail("wave", "'" + c.wave_file + "': the waveform format comes from the extension, .fst or .vcd");
        if (c.impl != te::te_impl::rtl)
            n.fail("wave", "'" + c.wave_file + "': waveforms are of the RTL Tensor Engine, but impl is \"tlm\" (set impl to \"rtl\")");
    }
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
    c.align_bytes = n.get_uint("align_bytes", c.align_bytes, 1, 1 << 20);
    if (c.align_bytes & (c.align_bytes - 1)) n.fail("align_bytes", "must be a power of two");
    c.checksum = n.get_bool("checksum", c.checksum);
    n.finish();
    return c;
}

// chip.hbm keys that only one model reads ("model" and "stacks" are both models'). Naming a key the chosen model
// does not read is an error: nothing in chip.hbm is silently ignored.
const std::vector<std::string>& simple_hbm_keys() {
    static const std::vector<std::string> k = {"channels_per_stack", "capacity_gib", "bandwidth_gbps", "latency_ns",
                                               "interleave_bytes", "channel_hash"};
    return k;
}
const std::vector<std::string>& dram_hbm_keys() {
    static const std::vector<std::string> k = {"memspec", "mapping", "scheduler", "page_policy", "refresh",
                                               "read_queue_depth", "write_queue_depth", "write_high_watermark",
                                               "write_low_watermark"};
    return k;
}
void reject_other_model_keys(const node& n, const std::string& model, const std::string& other,
                             const std::vector<std::string>& keys, const std::string& why) {
    for (const auto& k : keys)
        if (n.has(k))
            n.fail(k, "a setting of chip.hbm.model \"" + other + "\", which model \"" + model + "\" does not use (" +
                          why + "; remove it, or set it to null to drop a preset's value)");
}

// model = "dram": the detailed model's keys go to its parser (which rejects unknown ones); "memspec": "hbm3" names
// configs/memspecs/hbm3.json. Capacity, channels (= pseudo-channels) and bandwidth follow from the memspec.
void parse_hbm_dram(const node& n, hbm::hbm_config& c, const std::string& dir) {
    reject_other_model_keys(n, "dram", "simple", simple_hbm_keys(),
                            "capacity, channels and bandwidth follow from the memspec and stacks");
    nlohmann::json d = n.raw();
    d.erase("model");
    for (auto it = d.begin(); it != d.end();) it = it->is_null() ? d.erase(it) : std::next(it);  // null: not set
    if (d.contains("memspec") && d["memspec"].is_string()) {
        std::string file;
        try {
            file = config::resolve_preset(d["memspec"].get<std::string>(), dir + "/memspecs", "memspec", n.source());
        } catch (const config_error& e) {
            n.fail("memspec", e.what());
        }
        d["memspec"] = config::load_json_file(file);
    }
    auto dram = std::make_shared<hbm::hbm_dram_config>(hbm::parse_hbm_dram_config(node::at(d, n.path(), n.source())));
    c.stacks = dram->stacks;
    c.channels_per_stack = dram->spec.pcs_per_stack();
    c.capacity_bytes = dram->spec.stack_bytes() * dram->stacks;
    c.bandwidth_gbps = dram->spec.pc_peak_gbps() * dram->spec.pcs_per_stack() * dram->stacks;
    c.dram = std::move(dram);
}

hbm::hbm_config parse_hbm(const node& n, const std::string& dir) {
    hbm::hbm_config c;
    c.model = n.get_choice("model", c.model, {"simple", "dram"});
    if (c.model == "dram") {
        parse_hbm_dram(n, c, dir);
        return c;
    }
    reject_other_model_keys(n, "simple", "dram", dram_hbm_keys(), "the simple model has no DRAM timing");
    c.stacks = uint32_t(n.get_uint("stacks", c.stacks, 1, 64));
    c.channels_per_stack = uint32_t(n.get_uint("channels_per_stack", c.channels_per_stack, 1, 256));
    c.capacity_bytes = uint64_t(n.get_double("capacity_gib", double(c.capacity_bytes) / double(GiB), 1.0 / 1024, 65536) * double(GiB));
    c.bandwidth_gbps = n.get_double("bandwidth_gbps", c.bandwidth_gbps, 0.001, 1e7);
    c.latency_ns = n.get_double("latency_ns", c.latency_ns, 0, 1e6);
    c.interleave_bytes = n.get_uint("interleave_bytes", c.interleave_bytes, 32, 1 << 30);
    if (c.interleave_bytes & (c.interleave_bytes - 1)) n.fail("interleave_bytes", "must be a power of two");
    c.channel_hash = n.get_bool("channel_hash", c.channel_hash);
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

// chip.core.vector / chip.core.scalar (docs/vector_engine.md).
ve::ve_config parse_ve(const node& n, ve::ve_config c) {
    c.clock_ghz = n.get_double("clock_ghz", c.clock_ghz, 0.01, 10);
    c.elements_per_cycle = uint32_t(n.get_uint("elements_per_cycle", c.elements_per_cycle, 1, 1 << 16));
    c.elements_per_cycle_16bit =
        uint32_t(n.get_uint("elements_per_cycle_16bit", c.elements_per_cycle_16bit, 0, 1 << 16));
    c.lanes = uint32_t(n.get_uint("lanes", c.lanes, 1, 4096));
    c.pipeline_latency = uint32_t(n.get_uint("pipeline_latency", c.pipeline_latency, 0, 1 << 20));
    c.static_overhead_cycles = uint32_t(n.get_uint("static_overhead_cycles", c.static_overhead_cycles, 0, 1 << 20));
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
    c.vector = parse_ve(n.child("vector"), ve::ve_config{});
    ve::ve_config scalar_def;  // Trainium2 Scalar Engine: 1.2 GHz, 128 elem/cycle (docs/sources.md, NKI2/NC3)
    scalar_def.clock_ghz = 1.2;
    scalar_def.elements_per_cycle = 128;
    scalar_def.scalar = true;
    c.scalar = parse_ve(n.child("scalar"), scalar_def);
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
    // The smallest operand tile a MATMUL can use: one stationary row of `cols` and one moving row of n_max
    // elements of the narrowest type (FP8) per partition. An SBUF partition that cannot hold that holds no tile.
    if (c.sbuf.partition_bytes < uint64_t(c.te.cols) + c.te.n_max)
        n.child("sbuf").fail("partition_kib", "an SBUF partition of " + std::to_string(c.sbuf.partition_bytes) +
                                                  " bytes is smaller than one tile row (" + std::to_string(c.te.cols) +
                                                  " stationary + " + std::to_string(c.te.n_max) +
                                                  " moving FP8 elements, chip.core.te.cols and n_max)");
    if (c.sbuf.size() > c.psum_base - c.sbuf_base || c.psum.size() > c.sem_base - c.psum_base)
        n.fail("sbuf", "SBUF or PSUM larger than its 1 GiB of the core window");
    n.finish();
    return c;
}

// One fault target pattern: "hbm", "hbm.channel<N>", "dma", "core<N>.dma", "core<N>.dma<M>".
struct fault_target {
    const char* pattern;
    std::vector<std::string> kinds;
};
const std::vector<fault_target>& fault_table() {
    static const std::vector<fault_target> t = {
        {"hbm", {"disable", "slow", "corrupt"}},           {"hbm.channel<N>", {"disable", "slow", "corrupt"}},
        {"dma", {"error"}},                                 {"core<N>.dma", {"error"}},
        {"core<N>.dma<M>", {"error"}},
    };
    return t;
}

// Parses "<prefix><number>" at s[pos...]; returns false if it is not that.
bool indexed(const std::string& s, size_t& pos, const std::string& prefix, uint64_t& idx) {
    if (s.compare(pos, prefix.size(), prefix) != 0) return false;
    size_t p = pos + prefix.size(), q = p;
    while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
    if (q == p || q - p > 9) return false;
    idx = std::stoull(s.substr(p, q - p));
    pos = q;
    return true;
}

std::vector<tlmx::fault_spec> parse_faults(const node& chip_node, const chip_config& c) {
    std::vector<tlmx::fault_spec> out;
    for (const node& f : chip_node.children("faults")) {
        tlmx::fault_spec s;
        s.target = f.get_string("target", "");
        if (s.target.empty()) f.fail("target", "required (" + fault_targets_help() + ")");
        // Which pattern, and are its indices in range?
        const fault_target* t = nullptr;
        uint64_t a = 0, b = 0;
        size_t pos = 0;
        const std::string& tg = s.target;
        if (tg == "hbm") t = &fault_table()[0];
        else if (tg.rfind("hbm.", 0) == 0 && (pos = 4, indexed(tg, pos, "channel", a)) && pos == tg.size()) {
            if (a >= c.hbm.channels())
                f.fail("target", "'" + tg + "': the HBM has " + std::to_string(c.hbm.channels()) +
                                     " channels (chip.hbm.stacks x channels_per_stack), numbered from 0");
            t = &fault_table()[1];
        } else if (tg == "dma") t = &fault_table()[2];
        else if ((pos = 0, indexed(tg, pos, "core", a)) && tg.compare(pos, 4, ".dma") == 0) {
            if (a >= c.cores)
                f.fail("target", "'" + tg + "': the chip has " + std::to_string(c.cores) + " cores (chip.cores), numbered from 0");
            pos += 1;
            if (pos + 3 == tg.size()) t = &fault_table()[3];
            else if (indexed(tg, pos, "dma", b) && pos == tg.size()) {
                if (b >= c.core.dma.engines)
                    f.fail("target", "'" + tg + "': a core has " + std::to_string(c.core.dma.engines) +
                                         " DMA engines (chip.core.dma.engines), numbered from 0");
                t = &fault_table()[4];
            }
        }
        if (!t) f.fail("target", "'" + tg + "' is not a fault target (" + fault_targets_help() + ")");
        // The canonical spelling the models match on ("core00.dma02" -> "core0.dma2").
        if (t == &fault_table()[1]) s.target = "hbm.channel" + std::to_string(a);
        else if (t == &fault_table()[3]) s.target = "core" + std::to_string(a) + ".dma";
        else if (t == &fault_table()[4]) s.target = "core" + std::to_string(a) + ".dma" + std::to_string(b);
        s.kind = f.get_string("kind", "");
        if (s.kind.empty() || std::find(t->kinds.begin(), t->kinds.end(), s.kind) == t->kinds.end()) {
            std::string k;
            for (const auto& x : t->kinds) k += (k.empty() ? "" : ", ") + x;
            f.fail("kind", (s.kind.empty() ? std::string("required") : "'" + s.kind + "' is not a fault of " + tg) +
                               " (kinds for " + t->pattern + ": " + k + ")");
        }
        s.from_ns = f.get_double("from_us", 0, 0, 1e12) * 1e3;
        s.until_ns = f.get_double("until_us", 1e300, 0, 1e300) * 1e3;
        if (s.until_ns <= s.from_ns) f.fail("until_us", "must be later than from_us");
        s.after = f.get_uint("after", 0, 0, ~0ull);
        s.count = f.get_uint("count", ~0ull, 1, ~0ull);
        // Parameters belong to one kind each.
        auto only = [&](const char* key, const char* kind) {
            if (f.has(key) && s.kind != kind) f.fail(key, std::string("applies only to kind \"") + kind + "\"");
        };
        only("latency_ns", "slow");
        only("policy", "disable");
        only("on", "corrupt");
        if ((f.has("after") || f.has("count")) && s.kind == "disable")
            f.fail(f.has("after") ? "after" : "count", "a disabled channel stays disabled (use from_us/until_us)");
        s.latency_ns = f.get_double("latency_ns", 0, 0, 1e12);
        if (s.kind == "slow" && s.latency_ns <= 0) f.fail("latency_ns", "required for kind \"slow\" (> 0)");
        s.policy = f.get_choice("policy", "error", {"error", "remap"});
        s.on = f.get_choice("on", "read", {"read", "write"});
        std::string name = f.get_label("name", "");
        s.label = f.path() + " (" + (name.empty() ? tg + ":" + s.kind : name) + ")";
        f.finish();
        out.push_back(s);
    }
    return out;
}

chip_config parse_chip(const node& n, const std::string& dir) {
    chip_config c;
    c.name = n.get_label("name", c.name);
    c.cores = uint32_t(n.get_uint("cores", c.cores, 1, 256));
    c.core = parse_core(n.child("core"));
    c.hbm = parse_hbm(n.child("hbm"), dir);
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
    const uint64_t top = ~0ull;
    if (c.hbm_base > top - c.hbm.capacity_bytes)
        am.fail("hbm_base", config::show_hex(c.hbm_base) + " + the HBM capacity (chip.hbm.capacity_gib) wraps around 2^64");
    if (c.core_stride > (top - c.core.window) / c.cores || c.core_base > top - (uint64_t(c.cores - 1) * c.core_stride + c.core.window))
        am.fail("core_base", config::show_hex(c.core_base) + " + " + std::to_string(c.cores) + " core windows of stride " +
                                 config::show_hex(c.core_stride) + " wrap around 2^64");
    const uint64_t hbm_end = c.hbm_end(), cores_end = c.cores_end();
    if (c.hbm_base < cores_end && c.core_base < hbm_end)
        am.fail("core_base", "the core windows overlap HBM [" + std::to_string(c.hbm_base) + ", " + std::to_string(hbm_end) + ")");
    c.collective_reduce = n.get_choice("collective_reduce", "vector", {"vector", "dma"}) == "dma"
                              ? chip_config::reduce_engine::dma
                              : chip_config::reduce_engine::vector;
    c.headline_bf16_tflops = n.get_double("headline_bf16_tflops", 0, 0, 1e9);
    c.faults = parse_faults(n, c);
    c.hbm.faults = tlmx::faults_under(c.faults, "hbm");
    n.finish();
    return c;
}

} // namespace

std::string fault_targets_help() {
    std::string s;
    for (const auto& t : fault_table()) {
        s += (s.empty() ? "" : "; ") + std::string(t.pattern) + ":";
        for (size_t i = 0; i < t.kinds.size(); ++i) s += (i ? ", " : " ") + t.kinds[i];
    }
    return s;
}

nlohmann::json fault_option_json(const std::string& option) {
    auto bad = [&](const std::string& why) { return config_error("--fault " + option + ": " + why); };
    auto colon = option.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == option.size())
        throw bad("expected TARGET:KIND[,key=value...] (" + fault_targets_help() + ")");
    if (!config::valid_utf8(option)) throw config_error("--fault: the option is not valid UTF-8 text");
    for (unsigned char c : option)
        if (c < 0x20 || c == 0x7f) throw config_error("--fault: control character in the option");
    nlohmann::json j = nlohmann::json::object();
    j["target"] = option.substr(0, colon);
    std::string rest = option.substr(colon + 1);
    size_t start = 0;
    bool first = true;
    while (start <= rest.size()) {
        size_t comma = rest.find(',', start);
        std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw bad("empty item");
        if (first) {
            j["kind"] = item;
            first = false;
        } else {
            auto eq = item.find('=');
            if (eq == std::string::npos || eq == 0) throw bad("'" + item + "': expected key=value");
            std::string key = item.substr(0, eq), text = item.substr(eq + 1);
            if (j.contains(key)) throw bad("'" + key + "' given twice");
            if (!config::parse_json_value(text, "--fault " + key, j[key])) {
                if (!config::valid_utf8(text)) throw bad("'" + key + "': the value is not valid UTF-8 text");
                j[key] = text;
            }
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    j["name"] = "--fault " + option;
    return j;
}

std::string default_config_dir() { return TRNSIM_CONFIG_DIR; }

platform_config parse_platform(const nlohmann::json& j, const std::string& source, const std::string& dir) {
    node root = node::root(j, source);
    platform_config p;
    p.description = root.get_label("description", "");
    root.get_string("extends", "");  // already resolved by load_platform
    std::string kind = root.get_choice("platform", "single_chip", {"single_chip", "server", "cluster"});
    p.chip = parse_chip(root.child("chip"), dir);
    node sim = root.child("sim");
    p.functional = sim.get_bool("functional", true);
    p.chip.compute_threads = uint32_t(sim.get_uint("compute_threads", p.chip.compute_threads, 0, 64));
    // Waveform signals in the models (--vcd turns this on): off by default, so models skip them.
    p.chip.core.signals = p.chip.core.te.signals = p.chip.core.dma.signals = sim.get_bool("signals", false);
    sim.finish();
    p.multichip = parse_multichip(root, kind == "server"    ? platform_kind::server
                                        : kind == "cluster" ? platform_kind::cluster
                                                            : platform_kind::single_chip,
                                  p.functional);
    // A full member chip is addressed by other chips through link::global_address: its whole local map (HBM and
    // core windows) must fit in the 42 address bits below the chip id.
    if (p.multichip.any_full()) {
        const uint64_t limit = link::LOCAL_MASK + 1;
        const std::string beyond = ", beyond the " + config::show_hex(limit) +
                                   " a full chip of a multi-chip platform can be addressed in (42 bits under the chip "
                                   "id, models/link/global_address.h)";
        node am = root.child("chip").child("address_map");
        if (p.chip.hbm_end() > limit) am.fail("hbm_base", "HBM ends at " + config::show_hex(p.chip.hbm_end()) + beyond);
        if (p.chip.cores_end() > limit)
            am.fail("core_base", "the core windows end at " + config::show_hex(p.chip.cores_end()) + beyond);
    }
    set_functional(p, p.functional);
    root.finish();
    p.source = j;
    return p;
}

void set_functional(platform_config& p, bool functional) {
    p.functional = functional;
    p.chip.core.te.functional = p.chip.core.sbuf.functional = p.chip.core.psum.functional = p.chip.hbm.functional =
        p.chip.core.vector.functional = p.chip.core.scalar.functional = p.multichip.light.functional = functional;
    p.chip.core.dma.checksum = p.chip.core.dma.checksum && functional;
    p.chip.core.dma.functional = functional;  // no data, nothing to check
}

platform_config load_platform(const std::string& name_or_file, const std::vector<std::string>& overrides,
                              const std::string& dir) {
    return load_platform(name_or_file, overrides, std::vector<std::string>{}, dir);
}

namespace {
// A config file (a name ending in .json or with a directory), not a preset name.
bool names_file(const std::string& n) {
    return (n.size() > 5 && n.substr(n.size() - 5) == ".json") || n.find('/') != std::string::npos;
}
} // namespace

platform_config load_platform(const std::string& name_or_file, const std::vector<std::string>& overrides,
                              const std::vector<std::string>& fault_options, const std::string& dir) {
    namespace fs = std::filesystem;
    // A preset name, or a file: relative files named by "extends" are relative to the file that names them.
    auto resolve = [&](const std::string& n, const std::string& from = "") {
        return config::resolve_preset(n, dir, "preset", from);
    };
    std::string file = resolve(name_or_file);
    nlohmann::json merged = config::load_json_file(file);
    // `--set extends=P` (or null) replaces what the file extends before the chain is resolved; every other
    // override applies to the merged chain.
    std::vector<std::string> rest;
    for (const auto& o : overrides) {
        if (o.compare(0, 8, "extends=") == 0) config::apply_override(merged, o);
        else rest.push_back(o);
    }
    if (merged.contains("extends") && merged["extends"].is_null()) merged.erase("extends");  // null removes the key
    std::vector<std::string> chain{file};
    while (merged.contains("extends")) {
        if (!merged["extends"].is_string()) throw config_error(chain.back() + ": extends: expected a preset name");
        std::string parent = merged["extends"].get<std::string>();
        std::string pf;
        nlohmann::json base;
        try {
            pf = resolve(parent, chain.back());
            auto same = [&](const std::string& f) {
                std::error_code e1, e2;
                return fs::weakly_canonical(f, e1) == fs::weakly_canonical(pf, e2);
            };
            if (std::find_if(chain.begin(), chain.end(), same) != chain.end())
                throw config_error("loops back to " + pf);
            base = config::load_json_file(pf);
        } catch (const config_error& e) {
            throw config_error(chain.back() + ": extends \"" + parent + "\": " + e.what());
        }
        chain.push_back(pf);
        merged.erase("extends");
        config::merge(base, merged);
        merged = std::move(base);
    }
    const nlohmann::json unmodified = merged;
    for (const auto& o : rest) config::apply_override(merged, o);
    size_t first_option_fault = 0;
    if (!fault_options.empty()) {
        if (!merged["chip"].is_object()) merged["chip"] = nlohmann::json::object();
        auto& faults = merged["chip"]["faults"];
        if (faults.is_null()) faults = nlohmann::json::array();
        if (!faults.is_array()) throw config_error("chip.faults: expected an array (to add --fault options to)");
        first_option_fault = faults.size();
        for (const auto& f : fault_options) faults.push_back(fault_option_json(f));
    }
    platform_config p;
    try {
        p = parse_platform(merged, file, dir);
    } catch (const config_error& e) {
        // A bad value that came from --set is named by the override, not by the preset file.
        std::string msg = e.what(), in = " (in " + file + ")";
        auto strip_in = [&] {
            if (msg.size() >= in.size() && msg.compare(msg.size() - in.size(), in.size(), in) == 0) msg.erase(msg.size() - in.size());
        };
        for (size_t i = 0; i < fault_options.size(); ++i) {
            std::string key = "chip.faults[" + std::to_string(first_option_fault + i) + "]";
            if (msg.compare(0, key.size(), key) == 0) {
                strip_in();
                throw config_error(msg + " (from --fault " + config::printable(fault_options[i]) + ")");
            }
        }
        for (auto it = rest.rbegin(); it != rest.rend(); ++it) {
            std::string key = it->substr(0, it->find('='));
            if (msg.compare(0, key.size(), key) == 0 && msg.size() > key.size() &&
                (msg[key.size()] == ':' || msg[key.size()] == '.' || msg[key.size()] == '[')) {
                strip_in();
                throw config_error(msg + " (from --set " + config::printable(*it) + ")");
            }
        }
        // A check across keys (one the overrides did not name) failed: if the files alone pass it, the overrides
        // caused it. Name the ones that cause it on their own, else all of them (their combination does).
        if (!rest.empty() && fault_options.empty()) {
            auto fails = [&](const std::vector<std::string>& os) {
                nlohmann::json t = unmodified;
                try {
                    for (const auto& o : os) config::apply_override(t, o);
                    (void)parse_platform(t, file, dir);
                    return false;
                } catch (const config_error& e2) {
                    return std::string(e2.what()) == e.what();
                }
            };
            if (!fails({})) {
                std::string named;
                for (const auto& o : rest)
                    if (fails({o})) named += (named.empty() ? "" : ", ") + ("--set " + config::printable(o));
                if (named.empty())
                    for (const auto& o : rest) named += (named.empty() ? "" : ", ") + ("--set " + config::printable(o));
                strip_in();
                throw config_error(msg + " (from " + named + " on " + file + ")");
            }
        }
        throw;
    }
    p.preset = config::printable(fs::path(file).stem().string());
    p.files = chain;
    p.modified = !fault_options.empty() || names_file(name_or_file) ||
                 std::any_of(overrides.begin(), overrides.end(), [](const std::string& o) { return o.rfind("sim.", 0) != 0; });
    return p;
}

} // namespace trnsim::platform
