# sampcert_add_certification: certify a sampler plug-in (a CMake target of this project, or a
# path) under ctest. Included by find_package(sampcert).
#
#   sampcert_add_certification(TARGET my_plugin | PLUGIN /path/to/libmy.so
#                              [NAME name] [PROFILE quick|standard|full] [EXPECT file]
#                              [CONFIG string] [JOBS n] [SEED n] [TIMEOUT seconds]
#                              [LABELS labels...])
#
# Adds the ctest test `sampcert.<name>.<profile>`: `sampcert run` of the plug-in with that
# profile, its reports (report.json, report.html, report.junit.xml, row files) kept in
# ${CMAKE_CURRENT_BINARY_DIR}/sampcert/<name>.<profile>. The test passes when the verdict is
# CONFORMANT, or, with EXPECT, when the run matches the expectations file exactly ("NOT
# CONFORMANT: matches its N known failures, no new ones"; a FIX, REGRESSION or DIFFERENCE fails
# it); it fails on any other NOT CONFORMANT, an incomplete run and any error.
include_guard(GLOBAL)

function(sampcert_add_certification)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;PLUGIN;NAME;PROFILE;EXPECT;CONFIG;JOBS;SEED;TIMEOUT"
                        "LABELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sampcert_add_certification: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(arg_TARGET AND arg_PLUGIN)
    message(FATAL_ERROR "sampcert_add_certification: give TARGET or PLUGIN, not both")
  elseif(arg_TARGET)
    if(NOT TARGET ${arg_TARGET})
      message(FATAL_ERROR "sampcert_add_certification: ${arg_TARGET} is not a target")
    endif()
    set(plugin $<TARGET_FILE:${arg_TARGET}>)
    if(NOT arg_NAME)
      set(arg_NAME ${arg_TARGET})
    endif()
  elseif(arg_PLUGIN)
    set(plugin ${arg_PLUGIN})
    if(NOT arg_NAME)
      message(FATAL_ERROR "sampcert_add_certification: PLUGIN needs a NAME")
    endif()
  else()
    message(FATAL_ERROR "sampcert_add_certification: TARGET or PLUGIN is required")
  endif()
  if(NOT arg_PROFILE)
    set(arg_PROFILE standard)
  endif()
  if(NOT arg_JOBS)
    set(arg_JOBS 2)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 1800)
  endif()
  if(NOT TARGET sampcert::sampcert)
    message(FATAL_ERROR "sampcert_add_certification: the sampcert::sampcert tool target is "
                        "missing (find_package(sampcert) defines it)")
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/sampcert/${arg_NAME}.${arg_PROFILE})
  set(command $<TARGET_FILE:sampcert::sampcert> run --sampler ${plugin} --profile ${arg_PROFILE}
              --jobs ${arg_JOBS} --out ${out})
  if(arg_EXPECT)
    get_filename_component(expect ${arg_EXPECT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    # Checked here: a missing file would fail only when ctest runs ("cannot read expectations
    # file"), far from the line that names it.
    if(NOT EXISTS ${expect} OR IS_DIRECTORY ${expect})
      message(FATAL_ERROR
              "sampcert_add_certification: EXPECT file ${expect} does not exist. Write it from a "
              "complete run with `sampcert expectations DIR/report.json -o ${arg_EXPECT}`, or "
              "leave EXPECT out to require a conformant verdict.")
    endif()
    list(APPEND command --expect ${expect})
  endif()
  if(DEFINED arg_CONFIG)
    list(APPEND command --sampler-config ${arg_CONFIG})
  endif()
  if(arg_SEED)
    list(APPEND command --seed ${arg_SEED})
  endif()
  set(test sampcert.${arg_NAME}.${arg_PROFILE})
  add_test(NAME ${test} COMMAND ${command})
  set_tests_properties(${test} PROPERTIES LABELS "sampcert;${arg_LABELS}" TIMEOUT ${arg_TIMEOUT})
endfunction()
