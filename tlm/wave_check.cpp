#include "tlm/wave_check.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

namespace trnsim::platform {

namespace {

// Block types of the FST format (GTKWave fstapi.h, enum fstBlockType).
enum : uint8_t {
    bl_hdr = 0, bl_vcdata = 1, bl_blackout = 2, bl_geom = 3, bl_hier = 4, bl_vcdata_dyn_alias = 5,
    bl_hier_lz4 = 6, bl_hier_lz4duo = 7, bl_vcdata_dyn_alias2 = 8, bl_zwrapper = 254, bl_skip = 255
};

} // namespace

std::string fst_file_problem(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return "cannot read " + file;
    const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return "cannot read " + file;
    const uint64_t size = b.size();
    if (size == 0) return "the FST file is empty";
    bool geom = false, hier = false;
    uint64_t pos = 0;
    for (int n = 0; pos < size; ++n) {
        std::ostringstream where;
        where << "block " << n << " at byte " << pos;
        const uint8_t type = b[pos];
        if (n == 0 && type != bl_hdr && type != bl_zwrapper) return "the file does not start with an FST header block";
        if (pos + 9 > size) return where.str() + " is cut short (the file ends inside its length)";
        uint64_t len = 0;
        for (int i = 1; i <= 8; ++i) len = len << 8 | b[pos + i];
        if (type == bl_skip) return where.str() + " was never finished (the writer stopped while writing it)";
        const bool known = type <= bl_vcdata_dyn_alias2 || type == bl_zwrapper;
        if (!known) return where.str() + " has an unknown type " + std::to_string(type);
        if (len < 8 || len > size - pos - 1) {
            std::ostringstream os;
            os << where.str() << " runs past the end of the file (" << len << " bytes after its type byte, "
               << size - pos - 1 << " left)";
            return os.str();
        }
        if (type == bl_zwrapper) return {};  // the whole trace compressed into one block that fills the file
        geom |= type == bl_geom;
        hier |= type == bl_hier || type == bl_hier_lz4 || type == bl_hier_lz4duo;
        pos += 1 + len;
    }
    if (!geom) return "the FST file has no geometry block (the writer did not close it)";
    if (!hier) return "the FST file has no hierarchy block (the writer did not close it)";
    return {};
}

} // namespace trnsim::platform
