# Script mode (-P): install BINARY_DIR into WORK_DIR/prefix, then configure, build and run
# tests/package/consumer twice (full package; the workload components nvtx and rank only). Any failure stops with the tool's output.
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

# nvtx and rank only: must configure without looking for Boost (checked inside the consumer project),
# and resolve an Open MPI rank as rank-exec would (OMPI_* wins over a stale SLURM_PROCID).
run_step("configure workload consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/package/consumer"
         -B "${WORK_DIR}/workload" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCONSUMER_WORKLOAD_ONLY=ON
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run_step("build workload consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/workload")
run_step("run workload consumer" ${CMAKE_COMMAND} -E env --unset=RANK --unset=WORLD_SIZE --unset=PMIX_RANK
         OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=2 SLURM_PROCID=0
         "${WORK_DIR}/workload/workload_consumer")
if(NOT step_output MATCHES "nvtx enabled=" OR NOT step_output MATCHES "rank 1 of 2, local 1, from mpirun")
  message(FATAL_ERROR "the workload consumer printed an unexpected answer:\n${step_output}")
endif()
message(STATUS "install + consume OK: ${prefix}")
