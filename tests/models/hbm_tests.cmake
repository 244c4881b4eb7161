# HBM model tests (Catch2 v2). One executable per file; every TEST_CASE is its own CTest test and process
# (catch_discover_tests), so SystemC test cases never share a kernel. Include after the HBM libraries exist.
get_filename_component(TRNSIM_HBM_ROOT ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
find_package(Catch2 2 REQUIRED)
include(Catch)

set(TRNSIM_HBM_PLAIN_TESTS hbm_timing_checker_test hbm_memspec_test hbm_address_mapper_test hbm_controller_test
    hbm_trace_test)
foreach(t ${TRNSIM_HBM_PLAIN_TESTS})
  add_executable(${t} ${TRNSIM_HBM_ROOT}/tests/models/${t}.cpp)
  target_link_libraries(${t} PRIVATE trnsim_hbm_trace Catch2::Catch2)
  target_compile_definitions(${t} PRIVATE TRNSIM_CONFIG_DIR="${TRNSIM_HBM_ROOT}/configs")
  catch_discover_tests(${t} TEST_PREFIX "${t}: " PROPERTIES TIMEOUT 60 LABELS hbm)
endforeach()

if(TARGET trnsim_hbm_systemc)
  add_executable(hbm_dram_test ${TRNSIM_HBM_ROOT}/tests/models/hbm_dram_test.cpp)
  target_link_libraries(hbm_dram_test PRIVATE trnsim_hbm_systemc Catch2::Catch2)
  target_compile_definitions(hbm_dram_test PRIVATE TRNSIM_CONFIG_DIR="${TRNSIM_HBM_ROOT}/configs")
  catch_discover_tests(hbm_dram_test TEST_PREFIX "hbm_dram_test: " PROPERTIES TIMEOUT 60 LABELS hbm)
endif()
