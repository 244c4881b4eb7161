// Design-space sweeps (plain C++): a sweep file names a base platform (preset or config file, plus --set style
// overrides), a workload, and axes over any config key or workload parameter; expand() turns it into points.
//
//   {
//     "name": "array_x_hbm",
//     "preset": "trn2",                               // or "config": "my.json"
//     "set": { "sim.functional": false },             // base overrides, dotted keys
//     "workload": { "name": "gemm", "m": 2048, "k": 2048, "n": 2048, "dtype": "bf16" },
//     "mode": "grid",                                 // "grid" (cartesian product) or "random" (+ "samples", "seed")
//     "axes": [
//       { "key": "chip.core.te.rows", "values": [64, 128] },                  // a list of values of one key
//       { "key": "workload.dtype", "values": ["bf16", "fp8_e4m3"] },           // workload parameters too
//       { "name": "hbm", "values": [ { "label": "hbm3", "set": { "chip.hbm.bandwidth_gbps": 3277,
//                                                                "chip.hbm.stacks": 4 } } ] }, // linked keys
//       { "key": "chip.hbm.latency_ns", "range": [80, 200], "steps": 4, "log": false, "integer": true }
//     ]
//   }
// A range axis gives `steps` evenly (or log-) spaced values in grid mode and a uniform (log-uniform) draw per point
// in random mode. Random draws use a fixed generator (splitmix64), so a seed gives the same points everywhere.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::sweep {

using assignment = std::pair<std::string, nlohmann::json>;  // "chip.hbm.stacks" -> 4, "workload.dtype" -> "bf16"

struct axis_value {
    std::string label;
    std::vector<assignment> set;
};

struct axis {
    std::string name;                 // "key" for single-key axes
    std::vector<axis_value> values;   // list axes (and range axes in grid mode, filled by parse)
    bool range = false;               // a range axis (random mode draws from it)
    std::string key;
    double lo = 0, hi = 0;
    bool log = false, integer = false;
};

struct spec {
    std::string name;
    std::string preset;               // one of preset / config_file
    std::string config_file;
    std::vector<assignment> base_set; // "set"
    nlohmann::json workload;          // with defaults filled in ("name", ...)
    std::string mode = "grid";
    uint64_t samples = 0, seed = 1;
    std::vector<axis> axes;
    nlohmann::json source;            // the sweep document as read
};

struct point {
    size_t index = 0;
    std::string id;                       // "p0007"
    std::vector<assignment> set;          // the axes' assignments, in axis order
    std::vector<std::pair<std::string, std::string>> labels;  // axis name -> value label
    // What this point runs: config overrides ("key=json") and the workload with its axis parameters applied.
    std::vector<std::string> overrides() const;
    nlohmann::json workload(const spec& s) const;
    // Every input of the point, flat: "preset", base and axis keys, "workload.*" (for rows and resume checks).
    nlohmann::json inputs(const spec& s) const;
};

// Parses and checks a sweep document; errors (config::config_error) name the key path ("axes[1].values[0]: ...").
spec parse(const nlohmann::json& j, const std::string& source);
std::vector<point> expand(const spec& s);

} // namespace trnsim::sweep
