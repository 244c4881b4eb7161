# The one-command benchmark suite (bench/run_all.sh) needs, besides trnsim and hbm_bench, the host's optimised
# FP32 GEMM as a yard stick: blas_gemm, built whenever OpenBLAS (Debian's libopenblas-dev) is found. Only OpenBLAS:
# the yard stick must be an optimised BLAS (the reference libblas would flatter the simulator), and blas_gemm reports
# OpenBLAS's thread count (openblas_get_num_threads, which the reference BLAS lacks: linking it failed).
set(BLA_VENDOR OpenBLAS)
find_package(BLAS QUIET)
unset(BLA_VENDOR)
set(_arch_inc /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
find_path(TRNSIM_OPENBLAS_INCLUDE cblas.h NO_DEFAULT_PATH
          PATHS ${_arch_inc}/openblas-pthread ${_arch_inc}/openblas-openmp ${_arch_inc}/openblas-serial
                /usr/include/openblas /usr/local/include/openblas)
if(BLAS_FOUND AND TRNSIM_OPENBLAS_INCLUDE)
  add_executable(blas_gemm ${CMAKE_CURRENT_LIST_DIR}/blas_gemm.cpp)
  target_include_directories(blas_gemm PRIVATE ${TRNSIM_OPENBLAS_INCLUDE})
  target_link_libraries(blas_gemm PRIVATE ${BLAS_LIBRARIES})
else()
  message(STATUS "trnsim: OpenBLAS (libopenblas-dev) not found; bench/run_all.sh will report the BLAS yard stick as unavailable")
endif()
