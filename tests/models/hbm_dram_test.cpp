// SystemC wrapper of the HBM model. Every TEST_CASE elaborates its own design and runs sc_start once, so each must
// run in its own process: CTest runs them one per process (catch_discover_tests). Running this executable without a
// test name runs them all in one process, which SystemC does not allow.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <random>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/hbm/hbm_dram.h"
#include "tests/models/hbm_test_support.h"

using namespace sc_core;
using namespace trnsim;
using namespace trnsim::hbm;

int sc_main(int argc, char* argv[]) {
    // Any SystemC warning fails the test.
    sc_report_handler::set_actions(SC_WARNING, SC_DISPLAY | SC_THROW);
    return Catch::Session().run(argc, argv);
}

namespace {

hbm_dram_config make_config(const char* preset, uint32_t stacks = 1) {
    auto cfg = test::config_for(test::preset(preset));
    cfg.stacks = stacks;
    validate_hbm_dram_config(cfg, "test");
    return cfg;
}

// LT initiator with several threads sharing one socket; a golden byte map updated at the moment of each access.
struct lt_tester : sc_module {
    tlm_utils::simple_initiator_socket<lt_tester> out{"out"};
    std::map<uint64_t, uint8_t> golden;
    uint64_t capacity;
    int threads, per_thread;
    uint64_t reads = 0, writes = 0, mismatches = 0, done_threads = 0;
    sc_time min_latency = sc_max_time();

    lt_tester(sc_module_name n, uint64_t cap, int th, int per) : sc_module(n), capacity(cap), threads(th), per_thread(per) {
        for (int i = 0; i < threads; ++i)
            sc_spawn([this, i] { run(i); }, sc_gen_unique_name("worker"));
    }

    void run(int id) {
        std::mt19937_64 rng(1000 + id);
        std::vector<uint8_t> buf(4096), expect(4096);
        for (int k = 0; k < per_thread; ++k) {
            // Half the accesses go to a 64 KiB hot region shared by all threads, half anywhere in the HBM.
            uint64_t len = 1 + rng() % 700;
            uint64_t addr = (rng() & 1) ? (rng() % (65536 - len)) : (rng() % (capacity - len));
            bool write = rng() % 3 == 0;
            tlm::tlm_generic_payload t;
            t.set_address(addr);
            t.set_data_length(unsigned(len));
            t.set_streaming_width(unsigned(len));
            t.set_data_ptr(buf.data());
            t.set_byte_enable_ptr(nullptr);
            t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            if (write) {
                t.set_command(tlm::TLM_WRITE_COMMAND);
                for (uint64_t i = 0; i < len; ++i) golden[addr + i] = buf[i] = uint8_t(rng());
                ++writes;
            } else {
                t.set_command(tlm::TLM_READ_COMMAND);
                for (uint64_t i = 0; i < len; ++i) {
                    auto it = golden.find(addr + i);
                    expect[i] = it == golden.end() ? 0 : it->second;
                }
                ++reads;
            }
            // The golden model and the target access the data in the same delta, with nothing in between.
            sc_time delay = SC_ZERO_TIME, start = sc_time_stamp();
            out->b_transport(t, delay);
            REQUIRE(t.get_response_status() == tlm::TLM_OK_RESPONSE);
            min_latency = std::min(min_latency, sc_time_stamp() - start);
            if (!write)
                for (uint64_t i = 0; i < len; ++i) mismatches += buf[i] != expect[i];
            if (rng() % 4 == 0) wait(sc_time(double(rng() % 50), SC_NS));
        }
        if (++done_threads == uint64_t(threads)) sc_stop();
    }
};

// AT initiator: sends `addrs` back to back (next BEGIN_REQ right after END_REQ), records the phase times.
struct at_tester : sc_module {
    tlm_utils::simple_initiator_socket<at_tester> out{"out"};
    std::vector<uint64_t> addrs;
    std::vector<std::unique_ptr<tlm::tlm_generic_payload>> trans;
    std::vector<std::vector<uint8_t>> data;
    std::vector<sc_time> begin_req, end_req, begin_resp;
    std::map<tlm::tlm_generic_payload*, size_t> index;
    sc_event end_req_ev;
    size_t responses = 0;
    bool slow_end_resp = false;  // answer BEGIN_RESP with TLM_ACCEPTED and send END_RESP 5 ns later
    bool alternate_writes = true;  // even requests write, odd ones read; else all read
    bool outstanding_req = false;
    bool protocol_error = false;

