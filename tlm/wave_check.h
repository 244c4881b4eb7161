// Whether a waveform file a library wrote is whole. Verilator's FST writer (GTKWave's fstapi) ignores write errors, so
// a full disk leaves a truncated file behind an exit status of 0; the file is checked before it is committed
// (tlm/output_file.h, capture_mode::spool). Plain C++, no SystemC.
#pragma once
#include <string>

namespace trnsim::platform {

// "" when `file` is a complete FST file; otherwise what is wrong ("block 3 at byte 1234 runs past the end of the
// file (567 bytes)"). The check walks the file's block structure as fstapi writes it: a header block first, then
// blocks of a type byte and a big-endian 64-bit length (which counts itself) that tile the file exactly, none left
// marked unfinished (FST_BL_SKIP), and the geometry and hierarchy blocks that fstWriterClose writes last.
std::string fst_file_problem(const std::string& file);

} // namespace trnsim::platform
