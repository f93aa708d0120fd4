# The Python oracle behind tests/unit/stage_limits_test.cpp still prints the expected files that test reads:
# a change to the oracle or to a recorded run must re-write them (and the C++ test then checks them again).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(run h100-1b-decode graphs-h100-cpp-graphs-auto)
    add_test(NAME "oracle: stage_bytes_expected.py still prints analysis/${run}_stage_bytes.tsv"
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/stage_bytes_expected.py
        ${CMAKE_CURRENT_SOURCE_DIR}/data/${run} --check ${CMAKE_CURRENT_SOURCE_DIR}/data/analysis/${run}_stage_bytes.tsv)
    set_tests_properties("oracle: stage_bytes_expected.py still prints analysis/${run}_stage_bytes.tsv"
      PROPERTIES LABELS unit)
  endforeach()
endif()
