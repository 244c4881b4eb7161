// Catch2 main for tests that use the SystemC kernel: any SystemC warning or error becomes an exception (a failure),
// and the banner is off. Each TEST_CASE runs in its own process (catch_discover_tests), so each elaborates once.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include <systemc>

int sc_main(int argc, char** argv) {
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    return Catch::Session().run(argc, argv);
}

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}
