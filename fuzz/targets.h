// Fuzz targets as plain functions: the libFuzzer entry points (fuzz_*.cpp, built with clang by fuzz/CMakeLists.txt)
// and the regression test of the normal build (tests/robustness/fuzz_regressions_test.cpp) both call them. Each
// takes arbitrary bytes; a bad input may only end in config::config_error (a clear message); anything else, or a
// broken invariant, aborts with a message on stderr (a finding).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace trnsim::fuzz {

// JSON text -> parse_json -> parse_platform (the whole config schema and its validation).
void config_text(const uint8_t* data, size_t size);
// Lines "set KEY=VALUE" / "fault SPEC" applied to the trn2 preset through load_platform (--set and --fault).
void config_overrides(const uint8_t* data, size_t size);
// Bytes -> a DMA descriptor -> validate(); valid small ones are split into bursts and across engines, and the
// bursts checked: exact coverage, no burst across a max_burst boundary, disjoint destination bytes, parts that add
// up to the whole (checksum of synthetic data).
void dma_descriptor(const uint8_t* data, size_t size);
// JSON text -> parse_program against the trn2 chip (instruction streams, descriptors, addresses).
void program_text(const uint8_t* data, size_t size);

// Text -> read_hbm_trace (the `trnsim hbm --trace` format) against a 1 GiB capacity: only a std::runtime_error
// naming "fuzz.trace:LINE:" may come out; accepted requests lie inside the capacity, and short traces (up to 64
// requests, times below 100 us) run through the HBM3 DRAM model with its timing checker, every request completing.
void hbm_trace(const uint8_t* data, size_t size);

// Where the presets are (set by the build; the regression test and the fuzzers pass their own).
void set_config_dir(const std::string& dir);

} // namespace trnsim::fuzz
