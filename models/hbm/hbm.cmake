# SystemC wrapper of the HBM DRAM model (with the HBM model interface and fault injector it implements). Included from a parent after add_subdirectory(models/hbm/dram). In the trnsim
# tree models/CMakeLists.txt already globs hbm/*.cpp into trnsim_models; this fragment is for standalone builds.
get_filename_component(TRNSIM_HBM_ROOT ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
add_library(trnsim_hbm_systemc STATIC ${TRNSIM_HBM_ROOT}/models/hbm/hbm_dram.cpp ${TRNSIM_HBM_ROOT}/models/hbm/hbm_model.cpp
            ${TRNSIM_HBM_ROOT}/models/hbm/hbm_faults.cpp)
target_link_libraries(trnsim_hbm_systemc PUBLIC trnsim_hbm_dram systemc::systemc)
if(COMMAND trnsim_warnings)
  trnsim_warnings(trnsim_hbm_systemc)
endif()
