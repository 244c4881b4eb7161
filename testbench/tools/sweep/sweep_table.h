// Sweep results: one row per point, written by the point's run (points/<id>.json), merged into CSV and JSON.
// A row is {"id", "index", "status": "ok"|"failed", "error", "inputs": {...}, "outputs": {...}}.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::sweep {

// Columns: id, status, error, every input key (first-seen order), every output key (first-seen order).
std::vector<std::string> columns(const std::vector<nlohmann::json>& rows);
// One flat object per row with those columns (absent values are null).
nlohmann::json to_json(const std::vector<nlohmann::json>& rows);
// RFC 4180 CSV: a header line, then one line per row; numbers in full precision, text quoted when needed.
std::string to_csv(const std::vector<nlohmann::json>& rows);

} // namespace trnsim::sweep
