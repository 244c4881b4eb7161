// Robustness at the library level (no SystemC kernel): the exact texts of config, descriptor and fault errors,
// and properties of the validators (the overlap check against brute force, checksum additivity).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <unistd.h>

#include "models/dma/dma_checksum.h"
#include "models/dma/dma_descriptor.h"
#include "tlm/config/config_node.h"
#include "tlm/output_file.h"
#include "tlm/wave_check.h"
#include "platforms/config/platform_config.h"
#include "tlm/fault.h"

using namespace trnsim;
using Catch::Contains;
using Catch::StartsWith;

namespace {
dma::dma_descriptor desc(uint64_t src, uint64_t dst, uint64_t row_bytes, uint32_t rows = 1, int64_t ss = 0, int64_t ds = 0,
                         uint32_t planes = 1, int64_t sp = 0, int64_t dp = 0) {
    dma::dma_descriptor d;
    d.src = src;
    d.dst = dst;
    d.row_bytes = row_bytes;
    d.rows = rows;
    d.src_stride = ss;
    d.dst_stride = ds;
    d.planes = planes;
    d.src_plane_stride = sp;
    d.dst_plane_stride = dp;
    return d;
}
// Brute force: do any two destination rows overlap?
bool overlaps_brute(const dma::dma_descriptor& d) {
    std::vector<int64_t> o;
    for (uint32_t p = 0; p < d.planes; ++p)
        for (uint32_t r = 0; r < d.rows; ++r) o.push_back(int64_t(p) * d.dst_plane_stride + int64_t(r) * d.dst_stride);
    std::sort(o.begin(), o.end());
    for (size_t i = 1; i < o.size(); ++i)
        if (o[i] - o[i - 1] < int64_t(d.row_bytes)) return true;
    return false;
}
} // namespace

TEST_CASE("JSON syntax errors give file:line:column", "[config][errors]") {
    REQUIRE_THROWS_WITH(config::parse_json("{\n  \"a\": 1,\n  \"b\" 2\n}", "bad.json"),
                        StartsWith("bad.json:3:7: JSON syntax error while parsing object separator"));
    REQUIRE_THROWS_WITH(config::parse_json("{\"a\": [1, 2,]}", "t.json"), StartsWith("t.json:1:13: JSON syntax error"));
    REQUIRE_THROWS_WITH(config::parse_json("{\"a\": 1e999}", "t.json"), Catch::Equals("t.json: JSON number overflow parsing '1e999'"));
    REQUIRE_THROWS_WITH(config::parse_json("\xef\xbb", "t.json"), StartsWith("t.json:1:"));
    REQUIRE_THROWS_WITH(config::parse_json("{} {}", "t.json"), StartsWith("t.json:1:4:") && Contains("expected end of input"));
}

TEST_CASE("a key given twice is an error naming its path, through arrays", "[config][errors]") {
    REQUIRE_THROWS_WITH(config::parse_json(R"({"a": [{"b": 1}, {"c": {"d": 1, "d": 2}}]})", "t.json"),
                        Catch::Equals("t.json: a[1].c.d: key given twice (JSON keeps only one of them)"));
    REQUIRE_THROWS_WITH(config::parse_json(R"({"x": 1, "x": 1})", "t.json"), Contains("t.json: x: key given twice"));
    REQUIRE_NOTHROW(config::parse_json(R"({"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 2}]})", "t.json"));
}

TEST_CASE("files that are not there or not files are named as such", "[config][errors]") {
    REQUIRE_THROWS_WITH(config::load_json_file("/nonexistent/x.json"),
                        Catch::Equals("/nonexistent/x.json: cannot open file (it does not exist)"));
    REQUIRE_THROWS_WITH(config::load_json_file("/tmp"), Catch::Equals("/tmp: cannot open file (not a regular file)"));
}

