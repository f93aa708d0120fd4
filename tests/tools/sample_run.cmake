# Script mode: copy the sample run (the source tree stays untouched), re-run the analysis and the
# reports, and check they say what the H100 run found.
file(REMOVE_RECURSE "${WORK_DIR}")
file(COPY "${SAMPLE}/" DESTINATION "${WORK_DIR}")
file(REMOVE "${WORK_DIR}/analysis/report.json" "${WORK_DIR}/report.md" "${WORK_DIR}/report.html")
# No --top/--gated: what the run measured (top 10, gated on decode) comes from its own config.toml.
foreach(step analyze report)
  execute_process(COMMAND "${DEEP_PROFILE}" ${step} "${WORK_DIR}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "deep-profile ${step} failed (${status}):\n${out}\n${err}")
  endif()
endforeach()
file(READ "${WORK_DIR}/report.md" markdown)
# sample: 1319052 ns of kernels in a 4405903 ns stage (nvtx_sum; its projection is 1319052 ns) is 30% busy,
# not 100%; generate encloses the gated capture, so nsys measured none of its figures.
foreach(expected "host/launch-bound: GPU busy 15%" "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT" "NVIDIA H100 80GB HBM3" "the top 10 of stage decode, covering 71% of its kernel time"
                 "| sample (in decode_step) | 4.41 ms | 1.32 ms | 1.32 ms | 30% (stats) | 128 |" "| generate | — | — | — | — | — |")
  string(FIND "${markdown}" "${expected}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "report.md of the sample run lacks '${expected}'")
  endif()
endforeach()
string(FIND "${markdown}" "GPU busy 100%" full)
if(NOT full EQUAL -1)
  message(FATAL_ERROR "report.md of the sample run calls a stage GPU busy 100%")
endif()
file(READ "${WORK_DIR}/report.html" html)
string(FIND "${html}" "<svg" svg)
if(svg EQUAL -1)
  message(FATAL_ERROR "report.html of the sample run has no inline SVG chart")
endif()
