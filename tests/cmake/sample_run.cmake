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
