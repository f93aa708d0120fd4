# Script mode (-P): install the library component of BINARY_DIR into a temporary prefix, as a harness author
# would, and build downstream projects against it:
#   1. the library component alone (no deep-profile, no example), nothing in it naming the build or the prefix
#   2. a consumer using shared Boost.Log and Boost.JSON itself (tests/package/consumer), every header alone
#   3. the core alone with find_package(CUDAToolkit) disabled (a machine without a CUDA toolkit)
#   4. the nvtx and rank components alone (no Boost, C++17)
#   5. the install moved to another prefix, then examples/harness built against it and run on a workload
#      under the fake Nsight tools: the pipeline through DeepProfiler, the figures through the report model
# Any failure stops with the tool's output.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(moved "${WORK_DIR}/moved/elsewhere")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
  set(step_error "${err}" PARENT_SCOPE)
endfunction()

function(configure_and_build what source build)
  run_step("configure ${what}" ${CMAKE_COMMAND} -S "${source}" -B "${build}" -G "${GENERATOR}"
           "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" ${ARGN})
  set(configure_output "${step_output}" PARENT_SCOPE)
  run_step("build ${what}" ${CMAKE_COMMAND} --build "${build}")
endfunction()

# 1. The library component: the command docs/library.md gives.
run_step("cmake --install --component library" ${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${prefix}"
         --component library)
foreach(expected lib/cmake/llmprof/llmprofConfig.cmake lib/cmake/llmprof/llmprofConfigVersion.cmake
                 lib/cmake/llmprof/llmprofTargets.cmake lib/libllmprof.so include/llmprof/llmprof.hpp
                 include/llmprof/version.hpp include/llmprof/nvtx.hpp include/llmprof/result.hpp
                 include/llmprof/export.hpp share/llmprof/config/deep-profile.toml
                 share/llmprof/config/ncu-sections/LlmprofRoofline.section)
  if(NOT EXISTS "${prefix}/${expected}")
    message(FATAL_ERROR "the library component is missing ${expected}")
  endif()
endforeach()
# The internal headers (parsers, planner, tool listings) are not the API: none is installed.
foreach(unexpected bin/deep-profile bin/llmprof-decode lib/libllmprof.a include/llmprof/csv.hpp
                   include/llmprof/ncu_plan.hpp include/llmprof/timeline.hpp)
  if(EXISTS "${prefix}/${unexpected}")
    message(FATAL_ERROR "the library component installed ${unexpected}, which is not the library's")
  endif()
endforeach()
# Relocatable: no installed CMake file names the build tree, the source tree or the prefix itself.
file(GLOB package_files "${prefix}/lib/cmake/llmprof/*.cmake")
foreach(file IN LISTS package_files)
  file(READ "${file}" text)
  foreach(absolute "${prefix}" "${BINARY_DIR}" "${SOURCE_DIR}" "/usr/lib" "/usr/include")
    string(FIND "${text}" "${absolute}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names ${absolute}: the install could not be moved")
    endif()
  endforeach()
endforeach()

# 2. Shared Boost beside the library, every header alone, no leaked variable (checked inside the project).
configure_and_build("consumer" "${SOURCE_DIR}/tests/package/consumer" "${WORK_DIR}/full" "-DCMAKE_PREFIX_PATH=${prefix}")
run_step("run consumer" "${WORK_DIR}/full/consumer")
foreach(expected "--nvtx-capture=decode" "/opt/nvidia/nsight-systems/bin/nsys profile" "ranks 0,4,5,6" "own Boost.JSON"
                 "sink: harness: routed through the sink")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the consumer printed an unexpected answer (no '${expected}'):\n${step_output}")
  endif()
endforeach()

# 3. The core where there is no CUDA toolkit.
configure_and_build("core consumer without CUDA" "${SOURCE_DIR}/tests/package/consumer" "${WORK_DIR}/core"
                    "-DCMAKE_PREFIX_PATH=${prefix}" -DCONSUMER_CORE_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE)
file(READ "${prefix}/lib/cmake/llmprof/llmprofConfig.cmake" config_text)
string(FIND "${config_text}" "if(ON AND NOT TARGET CUDA::nvtx3)" nvtx_needs_cuda)
if(NOT nvtx_needs_cuda EQUAL -1 AND NOT configure_output MATCHES "nvtx without CUDA: found=FALSE message=llmprof's nvtx component needs the CUDA toolkit")
  message(FATAL_ERROR "asking for nvtx without a CUDA toolkit was not refused with its reason:\n${configure_output}")
endif()
run_step("run core consumer" "${WORK_DIR}/core/core_consumer")
if(NOT step_output MATCHES "rejected: .*run.top_n_kernels")
  message(FATAL_ERROR "the core consumer printed an unexpected answer:\n${step_output}")
endif()

# 4. nvtx and rank only: must configure without looking for Boost (checked inside the consumer project),
# and resolve an Open MPI rank as rank-exec would (OMPI_* wins over a stale SLURM_PROCID).
configure_and_build("workload consumer" "${SOURCE_DIR}/tests/package/consumer" "${WORK_DIR}/workload"
                    "-DCMAKE_PREFIX_PATH=${prefix}" -DCONSUMER_WORKLOAD_ONLY=ON)
run_step("run workload consumer" ${CMAKE_COMMAND} -E env --unset=RANK --unset=WORLD_SIZE --unset=PMIX_RANK
         OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=2 SLURM_PROCID=0
         "${WORK_DIR}/workload/workload_consumer")
if(NOT step_output MATCHES "nvtx enabled=" OR NOT step_output MATCHES "rank 1 of 2, local 1, from mpirun")
  message(FATAL_ERROR "the workload consumer printed an unexpected answer:\n${step_output}")
endif()

# 5. Move the install, build the harness example against the new place, and run the pipeline with it.
get_filename_component(moved_parent "${moved}" DIRECTORY)
file(MAKE_DIRECTORY "${moved_parent}")
file(RENAME "${prefix}" "${moved}")
configure_and_build("examples/harness" "${SOURCE_DIR}/examples/harness" "${WORK_DIR}/harness"
                    "-DCMAKE_PREFIX_PATH=${moved}")
set(harness_runs "${WORK_DIR}/harness-run")
file(MAKE_DIRECTORY "${harness_runs}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env "PATH=${SOURCE_DIR}/tests/fake_tools:$ENV{PATH}"
          "${WORK_DIR}/harness/llmprof-harness" -- "${SOURCE_DIR}/tests/e2e/workload.sh"
  WORKING_DIRECTORY "${harness_runs}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the harness exited ${status}:\n${out}\n${err}")
endif()
foreach(expected "readiness: " "nsys command: ${SOURCE_DIR}/tests/fake_tools/nsys profile" "stage ncu: ok"
                 "outcome: ok" "stage | GPU busy | MFU | MBU" "\ndecode | ")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the harness's output lacks '${expected}':\n${out}\n${err}")
  endif()
endforeach()
# The library said nothing on stderr by itself, only through the harness's sink ("[llmprof warning] ..."): no
# console line ("warning: ...", the CLI's format) and no line of Boost.Log's default sink ("] [info]").
if(err MATCHES "(^|\n)(warning|error|info): " OR err MATCHES "\\] \\[(info|warning|error)\\]")
  message(FATAL_ERROR "the library wrote to stderr outside the harness's sink:\n${err}")
endif()
file(GLOB run_directories "${harness_runs}/harness-runs/*/run.json")
list(LENGTH run_directories run_count)
get_filename_component(run_directory "${run_directories}" DIRECTORY)
if(NOT run_count EQUAL 1 OR NOT EXISTS "${run_directory}/analysis/report.json")
  message(FATAL_ERROR "the harness left no complete run directory under ${harness_runs}/harness-runs")
endif()
message(STATUS "install + consume OK: ${moved}\n${out}")
