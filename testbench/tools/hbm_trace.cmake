# Trace-driven front end of the HBM DRAM model (plain C++). Included from a parent CMakeLists.txt after
# add_subdirectory(models/hbm/dram). In the trnsim tree testbench/CMakeLists.txt already globs hbm_trace.cpp into
# trnsim_testbench; this fragment is for standalone builds.
get_filename_component(TRNSIM_HBM_ROOT ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
add_library(trnsim_hbm_trace STATIC ${TRNSIM_HBM_ROOT}/testbench/tools/hbm_trace.cpp)
target_link_libraries(trnsim_hbm_trace PUBLIC trnsim_hbm_dram)
target_compile_definitions(trnsim_hbm_trace PRIVATE TRNSIM_CONFIG_DIR="${TRNSIM_HBM_ROOT}/configs")
if(COMMAND trnsim_warnings)
  trnsim_warnings(trnsim_hbm_trace)
endif()
