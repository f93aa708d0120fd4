# The Python oracle behind tests/unit/stage_limits_test.cpp still prints the expected files that test reads:
# a change to the oracle or to a recorded run must re-write them (and the C++ test then checks them again).
# The recorded runs: tests/data/h100-1b-decode, and the CUDA-graph decode read where it is kept,
# examples/graphs-h100/cpp-graphs-auto (the oracle reads only its analysis inputs, those the C++ test copies).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  # expected-file name | recorded run directory
  foreach(pair IN ITEMS "h100-1b-decode|${CMAKE_CURRENT_SOURCE_DIR}/data/h100-1b-decode"
                        "graphs-h100-cpp-graphs-auto|${PROJECT_SOURCE_DIR}/examples/graphs-h100/cpp-graphs-auto")
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 run)
    list(GET pair 1 run_directory)
    add_test(NAME "oracle: stage_bytes_expected.py still prints analysis/${run}_stage_bytes.tsv"
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/stage_bytes_expected.py
        ${run_directory} --check ${CMAKE_CURRENT_SOURCE_DIR}/data/analysis/${run}_stage_bytes.tsv)
    set_tests_properties("oracle: stage_bytes_expected.py still prints analysis/${run}_stage_bytes.tsv"
      PROPERTIES LABELS unit)
  endforeach()
endif()