    at_tester(sc_module_name n, std::vector<uint64_t> a) : sc_module(n), addrs(std::move(a)) {
        out.register_nb_transport_bw(this, &at_tester::nb_bw);
        size_t k = addrs.size();
        begin_req.resize(k);
        end_req.resize(k);
        begin_resp.resize(k);
        SC_THREAD(run);
    }
    SC_HAS_PROCESS(at_tester);

    void run() {
        for (size_t i = 0; i < addrs.size(); ++i) {
            data.emplace_back(32, uint8_t(i));
            auto t = std::make_unique<tlm::tlm_generic_payload>();
            t->set_command(i % 2 || !alternate_writes ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
            t->set_address(addrs[i]);
            t->set_data_ptr(data.back().data());
            t->set_data_length(32);
            t->set_streaming_width(32);
            t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            index[t.get()] = i;
            tlm::tlm_phase ph = tlm::BEGIN_REQ;
            sc_time d = SC_ZERO_TIME;
            begin_req[i] = sc_time_stamp();
            outstanding_req = true;
            auto s = out->nb_transport_fw(*t, ph, d);
            if (s != tlm::TLM_ACCEPTED) protocol_error = true;
            trans.push_back(std::move(t));
            wait(end_req_ev);  // exclusion rule: no new BEGIN_REQ before END_REQ
        }
    }

    tlm::tlm_sync_enum nb_bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& ph, sc_time& d) {
        size_t i = index.at(&t);
        if (ph == tlm::END_REQ) {
            if (!outstanding_req) protocol_error = true;
            outstanding_req = false;
            end_req[i] = sc_time_stamp();
            end_req_ev.notify(SC_ZERO_TIME);
            return tlm::TLM_ACCEPTED;
        }
        if (ph == tlm::BEGIN_RESP) {
            begin_resp[i] = sc_time_stamp();
            if (++responses == addrs.size()) sc_stop();
            if (slow_end_resp) {
                sc_spawn([this, &t] {
                    wait(5, SC_NS);
                    tlm::tlm_phase p = tlm::END_RESP;
                    sc_time z = SC_ZERO_TIME;
                    out->nb_transport_fw(t, p, z);
                });
                return tlm::TLM_ACCEPTED;
            }
            ph = tlm::END_RESP;
            return tlm::TLM_COMPLETED;
        }
        protocol_error = true;
        return tlm::TLM_COMPLETED;
    }
};

// Address of (pseudo-channel 0, bank 0, row r, column c): every request to it needs PRE + ACT when rows differ.
uint64_t same_bank_address(hbm_dram& dut, uint32_t row, uint32_t col = 0) {
    dram_address a;
    a.row = row;
    a.column = col;
    return dut.system().mapper().encode(a);
}

} // namespace

TEST_CASE("LT: random mixed traffic from many threads keeps data intact (scoreboard)", "[hbm][systemc]") {
    auto cfg = make_config("hbm2e", 2);
    hbm_dram dut("hbm", cfg);
    lt_tester tb("tb", dut.capacity(), 8, 300);
    tb.out.bind(dut.in);
    sc_start();
    CHECK(tb.done_threads == 8);
    CHECK(tb.mismatches == 0);
    auto s = dut.stats().flatten();
    CHECK(s["hbm.reads"] == double(tb.reads));
    CHECK(s["hbm.writes"] == double(tb.writes));
    CHECK(s["hbm.bandwidth"] > 0);
    CHECK(s["hbm.read_latency.count"] == double(tb.reads));
    // No request can finish faster than an open-row hit: tRL + burst (writes: tWL + burst), plus the arrival cycle.
    const memspec& m = cfg.spec;
    CHECK(tb.min_latency >= dut.time_of(std::min(m.tRL, m.tWL) + m.burst_cycles()));
}

