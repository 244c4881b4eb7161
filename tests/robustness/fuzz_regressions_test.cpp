// Replays, in the normal build (no clang needed), every input the fuzzers ever crashed on (fuzz/regressions/TARGET/)
// and the seed corpora (presets, tests/robustness/configs and programs, fuzz/seeds) through the same target
// functions the libFuzzer binaries run (fuzz/targets.h). A finding aborts the process, so the test fails.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/targets.h"

namespace fs = std::filesystem;

#ifndef TRNSIM_SOURCE_DIR
#error "TRNSIM_SOURCE_DIR must name the repository root"
#endif

namespace {
using target_fn = void (*)(const uint8_t*, size_t);

size_t replay(const std::string& dir, target_fn fn) {
    size_t n = 0;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return 0;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.' && e.path().filename() != "README.md")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        std::string data = ss.str();
        INFO(f.string());
        fn(reinterpret_cast<const uint8_t*>(data.data()), data.size());
        ++n;
    }
    return n;
}
const std::string root = TRNSIM_SOURCE_DIR;
} // namespace

TEST_CASE("fuzz regressions and seeds: config text", "[fuzz]") {
    trnsim::fuzz::set_config_dir(root + "/configs");
    size_t n = replay(root + "/fuzz/regressions/config_text", trnsim::fuzz::config_text) +
               replay(root + "/configs", trnsim::fuzz::config_text) +
               replay(root + "/tests/robustness/configs", trnsim::fuzz::config_text);
    REQUIRE(n > 20);
}

TEST_CASE("fuzz regressions and seeds: --set / --fault overrides", "[fuzz]") {
    trnsim::fuzz::set_config_dir(root + "/configs");
    size_t n = replay(root + "/fuzz/regressions/config_overrides", trnsim::fuzz::config_overrides) +
               replay(root + "/fuzz/seeds/config_overrides", trnsim::fuzz::config_overrides);
    REQUIRE(n >= 6);
}

TEST_CASE("fuzz regressions and seeds: DMA descriptors", "[fuzz]") {
    size_t n = replay(root + "/fuzz/regressions/dma_descriptor", trnsim::fuzz::dma_descriptor) +
               replay(root + "/fuzz/seeds/dma_descriptor", trnsim::fuzz::dma_descriptor);
    REQUIRE(n >= 3);
}

TEST_CASE("fuzz regressions and seeds: program files", "[fuzz]") {
    trnsim::fuzz::set_config_dir(root + "/configs");
    size_t n = replay(root + "/fuzz/regressions/program_text", trnsim::fuzz::program_text) +
               replay(root + "/tests/robustness/programs", trnsim::fuzz::program_text);
    REQUIRE(n > 20);
}

TEST_CASE("fuzz regressions and seeds: HBM traces", "[fuzz]") {
    trnsim::fuzz::set_config_dir(root + "/configs");
    size_t n = replay(root + "/fuzz/regressions/hbm_trace", trnsim::fuzz::hbm_trace) +
               replay(root + "/fuzz/seeds/hbm_trace", trnsim::fuzz::hbm_trace);
    REQUIRE(n >= 3);
}
