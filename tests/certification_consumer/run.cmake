# Installs sampcert into a scratch prefix, configures and builds the consumer project in this
# folder against it, and runs its ctest: the minimal plug-in's certification and the flawed
# plug-in's pinned one must pass, the flawed plug-in's unpinned one must fail, and each must
# leave its report set. Arguments: -DBUILD_DIR -DSOURCE_DIR -DWORK_DIR -DGENERATOR
# -DMINIMAL_SOURCE -DFLAWED_SOURCE -DEXPECTATIONS
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD_DIR};--prefix;${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-G;${GENERATOR};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix;-DMINIMAL_SOURCE=${MINIMAL_SOURCE};-DFLAWED_SOURCE=${FLAWED_SOURCE};-DEXPECTATIONS=${EXPECTATIONS}"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/build")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer step failed (${rc}): ${step}")
  endif()
endforeach()

# The three tests are listed by the names sampcert_add_certification gives them.
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N WORKING_DIRECTORY ${WORK_DIR}/build
                OUTPUT_VARIABLE listed)
foreach(test sampcert.minimal_plugin.quick sampcert.flawed_plugin.quick
             sampcert.flawed_pinned.quick)
  if(NOT listed MATCHES "${test}")
    message(FATAL_ERROR "the consumer's ctest does not list ${test}:\n${listed}")
  endif()
endforeach()

foreach(case "minimal_plugin;0" "flawed_pinned;0" "flawed_plugin;1")
  list(GET case 0 name)
  list(GET case 1 want_failure)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --output-on-failure -R "^sampcert\\.${name}\\.quick$"
                  WORKING_DIRECTORY ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(want_failure AND rc EQUAL 0)
    message(FATAL_ERROR "sampcert.${name}.quick passed; the flawed plug-in must fail:\n${out}")
  elseif(NOT want_failure AND NOT rc EQUAL 0)
    message(FATAL_ERROR "sampcert.${name}.quick failed (${rc}):\n${out}${err}")
  endif()
  set(report ${WORK_DIR}/build/sampcert/${name}.quick/report.json)
  if(NOT EXISTS ${report})
    message(FATAL_ERROR "sampcert.${name}.quick left no ${report}")
  endif()
  file(READ ${report} text)
  string(JSON conformant GET "${text}" verdict conformant)  # ON / OFF
  message(STATUS "sampcert.${name}.quick: ctest exit ${rc}, conformant ${conformant}")
  if(want_failure AND conformant)
    message(FATAL_ERROR "the flawed plug-in's report says conformant")
  elseif(name STREQUAL "minimal_plugin" AND NOT conformant)
    message(FATAL_ERROR "the minimal plug-in's report says not conformant")
  endif()
endforeach()
