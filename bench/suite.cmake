# The one-command benchmark suite (bench/run_all.sh) needs, besides trnsim and hbm_bench, the host's optimised
# FP32 GEMM as a yard stick: blas_gemm, built whenever a BLAS (Debian's libopenblas-dev) is found.
find_package(BLAS QUIET)
find_path(TRNSIM_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
if(BLAS_FOUND AND TRNSIM_CBLAS_INCLUDE)
  add_executable(blas_gemm ${CMAKE_CURRENT_LIST_DIR}/blas_gemm.cpp)
  target_include_directories(blas_gemm PRIVATE ${TRNSIM_CBLAS_INCLUDE})
  target_link_libraries(blas_gemm PRIVATE ${BLAS_LIBRARIES})
else()
  message(STATUS "trnsim: no BLAS with cblas.h found; bench/run_all.sh will report the BLAS yard stick as unavailable")
endif()
