// libFuzzer entry point for trnsim::fuzz::hbm_trace (fuzz/targets.h).
#include <cstdlib>

#include "fuzz/targets.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (const char* d = std::getenv("TRNSIM_CONFIG_DIR")) trnsim::fuzz::set_config_dir(d);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    trnsim::fuzz::hbm_trace(data, size);
    return 0;
}