TEST_CASE("typed getters: signed ranges, raw values, arrays of arrays", "[config][errors]") {
    auto j = config::parse_json(R"({"s": -5, "big": 18446744073709551615, "f": 1.5, "aa": [[{"x": 1}], [7]], "t": "txt"})", "t.json");
    auto n = config::node::root(j, "t.json");
    REQUIRE(n.get_int("s", 0, -10, 10) == -5);
    REQUIRE_THROWS_WITH(n.get_int("s", 0, 0, 10), Catch::Equals("s: value -5 is out of range [0, 10] (in t.json)"));
    REQUIRE_THROWS_WITH(n.get_int("big", 0, INT64_MIN, INT64_MAX), StartsWith("big: value 18446744073709551615 is out of range"));
    REQUIRE_THROWS_WITH(n.get_int("f", 0, -10, 10), StartsWith("f: expected a whole number, got number 1.5"));
    REQUIRE_THROWS_WITH(n.get_int("t", 0, -10, 10), StartsWith("t: expected a whole number, got string"));
    REQUIRE_THROWS_WITH(n.children2d("aa"), Catch::Equals("aa[1][0]: expected an object, got number (in t.json)"));
    REQUIRE(n.get_raw("t")->get<std::string>() == "txt");
    REQUIRE_THROWS_WITH(n.children2d("t"), StartsWith("t: expected an array of arrays, got string"));
}

