# Builds README.md's CMake snippet as it stands: the block between the markers
# <!-- sampcert-cmake-snippet:begin --> and <!-- sampcert-cmake-snippet:end --> becomes the
# CMakeLists.txt of a scratch sampler project, whose MODULE library's source is a copy of
# PLUGIN_SOURCE. It configures against sampcert (MODE installed: `cmake --install BUILD_DIR`
# into a scratch prefix, found through CMAKE_PREFIX_PATH as the README says; MODE fetchcontent:
# SOURCE_DIR added with FetchContent by fetch_content.cmake, before the snippet's find_package),
# builds the plug-in, checks that ctest lists its certification, and loads it with sampcert.
# DROP_LINE (a regex) removes the snippet's matching lines first, UNCOMMENT (a word) makes its
# commented-out line `# WORD ...` live: the negative tests.
# Arguments: -DMODE -DREADME -DPLUGIN_SOURCE -DWORK_DIR -DGENERATOR -DSAMPCERT_EXE
#            -DBUILD_DIR (installed) -DSOURCE_DIR (fetchcontent) [-DDROP_LINE] [-DUNCOMMENT]
file(REMOVE_RECURSE "${WORK_DIR}")
set(project_dir "${WORK_DIR}/project")
set(build_dir "${WORK_DIR}/build")

# The snippet: exactly one ```cmake block between exactly one pair of markers.
file(READ "${README}" readme)
set(begin_marker "<!-- sampcert-cmake-snippet:begin -->")
set(end_marker "<!-- sampcert-cmake-snippet:end -->")
foreach(marker begin_marker end_marker)
  string(REGEX MATCHALL "${${marker}}" found "${readme}")
  list(LENGTH found count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "readme snippet: ${README} holds ${count} lines ${${marker}} (want 1)")
  endif()
endforeach()
string(FIND "${readme}" "${begin_marker}" begin)
string(FIND "${readme}" "${end_marker}" end)
string(LENGTH "${begin_marker}" begin_length)
math(EXPR begin "${begin} + ${begin_length}")
math(EXPR length "${end} - ${begin}")
if(length LESS 0)
  message(FATAL_ERROR "readme snippet: the end marker comes before the begin marker")
endif()
string(SUBSTRING "${readme}" ${begin} ${length} between)
if(NOT between MATCHES "^\n```cmake\n(.*\n)```\n$")
  message(FATAL_ERROR "readme snippet: the markers must enclose one ```cmake block and nothing "
                      "else; they enclose:\n${between}")
endif()
set(snippet "${CMAKE_MATCH_1}")
if(snippet MATCHES "```")
  message(FATAL_ERROR "readme snippet: the markers enclose more than one fenced block")
endif()
if(DEFINED DROP_LINE)
  string(REGEX REPLACE "[^\n]*${DROP_LINE}[^\n]*\n" "" dropped "${snippet}")
  if(dropped STREQUAL snippet)
    message(FATAL_ERROR "readme snippet: no line matches DROP_LINE '${DROP_LINE}'")
  endif()
  set(snippet "${dropped}")
endif()
if(DEFINED UNCOMMENT)
  string(REGEX REPLACE "#[ ]*(${UNCOMMENT} )" "\\1" live "${snippet}")
  if(live STREQUAL snippet)
    message(FATAL_ERROR "readme snippet: no commented-out '# ${UNCOMMENT} ' line")
  endif()
  set(snippet "${live}")
endif()
file(WRITE "${project_dir}/CMakeLists.txt" "${snippet}")
message(STATUS "readme snippet:\n${snippet}")

# The plug-in the snippet builds: its one MODULE library, whose source file is created here.
if(NOT snippet MATCHES "add_library\\(([A-Za-z0-9_]+) +MODULE +([A-Za-z0-9_./-]+\\.c)\\)")
  message(FATAL_ERROR "readme snippet: no add_library(NAME MODULE SOURCE.c) in the snippet")
endif()
set(plugin_target "${CMAKE_MATCH_1}")
configure_file("${PLUGIN_SOURCE}" "${project_dir}/${CMAKE_MATCH_2}" COPYONLY)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readme snippet: ${what} step failed (${rc}): ${ARGN}")
  endif()
endfunction()

if(MODE STREQUAL "installed")
  set(prefix "${WORK_DIR}/prefix")
  run_step(install ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
  run_step(configure ${CMAKE_COMMAND} -S "${project_dir}" -B "${build_dir}" -G "${GENERATOR}"
           "-DCMAKE_PREFIX_PATH=${prefix}")
  # The package found must be the one just installed, not one elsewhere on the machine.
  file(STRINGS "${build_dir}/CMakeCache.txt" found_dir REGEX "^sampcert_DIR:")
  if(NOT found_dir MATCHES "=${prefix}/")
    message(FATAL_ERROR "readme snippet: found another sampcert package: ${found_dir}")
  endif()
  run_step(build ${CMAKE_COMMAND} --build "${build_dir}")
elseif(MODE STREQUAL "fetchcontent")
  run_step(configure ${CMAKE_COMMAND} -S "${project_dir}" -B "${build_dir}" -G "${GENERATOR}"
           "-DCMAKE_PROJECT_INCLUDE=${CMAKE_CURRENT_LIST_DIR}/fetch_content.cmake"
           "-DSAMPCERT_SOURCE_DIR=${SOURCE_DIR}")
  # The plug-in only: building all would build the whole of sampcert.
  run_step(build ${CMAKE_COMMAND} --build "${build_dir}" --target "${plugin_target}")
else()
  message(FATAL_ERROR "readme snippet: MODE must be installed or fetchcontent, not '${MODE}'")
endif()

# The snippet's certification is registered (sampcert.<target>.<profile>), and the plug-in
# it built loads and declares itself.
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N WORKING_DIRECTORY "${build_dir}"
                OUTPUT_VARIABLE listed)
if(NOT listed MATCHES "sampcert\\.${plugin_target}\\.[a-z]+")
  message(FATAL_ERROR "readme snippet: ctest lists no sampcert.${plugin_target}.*:\n${listed}")
endif()
message(STATUS "readme snippet: ctest lists ${CMAKE_MATCH_0}")
set(module "${build_dir}/lib${plugin_target}.so")  # Linux naming
run_step("sampcert info" "${SAMPCERT_EXE}" info --sampler "${module}")
