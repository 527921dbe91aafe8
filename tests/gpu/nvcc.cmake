# gpdl_nvcc_program(NAME SOURCE DIR): the CUDA program DIR/NAME, compiled from
# SOURCE by nvcc in a custom command, so that the C project needs no CUDA
# language support from CMake; built with `all`. Used by tests/gpu and
# bench/gpu when GPDL_BUILD_CUDA_TESTS is on (nvcc found; no GPU needed).
#
# SASS for each of GPDL_CUDA_ARCHS and PTX for the last, which the driver
# compiles for newer GPUs. CUDA 13 builds nothing older than sm_75; sm_90 is
# the H100/H200 the GPU tests run on. The CUDA runtime is linked statically
# (nvcc's default): the program needs only the driver, and CUPTI sees its
# runtime calls as it sees libcudart.so's. The programs are built without the
# sanitizers, like a user's programs.
include_guard(GLOBAL)
set(GPDL_CUDA_ARCHS "80;90" CACHE STRING
    "GPU architectures (compute capability x10) the CUDA test programs are built for; PTX for the last")

function(gpdl_nvcc_program name source dir)
  set(gencode)
  foreach(arch ${GPDL_CUDA_ARCHS})
    list(APPEND gencode -gencode=arch=compute_${arch},code=sm_${arch})
  endforeach()
  list(GET GPDL_CUDA_ARCHS -1 last)
  list(APPEND gencode -gencode=arch=compute_${last},code=compute_${last})
  set(incs)
  if(GPDL_NVTX_INCLUDE_DIR)
    list(APPEND incs -isystem ${GPDL_NVTX_INCLUDE_DIR})
  endif()
  add_custom_command(OUTPUT ${dir}/${name}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${GPDL_NVCC} ${gencode} -O2 -std=c++17 -Xcompiler=-Wall,-Wextra,-Werror -Werror=all-warnings
            ${incs} -o ${dir}/${name} ${source} -ldl
    DEPENDS ${source}
    COMMENT "Building CUDA program ${name} with nvcc"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${dir}/${name})
endfunction()