TEST_CASE("platform validation: consistency and address arithmetic", "[config][errors]") {
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.address_map.hbm_base=18446744073709551000"}),
                        StartsWith("chip.address_map.hbm_base: 0xfffffffffffffd98 + the HBM capacity (chip.hbm.capacity_gib) wraps around 2^64"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.address_map.core_stride=4096"}),
                        StartsWith("chip.address_map.core_stride: smaller than the core window"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.n_max=8192"}),
                        StartsWith("chip.core.psum.partition_kib: a PSUM partition of 16384 bytes cannot hold one moving tile of n_max = 8192"));
    // The message names the --set that gave the value.
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.hbm.stacks=0"}),
                        Catch::EndsWith("(from --set chip.hbm.stacks=0)"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.hbm.latency_ns=-3"}),
                        StartsWith("chip.hbm.latency_ns: value -3 is out of range [0, 1e+06]"));
}

TEST_CASE("fault specs: parsing and validation messages", "[faults][errors]") {
    auto j = platform::fault_option_json("hbm.channel3:disable,policy=remap,from_us=10");
    REQUIRE(j["target"] == "hbm.channel3");
    REQUIRE(j["kind"] == "disable");
    REQUIRE(j["policy"] == "remap");
    REQUIRE(j["from_us"] == 10);
    REQUIRE_THROWS_WITH(platform::fault_option_json(":disable"), StartsWith("--fault :disable: expected TARGET:KIND"));
    REQUIRE_THROWS_WITH(platform::fault_option_json("hbm:slow,,x=1"), Contains("empty item"));
    REQUIRE_THROWS_WITH(platform::fault_option_json("hbm:slow,a=1,a=2"), Contains("'a' given twice"));
    auto load = [](const std::string& f) { return platform::load_platform("trn2", {}, std::vector<std::string>{f}); };
    REQUIRE_THROWS_WITH(load("core0.dmax:error"), Contains("'core0.dmax' is not a fault target"));
    REQUIRE_THROWS_WITH(load("core0.dma:error,latency_ns=3"), Contains("latency_ns: applies only to kind \"slow\""));
    REQUIRE_THROWS_WITH(load("hbm:corrupt,on=both"), Contains("chip.faults[0].on: 'both' is not one of: read, write"));
    REQUIRE_THROWS_WITH(load("hbm:corrupt,count=0"), Contains("chip.faults[0].count: value 0 is out of range"));
    auto cfg = load("core3.dma:error,after=2");
    REQUIRE(cfg.chip.faults.size() == 1);
    REQUIRE(cfg.chip.faults[0].label == "chip.faults[0] (--fault core3.dma:error,after=2)");
    REQUIRE(cfg.chip.hbm.faults.empty());
    auto h = load("hbm.channel7:slow,latency_ns=100");
    REQUIRE(h.chip.hbm.faults.size() == 1);
    REQUIRE(h.chip.hbm.faults[0].target == "channel7");
}

TEST_CASE("fault triggers: window, after, count - targets handed down relative", "[faults]") {
    tlmx::fault_spec s;
    s.after = 2;
    s.count = 2;
    s.from_ns = 10;
    s.until_ns = 100;
    tlmx::fault_trigger t(s);
    REQUIRE_FALSE(t.hit(5));   // before the window: not even counted
    REQUIRE_FALSE(t.hit(10));  // let through (1 of 2)
    REQUIRE_FALSE(t.hit(11));  // let through (2 of 2)
    REQUIRE(t.hit(12));
    REQUIRE(t.hit(13));
    REQUIRE_FALSE(t.hit(14));  // count exhausted
    REQUIRE_FALSE(t.hit(200));
    REQUIRE(t.hits() == 2);
    std::vector<tlmx::fault_spec> all(3);
    all[0].target = "core1.dma2";
    all[1].target = "core1";
    all[2].target = "core10.dma0";
    auto under = tlmx::faults_under(all, "core1");
    REQUIRE(under.size() == 2);
    REQUIRE(under[0].target == "dma2");
    REQUIRE(under[1].target.empty());
}

TEST_CASE("DMA descriptor validation: every rule with its message", "[dma][errors]") {
    REQUIRE(dma::validate(desc(0, 0x10000, 256, 4, 256, 1024)).empty());
    REQUIRE_THAT(dma::validate(desc(0, 0x800, 256, 4, 256, -1024)), Catch::Equals("destination addresses wrap around 2^64"));
    REQUIRE_THAT(dma::validate(desc(0, 0x100000, 256, 4, 256, -1024)), Catch::Equals(""));
    REQUIRE_THAT(dma::validate(desc(0, 0x1000, 0)), Catch::Equals("row_bytes is 0 (zero-length transfer)"));
    REQUIRE_THAT(dma::validate(desc(0, 0x1000, 4, 1, 0, 0, 0)), Catch::Equals("planes is 0 (zero-length transfer)"));
    REQUIRE_THAT(dma::validate(desc(0, 0x1000, 1, 1u << 17, 1, 1, 1u << 16, 1 << 17, 1 << 17)),
                 StartsWith("rows x planes = 8589934592 exceeds the limit of 2^32 rows"));
    REQUIRE_THAT(dma::validate(desc(64, 0x1000, 64, 2, 80, 128), 32),
                 Catch::Equals("src_stride 80 (0x50) is not a multiple of the 32-byte DMA alignment"));
    REQUIRE_THAT(dma::validate(desc(64, 0x1000, 62), 4), Catch::Equals("row_bytes 62 (0x3e) is not a multiple of the 4-byte DMA alignment"));
    REQUIRE_THAT(dma::validate(desc(0, 0x1000, 64, 1, 0, 0, 2, 64, 3), 4),
                 Catch::Equals("dst_plane_stride 3 (0x3) is not a multiple of the 4-byte DMA alignment"));
    REQUIRE(dma::validate(desc(0, 0x1003, 64), 1).empty());  // no alignment rule by default
    REQUIRE_THAT(dma::validate(desc(0, ~0ull - 100, 64, 2, 64, 64)), Catch::Equals("destination addresses wrap around 2^64"));
    REQUIRE_THAT(dma::validate(desc(0, 0x1000, 64, 1, 0, 0, 2, 64, 0)),
                 StartsWith("destination rows of different planes overlap (dst_plane_stride 0"));
    // The GEMM's FP8 double-row layout interleaves planes within partitions without overlap.
    REQUIRE(dma::validate(desc(0, 0x100000, 128, 128, 2048, 229376, 2, 262144, 128)).empty());
    REQUIRE_THAT(dma::validate(desc(0x1000, 0x1010, 64)), StartsWith("source and destination overlap"));
    REQUIRE_THAT(dma::validate(desc(0x1000, 0x1000 + 64 * 8 - 1, 64, 8, 64, 64)), StartsWith("source and destination overlap"));
    REQUIRE(dma::validate(desc(0x1000, 0x1040, 64)).empty());  // adjacent, not overlapping
    // A broadcast (source rows repeated) is fine.
    REQUIRE(dma::validate(desc(0x1000, 0x100000, 64, 16, 0, 4096)).empty());
}

TEST_CASE("destination overlap check agrees with brute force", "[dma]") {
    std::mt19937_64 g(12345);
    int disjoint = 0, overlapping = 0;
    for (int i = 0; i < 20000; ++i) {
        auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); };
        auto d = desc(0, 1ull << 40, uint64_t(pick(1, 64)), uint32_t(pick(1, 12)), 0, pick(-300, 300), uint32_t(pick(1, 12)), 0,
                      pick(-300, 300));
        std::string why = dma::validate(d);
        bool brute = overlaps_brute(d);
        INFO(dma::to_string(d) << " -> " << why);
        REQUIRE((why.find("overlap") != std::string::npos) == brute);
        (brute ? overlapping : disjoint)++;
    }
    REQUIRE(disjoint > 1000);
    REQUIRE(overlapping > 1000);
}

