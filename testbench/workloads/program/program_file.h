// A hand-written workload: per-core instruction streams (Tensor Engine queue, DMA queues, semaphores), host memory
// initialisation and result checks, read from a JSON file (docs/program_format.md). It reaches every input
// surface of the cores directly, so bad instruction streams and descriptors can be tried from the command line:
// every error names the file and the instruction's path in it ("cores[0].dma[1][2].src: ... (in prog.json)").
// Reading is plain C++ (no SystemC), so the fuzz targets use it; running is in program.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/instruction.h"
#include "platforms/config/platform_config.h"

namespace trnsim::tb {

struct program_file {
    struct fill {
        std::string path;                // "init[2]"
        uint64_t addr = 0, bytes = 0;    // chip-global
        std::string kind;                // "random", "zero", "hex"
        uint64_t seed = 1;
        std::vector<uint8_t> data;       // kind "hex"
    };
    struct check {
        std::string path;                // "check[0]"
        uint64_t addr = 0, bytes = 0;
        bool against_memory = false;     // equals another region (equals_addr) ...
        uint64_t equals_addr = 0;
        std::vector<uint8_t> data;       // ... or these bytes
    };
    // Where each instruction came from, for messages (same shape as core_program's queues).
    struct paths {
        std::vector<std::string> te;
        std::vector<std::vector<std::string>> dma;
        std::vector<std::vector<bool>> dma_checksum;  // "checksum": true (expected value taken from memory at start)
    };
    std::string file, description;
    std::vector<fill> init;
    std::vector<core::core_program> cores;  // index = core number; absent cores have empty programs
    std::vector<paths> where;
    std::vector<check> checks;
};

// Reads and checks a program against the chip: JSON syntax (line:column), unknown keys, types, addresses,
// opcodes and the queue they are in, semaphore ids, DMA descriptors (lengths, strides, alignment, overlap).
// Throws config::config_error. (Tensor Engine shape limits are checked by run_program against the engine.)
program_file load_program(const std::string& file, const platform::chip_config& chip);
// The same for an already parsed document; `file` names it in messages.
program_file parse_program(const nlohmann::json& j, const std::string& file, const platform::chip_config& chip);

// FNV-1a 64 of bytes, as 16 hex digits (result fingerprints for determinism checks).
std::string digest_hex(const void* data, uint64_t len);

} // namespace trnsim::tb
