# The Python oracles (tests/tools/*_expected.py) compute the figures the C++ tests expect with nothing of
# libllmprof. Each runs here and must print exactly its committed expected-values file, the file the C++
# test reads (tests/support/oracle.hpp) or quotes: an oracle that no longer agrees with what the test
# asserts fails here (tests/tools/run_oracle.py shows the diff). Oracles whose file lives beside its fixture
# (timeline, step_kinds, cross_rank_h200) write it there and print it with --stdout. graph_scope_expected.py,
# which reads a run directory, runs inside the "sample: graphs-h100 ..." tests (sample_run.cmake).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  set(oracle_tools ${CMAKE_CURRENT_SOURCE_DIR}/tools)
  set(oracle_data ${CMAKE_CURRENT_SOURCE_DIR}/data)
  # oracle name | expected-values file | extra arguments
  foreach(oracle IN ITEMS analysis gpu_metrics graph_node_pass graph_replays legacy_nsys library_ranges ncu_plan nvtx_ranges
                          rank_sampling restrict_window selection statistics step_units tool_cost verdict_levers zoo_steps)
    add_test(NAME "oracle: ${oracle}_expected.py prints tests/data/oracles/${oracle}.txt"
             COMMAND ${Python3_EXECUTABLE} ${oracle_tools}/run_oracle.py ${oracle_tools}/${oracle}_expected.py
                     ${oracle_data}/oracles/${oracle}.txt)
    set_tests_properties("oracle: ${oracle}_expected.py prints tests/data/oracles/${oracle}.txt" PROPERTIES
                         LABELS unit TIMEOUT 300)
  endforeach()
  add_test(NAME "oracle: timeline_expected.py prints tests/data/nsys-sqlite/expected.tsv"
           COMMAND ${Python3_EXECUTABLE} ${oracle_tools}/run_oracle.py ${oracle_tools}/timeline_expected.py
                   ${oracle_data}/nsys-sqlite/expected.tsv --stdout)
  set_tests_properties("oracle: timeline_expected.py prints tests/data/nsys-sqlite/expected.tsv" PROPERTIES
                       LABELS unit TIMEOUT 300)
  add_test(NAME "oracle: step_kinds_expected.py prints tests/data/serving/expected.tsv"
           COMMAND ${Python3_EXECUTABLE} ${oracle_tools}/run_oracle.py ${oracle_tools}/step_kinds_expected.py
                   ${oracle_data}/serving/expected.tsv --stdout)
  set_tests_properties("oracle: step_kinds_expected.py prints tests/data/serving/expected.tsv" PROPERTIES
                       LABELS unit TIMEOUT 300)
  add_test(NAME "oracle: cross_rank_h200_expected.py prints tests/data/cross-rank/h200x2/expected.json"
           COMMAND ${Python3_EXECUTABLE} ${oracle_tools}/run_oracle.py ${oracle_tools}/cross_rank_h200_expected.py
                   ${oracle_data}/cross-rank/h200x2/expected.json --stdout)
  set_tests_properties("oracle: cross_rank_h200_expected.py prints tests/data/cross-rank/h200x2/expected.json"
                       PROPERTIES LABELS unit TIMEOUT 300)
endif()