TEST_CASE("checksums: parts add up, any single byte change is caught, placement matters", "[dma][checksum]") {
    std::vector<uint8_t> mem(1 << 16);
    std::mt19937_64 g(7);
    for (auto& b : mem) b = uint8_t(g());
    auto read = [&](uint64_t a, uint8_t* b, uint64_t n) { std::memcpy(b, &mem[a], n); };
    auto d = desc(100, 40000, 300, 7, 500, 3000);
    uint64_t whole = dma::checksum_of(d, read);
    uint64_t sum = 0;
    for (auto& [e, p] : dma::split_across_engines(d, 3, 64))
        dma::for_each_burst(p, 128, [&](uint64_t s, uint64_t t, uint64_t n) { sum = dma::checksum_update(sum, t, &mem[s], n); });
    REQUIRE(sum == whole);
    for (int i = 0; i < 2000; ++i) {
        uint64_t a = 100 + g() % 300, bit = g() % 8;  // a byte of the first row
        mem[a] ^= uint8_t(1u << bit);
        REQUIRE(dma::checksum_of(d, read) != whole);
        mem[a] ^= uint8_t(1u << bit);
    }
    auto moved = d;
    moved.dst += 4;
    REQUIRE(dma::checksum_of(moved, read) != whole);
}

// ---- The output writer (tlm/output_file.h) ----
namespace {
namespace fs = std::filesystem;
std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
size_t entries(const fs::path& d) { return size_t(std::distance(fs::directory_iterator(d), fs::directory_iterator())); }
fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("trnsim-robust-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
} // namespace

TEST_CASE("output_file: a unique temporary, renamed; planted links and a user's FILE.tmp untouched", "[robustness]") {
    const fs::path d = fresh_dir("out");
    spit(d / "victim", "victim");
    fs::create_symlink(d / "victim", d / "a.json.tmp");
    spit(d / "b.json.tmp", "mine");
    platform::write_file((d / "a.json").string(), "new a");
    platform::write_file((d / "b.json").string(), "new b");
    CHECK(slurp(d / "a.json") == "new a");
    CHECK(slurp(d / "b.json") == "new b");
    CHECK(slurp(d / "victim") == "victim");
    CHECK(fs::is_symlink(d / "a.json.tmp"));
    CHECK(slurp(d / "b.json.tmp") == "mine");
    CHECK(entries(d) == 5);  // victim, the link, b.json.tmp, a.json, b.json: no temporary left
    // Not committed: the target keeps its old content, the temporary goes.
    {
        platform::output_file o((d / "a.json").string());
        o.write("half");
    }
    CHECK(slurp(d / "a.json") == "new a");
    CHECK(entries(d) == 5);
    // An executable keeps its mode.
    fs::permissions(d / "b.json", fs::perms::owner_exec, fs::perm_options::add);
    platform::write_file((d / "b.json").string(), "again");
    CHECK((fs::status(d / "b.json").permissions() & fs::perms::owner_exec) != fs::perms::none);
    fs::remove_all(d);
}

TEST_CASE("output_file: errors keep the system's reason", "[robustness]") {
    REQUIRE_THROWS_WITH(platform::write_file("/dev/full", "x"), "cannot write /dev/full: No space left on device");
    REQUIRE_THROWS_WITH(platform::write_file("/nonexistent/dir/x.json", "x"),
                        "cannot write /nonexistent/dir/x.json: No such file or directory");
    platform::write_file("/dev/null", "in place");  // a device is written in place
    CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("captured_output: a library's file by name, exactly the target, its write errors reported", "[robustness]") {
    const fs::path d = fresh_dir("cap");
    auto library_writes = [](const platform::captured_output& c, const std::string& text) {
        FILE* f = std::fopen((c.library_name() + ".vcd").c_str(), "w");
        REQUIRE(f);
        std::fputs(text.c_str(), f);
        std::fclose(f);
    };
    {
        platform::captured_output c((d / "W.VCD").string(), ".vcd");
        library_writes(c, std::string(300000, 'v'));
        c.finish();
    }
    CHECK(slurp(d / "W.VCD") == std::string(300000, 'v'));
    CHECK(entries(d) == 1);
    {
        platform::captured_output c("/dev/full", ".vcd");
        library_writes(c, std::string(100000, 'v'));
        REQUIRE_THROWS_WITH(c.finish(), "cannot write /dev/full: No space left on device");
    }
    {  // never opened by the library: an empty file
        platform::captured_output c((d / "empty.vcd").string(), ".vcd");
        c.finish();
    }
    CHECK(fs::file_size(d / "empty.vcd") == 0);
    {  // not finished (the run failed): the old file stays
        platform::captured_output c((d / "W.VCD").string(), ".vcd");
        library_writes(c, "partial");
    }
    CHECK(slurp(d / "W.VCD") == std::string(300000, 'v'));
    CHECK(entries(d) == 2);
    fs::remove_all(d);
}

namespace {
// A file with the block structure of an FST file (tlm/wave_check.h): a header block, value changes, geometry and
// a hierarchy block, each a type byte and a big-endian length that counts its own 8 bytes.
std::string fst_block(uint8_t type, size_t payload) {
    std::string b(1, char(type));
    const uint64_t len = payload + 8;
    for (int i = 7; i >= 0; --i) b += char((len >> (8 * i)) & 0xff);
    return b + std::string(payload, 'x');
}
std::string fst_like() { return fst_block(0, 321) + fst_block(8, 1000) + fst_block(3, 40) + fst_block(6, 200); }
} // namespace

TEST_CASE("fst_file_problem: a whole file passes, every truncation and an unfinished block are named", "[robustness]") {
    const fs::path d = fresh_dir("fst");
    const std::string whole = fst_like();
    spit(d / "w.fst", whole);
    CHECK(platform::fst_file_problem((d / "w.fst").string()).empty());
    for (size_t cut = 0; cut < whole.size(); ++cut) {  // a writer stopped by a full disk: any prefix
        spit(d / "t.fst", whole.substr(0, cut));
        INFO("cut at " << cut);
        CHECK_FALSE(platform::fst_file_problem((d / "t.fst").string()).empty());
    }
    spit(d / "t.fst", whole.substr(0, 1 + 8 + 321 + 10));
    CHECK(platform::fst_file_problem((d / "t.fst").string()) ==
          "block 1 at byte 330 runs past the end of the file (1008 bytes after its type byte, 9 left)");
    std::string skip = whole;
    skip[330] = char(255);
    spit(d / "t.fst", skip);
    CHECK(platform::fst_file_problem((d / "t.fst").string()) ==
          "block 1 at byte 330 was never finished (the writer stopped while writing it)");
    spit(d / "t.fst", fst_block(0, 321) + fst_block(8, 1000) + fst_block(3, 40));
    CHECK(platform::fst_file_problem((d / "t.fst").string()) ==
          "the FST file has no hierarchy block (the writer did not close it)");
    spit(d / "t.fst", "$date\n");
    CHECK(platform::fst_file_problem((d / "t.fst").string()) == "the file does not start with an FST header block");
    fs::remove_all(d);
}

TEST_CASE("captured_output spool: a seeking library's file, checked, then copied; a bad file is refused", "[robustness]") {
    const fs::path d = fresh_dir("spool");
    const auto check = [](const std::string& f) { return platform::fst_file_problem(f); };
    auto library_writes = [](const platform::captured_output& c, const std::string& text, bool hier) {
        FILE* f = std::fopen(c.library_name().c_str(), "w+b");
        REQUIRE(f);
        std::fputs(std::string(text.size(), '?').c_str(), f);  // written, then rewritten in place (as fstapi does)
        std::fseek(f, 0, SEEK_SET);
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
        if (hier) std::fclose(std::fopen((c.library_name() + ".hier").c_str(), "w"));  // the hierarchy spool
    };
    {
        platform::captured_output c((d / "w.fst").string(), "", platform::capture_mode::spool);
        library_writes(c, fst_like(), true);
        c.finish(check);
    }
    CHECK(slurp(d / "w.fst") == fst_like());
    spit(d / "old.fst", "old");
    {
        platform::captured_output c((d / "old.fst").string(), "", platform::capture_mode::spool);
        library_writes(c, fst_like().substr(0, 700), false);
        REQUIRE_THROWS_WITH(c.finish(check), StartsWith("cannot write " + (d / "old.fst").string() + ": block 1 at byte 330"));
    }
    CHECK(slurp(d / "old.fst") == "old");
    {
        platform::captured_output c((d / "old.fst").string(), "", platform::capture_mode::spool);
        REQUIRE_THROWS_WITH(c.finish(check), Contains("the writer produced no file"));
    }
    {
        platform::captured_output c("/dev/full", "", platform::capture_mode::spool);
        library_writes(c, fst_like(), false);
        REQUIRE_THROWS_WITH(c.finish(check), "cannot write /dev/full: No space left on device");
    }
    CHECK(entries(d) == 2);  // w.fst, old.fst: no temporary beside them
    fs::remove_all(d);
}

TEST_CASE("same_file_problem: by identity, not by spelling", "[robustness]") {
    using platform::named_file;
    const fs::path d = fresh_dir("same");
    spit(d / "c.json", "{}");
    fs::create_hard_link(d / "c.json", d / "hard.json");
    fs::create_directories(d / "sub");
    fs::create_directory_symlink(d / "sub", d / "link");
    const std::string c = (d / "c.json").string();
    CHECK(platform::same_file_problem({{"--config", c, false}, {"--stats", (d / "hard.json").string(), true}}) ==
          "--stats " + (d / "hard.json").string() + " is the same file as --config " + c + ": the run would overwrite its input");
    // New files: the same canonical directory and name.
    CHECK(platform::same_file_problem({{"--timeline", (d / "sub/n.json").string(), true},
                                       {"--stats", (d / "link/../link/n.json").string(), true}}) ==
          "--timeline " + (d / "sub/n.json").string() + " is the same file as --stats " +
              (d / "link/../link/n.json").string() + ": one output would overwrite the other");
    CHECK(platform::same_file_problem({{"--config", c, false}, {"--program", c, false}}).empty());  // two inputs
    CHECK(platform::same_file_problem({{"--stats", "/dev/null", true}, {"--vcd", "/dev/null", true}}).empty());
    CHECK(platform::same_file_problem({{"--stats", (d / "x.json").string(), true}, {"--vcd", (d / "y.json").string(), true}}).empty());
    fs::remove_all(d);
}

TEST_CASE("config overrides: indices change existing array elements; bad ones name the override", "[robustness]") {
    nlohmann::json j = {{"chip", {{"faults", {{{"kind", "slow"}}, {{"kind", "disable"}}}}}}, {"m", {{1, 2}, {3, 4}}}};
    config::apply_override(j, "chip.faults[1].kind=corrupt");
    CHECK(j["chip"]["faults"][1]["kind"] == "corrupt");
    config::apply_override(j, "m[1][0]=9");
    CHECK(j["m"][1][0] == 9);
    config::apply_override(j, "chip.faults[0]={\"kind\":\"error\"}");
    CHECK(j["chip"]["faults"][0] == nlohmann::json{{"kind", "error"}});
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.faults[2].kind=x"),
                        "--set chip.faults[2].kind=x: 'chip.faults' has 2 elements: no index 2");
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.faults[0].kind[0]=x"),
                        StartsWith("--set chip.faults[0].kind[0]=x: 'chip.faults[0].kind' is not an array (string)"));
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.other[0]=1"),
                        StartsWith("--set chip.other[0]=1: 'chip.other' is not an array (not set)"));
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.faults[-1].kind=x"), Contains("bad index in 'faults[-1]'"));
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.faults[0"), Contains("expected key.path=value"));
    REQUIRE_THROWS_WITH(config::apply_override(j, "chip.faults[0=1"), Contains("bad index in 'faults[0'"));
}
