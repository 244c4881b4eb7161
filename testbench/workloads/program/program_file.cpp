#include "testbench/workloads/program/program_file.h"

#include <cctype>
#include <cstring>

#include <cstdio>

#include "models/dma/dma_descriptor.h"
#include "models/numerics/dtype.h"

namespace trnsim::tb {

using config::node;

namespace {

constexpr uint64_t MAX_HOST_BYTES = 1ull << 30;  // one init or check region
constexpr size_t MAX_DMA_QUEUES = 64;

std::string trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

// A whole number in decimal or 0x hex; false if the text is not one (or overflows 64 bits).
bool parse_number(const std::string& t, uint64_t& v) { return config::parse_whole(t, v, /*hex=*/true); }

// Addresses: a number, "0x..." text, or "REGION[+OFFSET]". Chip-global regions: hbm, core<N>.sbuf, core<N>.psum;
// core-local (MATMUL operands): sbuf, psum.
class address_reader {
public:
    address_reader(const platform::chip_config& c) : m_chip(c) {}

    uint64_t get(const node& n, const std::string& key, bool local, bool required, uint64_t def = 0) const {
        const nlohmann::json* j = n.get_raw(key);
        if (!j) {
            if (required) n.fail(key, std::string("required (") + (local ? "sbuf+OFFSET, psum+OFFSET" : "hbm+OFFSET, coreN.sbuf+OFFSET, coreN.psum+OFFSET") + " or a number)");
            return def;
        }
        if (j->is_number_unsigned()) return j->get<uint64_t>();
        if (!j->is_string()) n.fail(key, "expected an address (a number or text such as \"hbm+0x1000\"), got " + std::string(j->type_name()) + " " + config::show(*j));
        std::string t = trim(j->get<std::string>()), region = t, off_text;
        if (auto plus = t.find('+'); plus != std::string::npos) {
            region = trim(t.substr(0, plus));
            off_text = trim(t.substr(plus + 1));
        }
        uint64_t v;
        if (off_text.empty() && parse_number(region, v)) return v;
        uint64_t off = 0;
        if (!off_text.empty() && !parse_number(off_text, off)) n.fail(key, "'" + off_text + "' is not a number (in \"" + t + "\")");
        uint64_t base;
        if (!region_base(region, local, base)) {
            n.fail(key, "'" + region + "' is not a region (" +
                            (local ? std::string("sbuf, psum: MATMUL operands are core-local") :
                                     "hbm, core0.sbuf .. core" + std::to_string(m_chip.cores - 1) + ".psum") + ")");
        }
        if (base > ~0ull - off) n.fail(key, "\"" + t + "\" wraps around 2^64");
        return base + off;
    }

private:
    bool region_base(const std::string& r, bool local, uint64_t& base) const {
        const auto& cc = m_chip.core;
        if (local) {
            if (r == "sbuf") return base = cc.sbuf_base, true;
            if (r == "psum") return base = cc.psum_base, true;
            return false;
        }
        if (r == "hbm") return base = m_chip.hbm_base, true;
        if (r.rfind("core", 0) != 0) return false;
        auto dot = r.find('.');
        uint64_t idx;
        if (dot == std::string::npos || !parse_number(r.substr(4, dot - 4), idx) || idx >= m_chip.cores) return false;
        std::string what = r.substr(dot + 1);
        uint64_t win = m_chip.core_base + idx * m_chip.core_stride;
        if (what == "sbuf") return base = win + cc.sbuf_base, true;
        if (what == "psum") return base = win + cc.psum_base, true;
        return false;
    }
    const platform::chip_config& m_chip;
};

std::vector<uint8_t> parse_hex(const node& n, const std::string& key) {
    std::string t = n.get_string(key, "");
    std::vector<uint8_t> out;
    std::string digits;
    for (char c : t)
        if (!std::isspace(static_cast<unsigned char>(c))) digits += c;
    if (digits.empty() || digits.size() % 2) n.fail(key, "expected an even number of hex digits");
    for (size_t i = 0; i < digits.size(); i += 2) {
        uint64_t v;
        if (!parse_number("0x" + digits.substr(i, 2), v)) n.fail(key, "'" + digits.substr(i, 2) + "' is not a hex byte");
        out.push_back(uint8_t(v));
    }
    if (out.size() > MAX_HOST_BYTES) n.fail(key, "more than 1 GiB");
    return out;
}

std::vector<core::sem_wait> parse_waits(const node& n, uint32_t sems) {
    std::vector<core::sem_wait> out;
    for (const node& w : n.children("wait")) {
        core::sem_wait s;
        if (!w.has("sem")) w.fail("sem", "required");
        s.sem = uint32_t(w.get_uint("sem", 0, 0, 1u << 30));
        if (s.sem >= sems)
            w.fail("sem", "semaphore " + std::to_string(s.sem) + " does not exist: the core program declares " +
                              std::to_string(sems) + " (\"semaphores\")");
        s.value = w.get_uint("value", 1, 0, ~0ull);
        w.finish();
        out.push_back(s);
    }
    return out;
}

int32_t parse_signal(const node& n, uint32_t sems) {
    if (!n.has("signal")) {
        n.get_raw("signal");  // null counts as given
        return -1;
    }
    uint64_t s = n.get_uint("signal", 0, 0, 1u << 30);
    if (s >= sems)
        n.fail("signal", "semaphore " + std::to_string(s) + " does not exist: the core program declares " +
                             std::to_string(sems) + " (\"semaphores\")");
    return int32_t(s);
}

std::string op_of(const node& n) {
    if (!n.has("op")) n.fail("op", "required (one of: dma, matmul)");
    return n.get_choice("op", "", {"dma", "matmul"});
}

core::instruction parse_dma(const node& n, uint32_t sems, const address_reader& addr, const platform::chip_config& chip,
                            bool& want_checksum) {
    core::instruction in;
    in.op = core::opcode::dma;
    in.waits = parse_waits(n, sems);
    in.signal = parse_signal(n, sems);
    auto& d = in.dma;
    d.src = addr.get(n, "src", false, true);
    d.dst = addr.get(n, "dst", false, true);
    if (!n.has("row_bytes")) n.fail("row_bytes", "required");
    d.row_bytes = n.get_uint("row_bytes", 0, 0, ~0ull);
    d.rows = uint32_t(n.get_uint("rows", 1, 0, UINT32_MAX));
    d.planes = uint32_t(n.get_uint("planes", 1, 0, UINT32_MAX));
    d.src_stride = n.get_int("src_stride", int64_t(d.row_bytes > uint64_t(INT64_MAX) ? 0 : d.row_bytes), INT64_MIN, INT64_MAX);
    d.dst_stride = n.get_int("dst_stride", d.src_stride, INT64_MIN, INT64_MAX);
    d.src_plane_stride = n.get_int("src_plane_stride", 0, INT64_MIN, INT64_MAX);
    d.dst_plane_stride = n.get_int("dst_plane_stride", 0, INT64_MIN, INT64_MAX);
    want_checksum = n.get_bool("checksum", false);
    if (n.has("reduce")) {
        const std::string t = n.get_string("reduce", "");
        const auto dt = numerics::parse_dtype(t);
        if (!dt) n.fail("reduce", "'" + t + "' is not an element type (fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
        if (want_checksum) n.fail("reduce", "an accumulating copy carries no checksum (its destination's data changes)");
        if (chip.core.dma.max_burst % numerics::size_of(*dt))
            n.fail("reduce", "the DMA burst (chip.core.dma.max_burst " + std::to_string(chip.core.dma.max_burst) +
                                 ") is not a whole number of " + t + " elements");
        d.reduce = dt;
    }
    n.finish();
    std::string why = dma::validate(d, chip.core.dma.align_bytes);
    if (!why.empty()) n.fail_here("bad DMA descriptor " + dma::to_string(d) + ": " + why);
    // A functional run holds the bytes an instruction moves in host memory (its source and destination pages):
    // the same cap as one init or check region, so a huge copy is this message, not std::bad_alloc or the OOM killer.
    const uint64_t row_count = uint64_t(d.rows) * d.planes;  // both 32-bit: no overflow
    const bool over_64 = row_count && d.row_bytes > ~0ull / row_count;
    if (chip.hbm.functional && (over_64 || d.row_bytes * row_count > MAX_HOST_BYTES))
        n.fail_here("a DMA of " + (over_64 ? std::string("more than 2^64") : std::to_string(d.row_bytes * row_count)) +
                    " bytes (row_bytes x rows x planes): a functional run holds the data in host memory, at most 1 GiB "
                    "(1073741824 bytes) per DMA instruction (split it, or run timing-only: sim.functional=false)");
    return in;
}

core::instruction parse_matmul(const node& n, uint32_t sems, const address_reader& addr, const platform::chip_config& chip) {
    core::instruction in;
    in.op = core::opcode::matmul;
    in.waits = parse_waits(n, sems);
    in.signal = parse_signal(n, sems);
    auto& m = in.mm;
    std::string dt = n.get_choice("dtype", "bf16", {"fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"});
    m.in_type = *numerics::parse_dtype(dt);
    for (const char* k : {"k", "m", "n"})
        if (!n.has(k)) n.fail(k, "required");
    m.k = uint32_t(n.get_uint("k", 0, 0, UINT32_MAX));
    m.m = uint32_t(n.get_uint("m", 0, 0, UINT32_MAX));
    m.n = uint32_t(n.get_uint("n", 0, 0, UINT32_MAX));
    const auto& cc = chip.core;
    m.plane_rows = uint32_t(n.get_uint("plane_rows", cc.sbuf.partitions, 1, cc.sbuf.partitions));
    m.s_addr = addr.get(n, "s_addr", true, true);
    m.s_stride = n.get_uint("s_stride", cc.sbuf.partition_bytes, 0, ~0ull);
    m.s_plane = n.get_uint("s_plane", 0, 0, ~0ull);
    m.x_addr = addr.get(n, "x_addr", true, true);
    m.x_stride = n.get_uint("x_stride", cc.sbuf.partition_bytes, 0, ~0ull);
    m.x_plane = n.get_uint("x_plane", 0, 0, ~0ull);
    m.y_addr = addr.get(n, "y_addr", true, true);
    m.y_stride = n.get_uint("y_stride", cc.psum.partition_bytes, 0, ~0ull);
    m.accumulate = n.get_bool("accumulate", false);
    // Where the Tensor Engine reads and writes (docs/program_format.md): both operands in this core's SBUF, the
    // result in its PSUM, every row inside the memory (the result rows of FP32, apart).
    auto inside = [&](const char* key, uint64_t a, uint64_t rows, uint64_t stride, uint64_t row_bytes,
                      const char* mem, uint64_t base, uint64_t size) {
        if (a < base || a - base >= size)
            n.fail(key, config::show_hex(a) + " is not in this core's " + mem + " (" + config::show_hex(base) + " .. " +
                            config::show_hex(base + size - 1) + ")");
        const uint64_t off = a - base;
        if (rows && (stride > size || (rows - 1) * stride + row_bytes > size - off))
            n.fail(key, "its " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) + " bytes every " +
                            std::to_string(stride) + " bytes run past the end of the " + mem);
    };
    const uint64_t esz = numerics::size_of(m.in_type);
    // FP8 double row (rows split over planes) and more rows than the array has are the engine's checks (before the
    // run, with their own messages); here the plain case.
    const bool engine_checks_rows = m.s_plane || m.x_plane || m.k > cc.sbuf.partitions;
    inside("s_addr", m.s_addr, engine_checks_rows ? 0 : m.k, m.s_stride, uint64_t(m.m) * esz, "SBUF", cc.sbuf_base, cc.sbuf.size());
    inside("x_addr", m.x_addr, engine_checks_rows ? 0 : m.k, m.x_stride, uint64_t(m.n) * esz, "SBUF", cc.sbuf_base, cc.sbuf.size());
    inside("y_addr", m.y_addr, m.m, m.y_stride, uint64_t(m.n) * 4, "PSUM", cc.psum_base, cc.psum.size());
    if (m.m > 1 && m.y_stride < uint64_t(m.n) * 4)
        n.fail("y_stride", std::to_string(m.y_stride) + " is less than a result row (" + std::to_string(m.n) +
                               " FP32 = " + std::to_string(uint64_t(m.n) * 4) + " bytes): the rows would overlap");
    n.finish();
    return in;
}

} // namespace

program_file load_program(const std::string& file, const platform::chip_config& chip) {
    return parse_program(config::load_json_file(file), file, chip);
}

program_file parse_program(const nlohmann::json& j, const std::string& file, const platform::chip_config& chip) {
    node root = node::root(j, file);
    address_reader addr(chip);
    program_file p;
    p.file = file;
    p.description = root.get_label("description", "");
    for (const node& f : root.children("init")) {
        program_file::fill x;
        x.path = f.path();
        x.addr = addr.get(f, "addr", false, true);
        if (f.has("hex")) {
            if (f.has("fill") || f.has("bytes")) f.fail("hex", "give either hex, or fill and bytes");
            x.kind = "hex";
            x.data = parse_hex(f, "hex");
            x.bytes = x.data.size();
        } else {
            x.kind = f.get_choice("fill", "random", {"random", "zero"});
            if (!f.has("bytes")) f.fail("bytes", "required (with fill)");
            x.bytes = f.get_uint("bytes", 0, 1, MAX_HOST_BYTES);
            x.seed = f.get_uint("seed", 1, 0, ~0ull);
        }
        f.get_raw("fill");
        f.get_raw("bytes");
        f.finish();
        p.init.push_back(std::move(x));
    }
    auto cores = root.children("cores");
    if (cores.size() > chip.cores)
        root.fail("cores", std::to_string(cores.size()) + " core programs for a chip of " + std::to_string(chip.cores) +
                               " cores (chip.cores)");
    p.cores.resize(chip.cores);
    p.where.resize(chip.cores);
    for (size_t c = 0; c < cores.size(); ++c) {
        const node& cn = cores[c];
        auto& prog = p.cores[c];
        auto& w = p.where[c];
        prog.semaphores = uint32_t(cn.get_uint("semaphores", 0, 0, 1u << 20));
        for (const node& in : cn.children("te")) {
            if (op_of(in) != "matmul") in.fail("op", "the Tensor Engine queue runs only matmul instructions (DMAs go in \"dma\" queues)");
            prog.te.push_back(parse_matmul(in, prog.semaphores, addr, chip));
            w.te.push_back(in.path());
        }
        auto queues = cn.children2d("dma");
        if (queues.size() > MAX_DMA_QUEUES)
            cn.fail("dma", std::to_string(queues.size()) + " DMA queues (at most " + std::to_string(MAX_DMA_QUEUES) + ")");
        for (const auto& q : queues) {
            prog.dma.emplace_back();
            w.dma.emplace_back();
            w.dma_checksum.emplace_back();
            for (const node& in : q) {
                if (op_of(in) != "dma") in.fail("op", "a DMA queue runs only dma instructions (matmuls go in \"te\")");
                bool want = false;
                prog.dma.back().push_back(parse_dma(in, prog.semaphores, addr, chip, want));
                w.dma.back().push_back(in.path());
                w.dma_checksum.back().push_back(want);
            }
        }
        cn.finish();
    }
    for (const node& k : root.children("check")) {
        program_file::check x;
        x.path = k.path();
        x.addr = addr.get(k, "addr", false, true);
        if (k.has("hex")) {
            if (k.has("equals") || k.has("bytes")) k.fail("hex", "give either hex, or equals and bytes");
            x.data = parse_hex(k, "hex");
            x.bytes = x.data.size();
        } else {
            if (!k.has("equals")) k.fail("equals", "required (the address of the region to compare with), or give hex");
            x.against_memory = true;
            x.equals_addr = addr.get(k, "equals", false, true);
            if (!k.has("bytes")) k.fail("bytes", "required (with equals)");
            x.bytes = k.get_uint("bytes", 0, 1, MAX_HOST_BYTES);
        }
        k.get_raw("equals");
        k.get_raw("bytes");
        k.finish();
        p.checks.push_back(std::move(x));
    }
    root.finish();
    return p;
}

std::string digest_hex(const void* data, uint64_t len) {
    uint64_t h = 0xcbf29ce484222325ull;
    const auto* b = static_cast<const uint8_t*>(data);
    for (uint64_t i = 0; i < len; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return buf;
}

} // namespace trnsim::tb
