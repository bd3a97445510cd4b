# Installs sampcert into a scratch prefix, builds examples/minimal_plugin out of tree against
# the installed package (sampcert::abi), then loads it by path with the sampcert tool and draws
# from it.
# Arguments: -DBUILD_DIR -DSOURCE_DIR -DWORK_DIR -DGENERATOR -DSAMPCERT_EXE
file(REMOVE_RECURSE "${WORK_DIR}")
set(so "${WORK_DIR}/build/libminimal_plugin.so")  # Linux naming
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD_DIR};--prefix;${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-G;${GENERATOR};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/build")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "out-of-tree plug-in step failed (${rc}): ${step}")
  endif()
endforeach()
execute_process(COMMAND ${SAMPCERT_EXE} info --sampler ${so} RESULT_VARIABLE rc
                OUTPUT_VARIABLE info ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT info MATCHES "name: +minimal_c")
  message(FATAL_ERROR "sampcert info failed (${rc}): ${info}${err}")
endif()
execute_process(COMMAND ${SAMPCERT_EXE} sample --sampler ${so} --logits 0,5,1,5 -t 0 --draws 5
                RESULT_VARIABLE rc OUTPUT_VARIABLE drawn ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT drawn MATCHES "draws \\(seed 0, row id 0\\): 1 1 1 1 1")
  message(FATAL_ERROR "sampcert sample failed (${rc}): ${drawn}${err}")
endif()
message(STATUS "${info}${drawn}")
