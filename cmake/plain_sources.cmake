# The plain-C++ sources (no SystemC): the config reader and checks, parameter and schedule code, file front ends and
# the detailed HBM DRAM model. ONE list for both builds: the main build makes its plain libraries from it
# (trnsim_config, trnsim_numerics, trnsim_stats, trnsim_hbm_dram and trnsim_plain; the SystemC libraries leave these
# files out of their globs and link them), and fuzz/ compiles the same files again with clang's fuzzer and sanitizer
# instrumentation. The main build links tests/robustness fuzz_regressions_test (fuzz/targets.cpp, what the fuzzers
# run) against trnsim_plain alone, so a plain file that starts to need a .cpp missing here fails the main build, with
# the same link error the fuzz build would give, before it can reach fuzz/. Add a plain source here, not in fuzz/.
#
# Included by the top-level CMakeLists.txt, fuzz/CMakeLists.txt and models/hbm/dram/CMakeLists.txt (standalone too).
include_guard(GLOBAL)
get_filename_component(TRNSIM_PLAIN_ROOT ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)

set(TRNSIM_CONFIG_SRC ${TRNSIM_PLAIN_ROOT}/tlm/config/config_node.cpp              # trnsim_config: the JSON reader
    ${TRNSIM_PLAIN_ROOT}/tlm/config/preset.cpp                                         # the preset resolver
    ${TRNSIM_PLAIN_ROOT}/tlm/output_file.cpp                                           # the output file writer
    ${TRNSIM_PLAIN_ROOT}/tlm/wave_check.cpp)                                           # and its FST check
set(TRNSIM_STATS_SRC ${TRNSIM_PLAIN_ROOT}/tlm/stats.cpp)                       # trnsim_stats: the statistics tree
file(GLOB TRNSIM_NUMERICS_SRC CONFIGURE_DEPENDS ${TRNSIM_PLAIN_ROOT}/models/numerics/*.cpp)  # trnsim_numerics
# trnsim_hbm_dram: memspec, address mapping, timing checker, schedulers, page policies, refresh, pseudo-channel
# controller cores and the whole-HBM dram_system.
set(TRNSIM_HBM_DRAM_SRC
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/memspec.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/address_mapper.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/checker/timing_checker.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/scheduler/scheduler.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/page_policy/page_policy.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/refresh/refresh.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/controller/pc_controller.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/hbm_dram_config.cpp
  ${TRNSIM_PLAIN_ROOT}/models/hbm/dram/dram_system.cpp)
# trnsim_plain: everything else plain that the platform config and the fuzzed parsers need (on top of the above).
set(TRNSIM_PLAIN_SRC
  ${TRNSIM_PLAIN_ROOT}/platforms/config/platform_config.cpp
  ${TRNSIM_PLAIN_ROOT}/platforms/server/multichip_config.cpp
  ${TRNSIM_PLAIN_ROOT}/models/dma/dma_descriptor.cpp
  ${TRNSIM_PLAIN_ROOT}/models/collective/schedule.cpp ${TRNSIM_PLAIN_ROOT}/models/collective/schedule_phases.cpp
  ${TRNSIM_PLAIN_ROOT}/models/collective/algo_ring.cpp ${TRNSIM_PLAIN_ROOT}/models/collective/algo_broadcast.cpp
  ${TRNSIM_PLAIN_ROOT}/models/collective/algo_alltoall.cpp ${TRNSIM_PLAIN_ROOT}/models/collective/algo_direct.cpp
  ${TRNSIM_PLAIN_ROOT}/models/collective/cost_model.cpp
  ${TRNSIM_PLAIN_ROOT}/models/link/link_timing.cpp
  ${TRNSIM_PLAIN_ROOT}/models/link/torus_routing.cpp
  ${TRNSIM_PLAIN_ROOT}/models/chip_light/light_chip_config.cpp
  ${TRNSIM_PLAIN_ROOT}/models/network/network_config.cpp
  ${TRNSIM_PLAIN_ROOT}/testbench/workloads/program/program_file.cpp
  ${TRNSIM_PLAIN_ROOT}/testbench/tools/hbm_trace.cpp
  ${TRNSIM_PLAIN_ROOT}/tlm/trace_events.cpp)
# Every plain source: what fuzz/ instruments.
set(TRNSIM_PLAIN_ALL_SRC ${TRNSIM_CONFIG_SRC} ${TRNSIM_STATS_SRC} ${TRNSIM_NUMERICS_SRC} ${TRNSIM_HBM_DRAM_SRC}
    ${TRNSIM_PLAIN_SRC})