TEST_CASE("LT: requests of many threads queue together and FR-FCFS reorders them", "[hbm][systemc]") {
    auto cfg = make_config("hbm3");
    cfg.ctrl.refresh = refresh_kind::none;
    hbm_dram dut("hbm", cfg);
    // 16 threads read at t = 0 from one bank, alternating two rows; thread i reads row (i % 2).
    struct reader : sc_module {
        tlm_utils::simple_initiator_socket<reader> out{"out"};
        std::vector<sc_time> done;
        reader(sc_module_name n, hbm_dram& dut) : sc_module(n), done(16) {
            for (int i = 0; i < 16; ++i)
                sc_spawn([this, &dut, i] {
                    std::vector<uint8_t> b(32);
                    tlm::tlm_generic_payload t;
                    t.set_command(tlm::TLM_READ_COMMAND);
                    t.set_address(same_bank_address(dut, uint32_t(i % 2), uint32_t(i / 2)));
                    t.set_data_ptr(b.data());
                    t.set_data_length(32);
                    t.set_streaming_width(32);
                    sc_time d = SC_ZERO_TIME;
                    out->b_transport(t, d);
                    done[size_t(i)] = sc_time_stamp();
                });
        }
    } tb("tb", dut);
    tb.out.bind(dut.in);
    sc_start();
    auto s = dut.stats().flatten();
    CHECK(s["hbm.reads"] == 16);
    CHECK(s["hbm.row_hits"] >= 14);  // one ACT per row, the rest hits
    CHECK(s["hbm.cmd.act"] == 2);
    // Row 0's eight reads all finish before any of row 1's (reordered against arrival order).
    sc_time last_row0 = SC_ZERO_TIME, first_row1 = sc_max_time();
    for (int i = 0; i < 16; ++i) {
        if (i % 2 == 0) last_row0 = std::max(last_row0, tb.done[size_t(i)]);
        else first_row1 = std::min(first_row1, tb.done[size_t(i)]);
    }
    CHECK(last_row0 < first_row1);
}

TEST_CASE("AT: END_REQ is held back while the pseudo-channel queue is full", "[hbm][systemc]") {
    auto cfg = make_config("hbm3");
    cfg.ctrl.refresh = refresh_kind::none;
    cfg.ctrl.page_policy = page_policy_kind::open;
    cfg.ctrl.read_queue_depth = 4;
    cfg.ctrl.write_queue_depth = 4;
    cfg.ctrl.write_high_watermark = 3;
    cfg.ctrl.write_low_watermark = 1;
    hbm_dram dut("hbm", cfg);
    std::vector<uint64_t> addrs;
    for (uint32_t r = 0; r < 16; ++r) addrs.push_back(same_bank_address(dut, r));  // every request a row conflict
    at_tester tb("tb", addrs);
    tb.alternate_writes = false;
    tb.out.bind(dut.in);
    sc_start();
    REQUIRE(tb.responses == 16);
    CHECK_FALSE(tb.protocol_error);
    const sc_time tck = dut.time_of(1);
    const memspec& m = cfg.spec;
    // The first four find room: END_REQ in the clock after BEGIN_REQ.
    for (size_t i = 0; i < 4; ++i) CHECK(tb.end_req[i] - tb.begin_req[i] <= tck + tck);
    // The fifth waits until the first request's RD frees a slot (ACT at its arrival, RD tRCD later).
    CHECK(tb.end_req[4] >= tb.begin_req[0] + dut.time_of(m.tRCD));
    // After that every request waits for one more row conflict (PRE + ACT + RD, paced by tRC).
    for (size_t i = 5; i < 16; ++i) {
        INFO("request " << i << ": BEGIN_REQ " << tb.begin_req[i] << ", END_REQ " << tb.end_req[i]);
        CHECK(tb.end_req[i] - tb.begin_req[i] >= dut.time_of(m.tRC) - 2 * tck);
    }
    for (size_t i = 0; i < 16; ++i) CHECK(tb.begin_resp[i] > tb.end_req[i]);
    auto s = dut.stats().flatten();
    CHECK(s["hbm.row_conflicts"] == 15);
}

TEST_CASE("AT: responses wait for END_RESP, one at a time", "[hbm][systemc]") {
    auto cfg = make_config("hbm3");
    hbm_dram dut("hbm", cfg);
    std::vector<uint64_t> addrs;
    for (uint64_t i = 0; i < 32; ++i) addrs.push_back(i * 32);  // a sequential stream: responses come every burst
    at_tester tb("tb", addrs);
    tb.slow_end_resp = true;
    tb.out.bind(dut.in);
    sc_start();
    REQUIRE(tb.responses == 32);
    CHECK_FALSE(tb.protocol_error);
    std::vector<sc_time> r = tb.begin_resp;
    std::sort(r.begin(), r.end());
    for (size_t i = 1; i < r.size(); ++i) CHECK(r[i] - r[i - 1] >= sc_time(5, SC_NS));
    // Odd requests read bytes nobody wrote.
    for (size_t i = 1; i < 32; i += 2)
        for (uint8_t b : tb.data[i]) REQUIRE(b == 0);
}

