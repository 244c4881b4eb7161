// The platform configuration: JSON (presets in configs/, --set overrides) parsed into the validated runtime structs
// of every model. Every error names the full key path.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/core_config.h"
#include "models/energy/energy_config.h"
#include "models/hbm/hbm_config.h"
#include "tlm/config/config_node.h"
#include "tlm/config/preset.h"
#include "platforms/server/multichip_config.h"
#include "tlm/fault.h"

namespace trnsim::platform {

struct noc_config {
    double hop_latency_ns = 2;     // per router traversal
    double hbm_port_gbps = 0;      // bandwidth of the interconnect port into HBM (0 = unlimited)
    double core_port_gbps = 0;     // bandwidth of the interconnect port into each core (0 = unlimited)
};

struct chip_config {
    std::string name = "chip";
    uint32_t compute_threads = 1;           // sim.compute_threads: host threads for the TE arithmetic (0 = inline)
    uint32_t cores = 8;
    core::core_config core;
    hbm::hbm_config hbm;
    noc_config noc;
    energy::energy_config energy;           // chip.energy: per-operation energies and static power
    // Chip-global address map.
    uint64_t hbm_base = 0;
    uint64_t core_base = 0x10000000000ull;  // (1 TiB) core i's window at core_base + i * core_stride
    uint64_t core_stride = 0x100000000ull;
    uint64_t hbm_end() const { return hbm_base + hbm.capacity_bytes; }  // one past the last HBM byte
    uint64_t cores_end() const { return core_base + uint64_t(cores - 1) * core_stride + core.window; }
    // chip.collective_reduce: what adds in the collectives lowered onto full chips (testbench lowering.h): "vector"
    // (staged through SBUF, added by the Vector Engine) or "dma" (accumulating DMA copies, HBM to HBM: Trainium's
    // DMA "collective compute", which leaves the engines to the compute running beside the collective).
    enum class reduce_engine : uint8_t { vector, dma } collective_reduce = reduce_engine::vector;
    // Headline figures quoted in reports (from the preset's sources), not used for timing.
    double headline_bf16_tflops = 0;
    // chip.faults: every injected fault (targets relative to the chip). The HBM's are also in hbm.faults; the
    // builder hands each core the ones below "coreN" and those aimed at "dma" (every engine of every core).
    std::vector<tlmx::fault_spec> faults;
    // With an RTL waveform (core.te.wave_file): the cores whose engine writes one (--wave-cores; empty = every
    // core). One file per core; core 0 alone by default, as each costs tens of MB and slows the run.
    std::vector<uint32_t> wave_cores = {0};
};

struct platform_config {
    std::string preset;       // name it came from
    std::string description;
    bool functional = true;   // sim.functional: false = timing only (no data moved or computed, same timing)
    // The design differs from the preset as shipped: a config file, or a --set of a key outside sim.*, or a
    // --fault (reports quote a preset's published figures only for the unmodified preset).
    bool modified = false;
    chip_config chip;
    multichip_config multichip; // "platform": "server" / "cluster": the chips, links and network (multichip_config.h)
    nlohmann::json source;    // the merged JSON it was parsed from (for --stats and reproducibility)
    std::vector<std::string> files;  // the files it was read from: the preset or --config file, then its extends chain
};

// Directory holding the presets (compiled-in source path unless TRNSIM_CONFIG_DIR overrides it at build time).
std::string default_config_dir();
// The preset names in a config directory (files NAME.json at its top level).
using config::list_presets;
// Loads NAME (a preset name in dir, or a path to a .json file), following "extends" chains, then applies --set
// assignments, then parses and validates.
platform_config load_platform(const std::string& name_or_file, const std::vector<std::string>& overrides,
                              const std::string& dir = default_config_dir());
// sim.functional for every model of the platform (the chip's engines, memories and HBM, the light chips of a
// multi-chip platform): false = timing-only, every model skips its data path, nothing else changes. The one place
// the flag is spread, used by the parser and by drivers that derive a timing-only platform (trnsim train).
void set_functional(platform_config& p, bool functional);
// The same with --fault options ("TARGET:KIND[,key=value...]", see fault_option_json), appended to chip.faults.
platform_config load_platform(const std::string& name_or_file, const std::vector<std::string>& overrides,
                              const std::vector<std::string>& fault_options, const std::string& dir = default_config_dir());
// "hbm.channel3:disable,policy=remap" -> {"target": "hbm.channel3", "kind": "disable", "policy": "remap",
// "name": "--fault hbm.channel3:disable,policy=remap"}; values are JSON if they parse, else strings.
nlohmann::json fault_option_json(const std::string& option);
// The fault targets and kinds this platform has, for messages and docs ("hbm, hbm.channel<N>: disable, slow, ...").
std::string fault_targets_help();
// Parses and validates an already merged document; named memspecs are looked up in `dir`/memspecs.
platform_config parse_platform(const nlohmann::json& j, const std::string& source,
                               const std::string& dir = default_config_dir());

} // namespace trnsim::platform
