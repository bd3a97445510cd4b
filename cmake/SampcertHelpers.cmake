# Shared build settings for sampcert targets. Everything is per target: no global flags.

# Warnings for every sampcert target; errors only when SAMPCERT_WARNINGS_AS_ERRORS is on (CI).
function(sampcert_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
  # GCC 12's -O3 inlines std::string's replace into a memcpy it then flags as overlapping
  # (-Wrestrict: GCC bug 105651, a false positive fixed in GCC 13), in worker.cc and valijson:
  # the Release build with warnings as errors (tools/gpu_check/bundle.sh) failed on it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(SAMPCERT_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>
                                              $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
  if(SAMPCERT_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=address,undefined -fno-sanitize-recover=all
                                  -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  # The linker (top-level CMakeLists.txt, SAMPCERT_LINK_WITH_LLD); nvcc links stay as they are.
  if(SAMPCERT_LINK_WITH_LLD AND SAMPCERT_HAVE_LLD)
    target_link_options(${target} PRIVATE $<$<LINK_LANGUAGE:CXX,C>:-fuse-ld=lld>)
  endif()
  # Static libraries only (top-level CMakeLists.txt, SAMPCERT_UNITY_BUILD): a test executable
  # or a plug-in is one source file or a few that share nothing worth merging.
  get_target_property(type ${target} TYPE)
  if(SAMPCERT_UNITY_BUILD AND type STREQUAL "STATIC_LIBRARY")
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
  endif()
endfunction()

# GCC 12 at -O1 with ASan flags libstdc++'s own std::regex (the move of _State's std::function
# in _NFA::_M_insert_subexpr_end) as maybe-uninitialized: a false positive (GCC bug 105562).
# Only the sanitizer build of a test that uses std::regex goes without that warning; every
# other target, and the dev build of this one, keep it as an error.
function(sampcert_uses_std_regex target)
  if(SAMPCERT_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endfunction()

# Numerics that must be reproducible: no contraction into FMA, never fast-math. The reference
# and every exact comparison depend on each operation being rounded as written.
function(sampcert_strict_fp target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-ffp-contract=off -fno-fast-math>)
endfunction()

# One helper for every test binary: links GoogleTest (and RapidCheck's adapter) and registers
# each test with ctest through gtest_discover_tests.
function(sampcert_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  sampcert_set_warnings(${name})
  sampcert_strict_fp(${name})
  # Under the sanitizers a test's own sources compile at -O0, in half the time of the preset's
  # -O1 (report_test.cc: 26 s against 54 s); the libraries keep -O1 (header code a test
  # instantiates is compiled at -O0 there).
  if(SAMPCERT_SANITIZE)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${ARG_LABELS}"
                                  ENVIRONMENT "RC_PARAMS=seed=20261129 max_success=200")
endfunction()
