# Script mode: copy a recorded run (the source tree stays untouched), re-render its reports from
# analysis/report.json + run.json alone, and check report.md says what was found on the machine.
# -DDEEP_PROFILE -DRUN -DWORK_DIR -DEXPECTED="a;b;..."
file(REMOVE_RECURSE "${WORK_DIR}")
file(COPY "${RUN}/" DESTINATION "${WORK_DIR}")
file(REMOVE "${WORK_DIR}/report.md" "${WORK_DIR}/report.html")
execute_process(COMMAND "${DEEP_PROFILE}" report "${WORK_DIR}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "deep-profile report failed (${status}):\n${out}\n${err}")
endif()
file(READ "${WORK_DIR}/report.md" markdown)
foreach(expected IN LISTS EXPECTED)
  string(FIND "${markdown}" "${expected}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "report.md re-rendered from ${RUN} lacks '${expected}'")
  endif()
endforeach()
