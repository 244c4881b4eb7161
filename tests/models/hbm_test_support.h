// Shared helpers of the HBM model tests: a small memspec with distinct timing values (so that each constraint can be
// made the binding one), preset loading, and a plain-C++ driver.
#pragma once
#include <string>

#include "models/hbm/dram/hbm_dram_config.h"
#include "models/hbm/dram/memspec.h"
#include "tlm/config/config_node.h"

namespace trnsim::hbm::test {

#ifndef TRNSIM_CONFIG_DIR
#define TRNSIM_CONFIG_DIR "configs"
#endif

// 1 pseudo-channel per channel, 4 channels, 4 bank groups x 4 banks, tCK = 1 ns, BL4 at DDR (2-cycle bursts).
inline memspec small_spec() {
    memspec m;
    m.name = "test";
    m.channels = 4;
    m.pseudo_channels = 1;
    m.sids = 1;
    m.bank_groups = 4;
    m.banks_per_group = 4;
    m.rows = 1024;
    m.columns = 128;
    m.bus_width = 64;
    m.burst_length = 4;
    m.data_rate = 2;
    m.tck_ns = 1.0;
    m.tRCD = 10;
    m.tRCDWR = 8;
    m.tRP = 11;
    m.tRAS = 25;
    m.tRC = 40;
    m.tRL = 12;
    m.tWL = 5;
    m.tWR = 9;
    m.tRTP = 4;
    m.tCCD_S = 2;
    m.tCCD_L = 3;
    m.tRRD_S = 3;
    m.tRRD_L = 5;
    m.tFAW = 20;
    m.tWTR_S = 2;
    m.tWTR_L = 6;
    m.tRTW = 12;
    m.tRFC = 100;
    m.tREFI = 3900;
    m.tRFCpb = 50;
    m.tRREFD = 7;
    validate_memspec(m, "small_spec");
    return m;
}

inline nlohmann::json preset_json(const std::string& name) {
    return config::load_json_file(std::string(TRNSIM_CONFIG_DIR) + "/memspecs/" + name + ".json");
}

inline memspec preset(const std::string& name) {
    auto j = preset_json(name);
    return parse_memspec(config::node::root(j, name));
}

inline hbm_dram_config config_for(const memspec& m) {
    hbm_dram_config c;
    c.spec = m;
    c.ctrl.refresh = m.has_per_bank_refresh() ? refresh_kind::per_bank : refresh_kind::all_bank;
    validate_hbm_dram_config(c, "test");
    return c;
}

} // namespace trnsim::hbm::test
