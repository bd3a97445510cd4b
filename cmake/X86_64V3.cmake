# SAMPCERT_X86_64_V3: build the shipped CPU samplers' plain C++ for x86-64-v3 (AVX2, FMA, F16C,
# BMI2). stable_cpu's kernels need none of it: they pick SSE4, AVX2 or AVX-512 at run time
# (Highway, impls/stable_cpu/vector_kernels.h). OFF (the default) gives a binary that runs on any
# x86-64; AUTO turns it on when the build machine runs such code, ON always (the binaries are
# then for machines of that class only: SIGILL elsewhere).
set(SAMPCERT_X86_64_V3 OFF CACHE STRING "Build CPU samplers for x86-64-v3: AUTO, ON or OFF")
set_property(CACHE SAMPCERT_X86_64_V3 PROPERTY STRINGS AUTO ON OFF)

set(SAMPCERT_USE_X86_64_V3 OFF)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  if(SAMPCERT_X86_64_V3 STREQUAL "ON")
    set(SAMPCERT_USE_X86_64_V3 ON)
  elseif(SAMPCERT_X86_64_V3 STREQUAL "AUTO")
    if(NOT DEFINED SAMPCERT_CPU_HAS_X86_64_V3)
      file(WRITE ${CMAKE_BINARY_DIR}/x86_64_v3_probe.cc [=[
int main() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                 __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2")
             ? 0 : 1;
}
]=])
      try_run(run_rc compile_ok ${CMAKE_BINARY_DIR}/x86_64_v3_probe
              ${CMAKE_BINARY_DIR}/x86_64_v3_probe.cc)
      if(compile_ok AND run_rc EQUAL 0)
        set(SAMPCERT_CPU_HAS_X86_64_V3 ON CACHE INTERNAL "")
      else()
        set(SAMPCERT_CPU_HAS_X86_64_V3 OFF CACHE INTERNAL "")
      endif()
    endif()
    set(SAMPCERT_USE_X86_64_V3 ${SAMPCERT_CPU_HAS_X86_64_V3})
  endif()
endif()
message(STATUS "sampcert: CPU samplers for x86-64-v3: ${SAMPCERT_USE_X86_64_V3}")

# Hot numeric code: -O3 (vectorizes plain loops), and x86-64-v3 where chosen.
function(sampcert_hot_code target)
  # FMA contraction is inside the samplers' error model (SPEC BAND-1); never in the reference.
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O3> -ffp-contract=fast)
  if(SAMPCERT_USE_X86_64_V3)
    target_compile_options(${target} PRIVATE -march=x86-64-v3)
  endif()
endfunction()
