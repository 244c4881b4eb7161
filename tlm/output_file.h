// Whether an output file named in a config key or an option can be written, checked before a run starts (so a
// waveform, statistics or timeline file that cannot be created is an error naming it, not a crash or a silently
// missing file at the end). Plain C++, header only.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace trnsim::platform {

// Empty when `file` can be created or overwritten; otherwise why not ("directory out does not exist", ...).
inline std::string output_file_problem(const std::string& file) {
    namespace fs = std::filesystem;
    const fs::path p(file);
    if (file.empty() || p.filename().empty() || p.filename() == "." || p.filename() == "..") return "is not a file name";
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return "directory " + dir.string() + " does not exist";
    if (fs::is_directory(p, ec)) return "is a directory";
    if (::access(dir.c_str(), W_OK) != 0) return "directory " + dir.string() + " is not writable";
    if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0) return "is not writable";
    return {};
}

} // namespace trnsim::platform
