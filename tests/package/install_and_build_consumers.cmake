# Script mode (-P): install BINARY_DIR into WORK_DIR/prefix, then configure, build and run
# tests/package/consumer twice (full package; nvtx component only). Any failure stops with the tool's output.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${prefix}")
foreach(expected lib/cmake/llmprof/llmprofConfig.cmake lib/cmake/llmprof/llmprofConfigVersion.cmake
                 lib/cmake/llmprof/llmprofTargets.cmake include/llmprof/nvtx.hpp include/llmprof/result.hpp)
  if(NOT EXISTS "${prefix}/${expected}")
    message(FATAL_ERROR "the install is missing ${expected}")
  endif()
endforeach()

# Full package: every public header alone, and a program using the core.
run_step("configure consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/package/consumer" -B "${WORK_DIR}/full"
         -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}"
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run_step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/full")
run_step("run consumer" "${WORK_DIR}/full/consumer")
if(NOT step_output MATCHES "--nvtx-capture=decode" OR NOT step_output MATCHES "1712814")
  message(FATAL_ERROR "the consumer printed an unexpected answer:\n${step_output}")
endif()

# nvtx only: must configure without looking for Boost (checked inside the consumer project).
run_step("configure nvtx-only consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/package/consumer" -B "${WORK_DIR}/nvtx"
         -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCONSUMER_NVTX_ONLY=ON
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run_step("build nvtx-only consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/nvtx")
run_step("run nvtx-only consumer" "${WORK_DIR}/nvtx/nvtx_consumer")
if(NOT step_output MATCHES "nvtx enabled=")
  message(FATAL_ERROR "the nvtx consumer printed an unexpected answer:\n${step_output}")
endif()
message(STATUS "install + consume OK: ${prefix}")
