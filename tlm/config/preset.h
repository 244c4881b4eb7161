// "A preset name or a file": the one resolver of every config file a user names (platform presets, memspecs, model
// shapes), so each honours --config-dir the same way. Plain C++.
#pragma once
#include <string>
#include <vector>

namespace trnsim::config {

// The preset names in a directory (files NAME.json at its top level), sorted.
std::vector<std::string> list_presets(const std::string& dir);

// A file path (it contains '/' or ends in ".json"; a relative one is taken relative to the folder of
// `relative_to`, if given) as it is, or a preset name as DIR/NAME.json, which must exist: else config_error
// "unknown <what> 'NAME' (<what>s in DIR: a, b, c<hint>)".
std::string resolve_preset(const std::string& name_or_file, const std::string& dir, const std::string& what,
                           const std::string& relative_to = "", const std::string& hint = "");

} // namespace trnsim::config
