# The README's promise: the recorded H100 sample run re-analyses and re-renders on a machine without a GPU.
if(TARGET deep-profile)
  add_test(NAME "sample: deep-profile analyze + report on examples/sample-run-h100"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile>
      -DSAMPLE=${PROJECT_SOURCE_DIR}/examples/sample-run-h100 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/sample_run
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/sample_run.cmake)
endif()
if(TARGET deep-profile)
  set_tests_properties("sample: deep-profile analyze + report on examples/sample-run-h100" PROPERTIES LABELS cli)
endif()

# The recorded H100 CUDA-graph runs (examples/graphs-h100) re-render with the timeline's verdicts.
if(TARGET deep-profile)
  set(graphs_h100 ${PROJECT_SOURCE_DIR}/examples/graphs-h100)
  # The capture-scope sentences' figures, computed by Python from the same report.json.
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(graph_scope_oracle "")
  if(Python3_Interpreter_FOUND)
    set(graph_scope_oracle ${CMAKE_CURRENT_SOURCE_DIR}/tools/graph_scope_expected.py)
  endif()
  add_test(NAME "sample: graphs-h100 C++ decode as CUDA graphs is not called host-bound"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${graphs_h100}/cpp-graphs
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/graphs_cpp -DPYTHON=${Python3_EXECUTABLE} -DORACLE=${graph_scope_oracle}
      "-DEXPECTED=runs as CUDA graphs: GPU busy 99% of the stage|99% (timeline)|0 + 128 graph executions"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  add_test(NAME "sample: graphs-h100 Python graph decode reports its capture loss"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${graphs_h100}/py-graph
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/graphs_py -DPYTHON=${Python3_EXECUTABLE} -DORACLE=${graph_scope_oracle}
      "-DEXPECTED=50 of 64 graph launches inside `decode` have no GPU record|GPU busy not computed"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  add_test(NAME "sample: graphs-h100 eager decode is launch-bound with its headroom"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${graphs_h100}/cpp-eager
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/graphs_eager
      "-DEXPECTED=host/launch-bound: GPU busy 11% of the stage|2.43 ms per instance instead of 22.2 ms|17% (timeline)"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  add_test(NAME "sample: graphs-h100 node-traced capture says its kernel table lists the graph kernels"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${graphs_h100}/cpp-graphs-node
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/graphs_node -DPYTHON=${Python3_EXECUTABLE} -DORACLE=${graph_scope_oracle}
      "-DEXPECTED=Kernel figures come from a node-traced capture (--cuda-graph-trace=node)"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  # Default settings: the node-traced second capture was taken by itself. The figures were checked with Python's
  # csv module against the run's own tables: decode's kernels in nsys/node/summary_nvtx_kern_sum.csv sum to
  # 283,151,057 ns; decode's CPU time is 321,010,498 ns (nsys/) and 334,394,743 ns (nsys/node/).
  add_test(NAME "sample: graphs-h100 default run takes its kernel figures from the node-traced capture"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${graphs_h100}/cpp-graphs-auto
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/graphs_auto
      "-DEXPECTED=come from a second capture traced per CUDA graph node|lists 283 ms of kernel time against the 319 ms|`decode` took 334 ms of CPU time instead of 321 ms|runs as CUDA graphs: GPU busy 99% of the stage|`nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT`"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  set_tests_properties("sample: graphs-h100 C++ decode as CUDA graphs is not called host-bound"
    "sample: graphs-h100 default run takes its kernel figures from the node-traced capture"
    "sample: graphs-h100 node-traced capture says its kernel table lists the graph kernels"
    "sample: graphs-h100 Python graph decode reports its capture loss"
    "sample: graphs-h100 eager decode is launch-bound with its headroom" PROPERTIES LABELS cli)
endif()

# The recorded two-H200 tensor-parallel run (examples/tp-run-h200x2): its per-instance chart shows the
# decode steps, not the 4,096 all_reduce ranges, and the cross-rank section it recorded re-renders.
if(TARGET deep-profile)
  add_test(NAME "sample: tp-run-h200x2 charts its decode steps and keeps its cross-rank section"
    COMMAND ${CMAKE_COMMAND} -DDEEP_PROFILE=$<TARGET_FILE:deep-profile> -DRUN=${PROJECT_SOURCE_DIR}/examples/tp-run-h200x2
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/tp_run_h200x2
      "-DEXPECTED=## Across ranks|**No straggler**: the latest rank, rank 0|waiting on collectives"
      "-DEXPECTED_HTML=Per instance of <code>decode_step</code>|Instance time histogram of <code>decode_step</code>"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/recorded_report.cmake)
  set_tests_properties("sample: tp-run-h200x2 charts its decode steps and keeps its cross-rank section" PROPERTIES
    LABELS cli)
endif()
