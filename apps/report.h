// Human-readable and JSON reports of a run (writers live outside the models).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "platforms/config/platform_config.h"
#include "testbench/gemm/gemm_run.h"

namespace trnsim::app {

std::string format_gemm_report(const platform::platform_config& cfg, const tb::gemm_result& r);
nlohmann::json gemm_result_json(const platform::platform_config& cfg, const tb::gemm_result& r);
// Writes text to `file` atomically (temporary file, then rename): no partial file on failure.
void write_file_atomic(const std::string& file, const std::string& text);

} // namespace trnsim::app
