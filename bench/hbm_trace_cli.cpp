// Standalone `hbm_trace` executable (the same as `trnsim hbm`), for builds without the trnsim app.
#include "testbench/tools/hbm_trace.h"

int main(int argc, char** argv) { return trnsim::tb::hbm_trace_main(argc, argv); }
