# Compile options every target with CUDA sources shares: line info for the profilers,
# constexpr host functions callable from kernels, and the two developer switches.
#   ADI3D_CUDA_PTXAS_VERBOSE  registers and spills per kernel (-Xptxas=-v)
#   ADI3D_CUDA_DEBUG_SYNC     synchronise and check after every kernel launch
option(ADI3D_CUDA_PTXAS_VERBOSE "Print registers and spills of every kernel" OFF)

function(adi3d_cuda_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  if(ADI3D_CUDA_PTXAS_VERBOSE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>)
  endif()
  if(ADI3D_CUDA_DEBUG_SYNC)
    target_compile_definitions(${target} PRIVATE ADI3D_CUDA_DEBUG_SYNC=1)
  endif()
endfunction()