TEST_CASE("bus errors, byte enables and debug transport", "[hbm][systemc]") {
    auto cfg = make_config("hbm2e");
    hbm_dram dut("hbm", cfg);
    struct tb_t : sc_module {
        tlm_utils::simple_initiator_socket<tb_t> out{"out"};
        hbm_dram& dut;
        bool ok = false;
        tb_t(sc_module_name n, hbm_dram& d) : sc_module(n), dut(d) { SC_THREAD(run); }
        SC_HAS_PROCESS(tb_t);
        void run() {
            uint8_t b[64] = {};
            tlm::tlm_generic_payload t;
            sc_time d = SC_ZERO_TIME;
            t.set_command(tlm::TLM_READ_COMMAND);
            t.set_data_ptr(b);
            t.set_data_length(64);
            t.set_streaming_width(64);
            // Out of range, and straddling the end.
            t.set_address(dut.capacity());
            out->b_transport(t, d);
            CHECK(t.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE);
            t.set_address(dut.capacity() - 32);
            out->b_transport(t, d);
            CHECK(t.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE);
            // AT: early completion with the error.
            tlm::tlm_phase ph = tlm::BEGIN_REQ;
            CHECK(out->nb_transport_fw(t, ph, d) == tlm::TLM_COMPLETED);
            CHECK(t.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE);
            // Debug write, timed read back.
            uint8_t w[64];
            for (int i = 0; i < 64; ++i) w[i] = uint8_t(i + 1);
            t.set_address(dut.capacity() - 64);
            t.set_command(tlm::TLM_WRITE_COMMAND);
            t.set_data_ptr(w);
            CHECK(out->transport_dbg(t) == 64);
            t.set_command(tlm::TLM_READ_COMMAND);
            t.set_data_ptr(b);
            out->b_transport(t, d);
            CHECK(t.get_response_status() == tlm::TLM_OK_RESPONSE);
            CHECK(std::equal(b, b + 64, w));
            // Byte-enabled write: only even bytes change.
            uint8_t be[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
            uint8_t z[64] = {};
            t.set_command(tlm::TLM_WRITE_COMMAND);
            t.set_data_ptr(z);
            t.set_byte_enable_ptr(be);
            t.set_byte_enable_length(2);
            out->b_transport(t, d);
            t.set_byte_enable_ptr(nullptr);
            t.set_command(tlm::TLM_READ_COMMAND);
            t.set_data_ptr(b);
            CHECK(out->transport_dbg(t) == 64);
            for (int i = 0; i < 64; ++i) CHECK(b[i] == (i % 2 ? w[i] : 0));
            ok = true;
            sc_stop();
        }
    } tb("tb", dut);
    tb.out.bind(dut.in);
    sc_start();
    CHECK(tb.ok);
}

TEST_CASE("command trace observer and statistics", "[hbm][systemc]") {
    auto cfg = make_config("hbm3");
    hbm_dram dut("hbm", cfg);
    std::vector<std::pair<command_record, sc_time>> trace;
    dut.set_command_trace([&](const command_record& r, const sc_time& t) { trace.emplace_back(r, t); });
    struct tb_t : sc_module {
        tlm_utils::simple_initiator_socket<tb_t> out{"out"};
        tb_t(sc_module_name n) : sc_module(n) { SC_THREAD(run); }
        SC_HAS_PROCESS(tb_t);
        void run() {
            std::vector<uint8_t> b(4096);
            tlm::tlm_generic_payload t;
            t.set_command(tlm::TLM_READ_COMMAND);
            t.set_data_ptr(b.data());
            t.set_data_length(4096);
            t.set_streaming_width(4096);
            t.set_address(0);
            sc_time d(10, SC_NS);
            out->b_transport(t, d);
            wait(10, SC_US);  // idle: refreshes keep going
            sc_stop();
        }
    } tb("tb");
    tb.out.bind(dut.in);
    sc_start();
    auto s = dut.stats().flatten();
    CHECK(s["hbm.reads"] == 1);
    CHECK(s["hbm.bytes_read"] == 4096);
    CHECK(s["hbm.cmd.rd"] + s["hbm.cmd.rda"] == 4096 / 32);
    CHECK(s["hbm.row_hit_rate"] > 80);
    CHECK(s["hbm.refreshes"] > 0);
    CHECK(s["hbm.read_latency.mean"] > 0);
    size_t rd = 0;
    sc_time prev = SC_ZERO_TIME;
    for (auto& [r, t] : trace) {
        rd += is_read(r.cmd);
        CHECK(t == dut.time_of(r.cycle));
        if (r.pc == 0) {
            CHECK(t >= prev);
            prev = t;
        }
    }
    CHECK(rd == 128);
    CHECK(trace.front().second >= sc_time(10, SC_NS));
}
