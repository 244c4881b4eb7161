// trnsim collective: runs one collective operation on a multi-chip platform and reports its time, algorithm and bus
// bandwidth (nccl-tests conventions, docs/collectives.md) and the link utilisation.
#pragma once

namespace trnsim::app {

extern const char* COLLECTIVE_USAGE;
// argv[1] == "collective". Throws usage_error for bad input (the caller exits 2).
int cmd_collective(int argc, char** argv);

}  // namespace trnsim::app
