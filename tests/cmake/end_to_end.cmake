# End-to-end tests of `deep-profile run` (tests/end_to_end/): the real binary, fake nsys/ncu on PATH,
# the bundled example as the workload where it is built (else a shell workload; that variant is skipped).
if(TARGET deep-profile)
  add_executable(test_end_to_end ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end/end_to_end_test.cpp)
  target_link_libraries(test_end_to_end PRIVATE llmprof::llmprof llmprof_test_main Catch2::Catch2)
  target_include_directories(test_end_to_end PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(test_end_to_end PRIVATE
    LLMPROF_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
    LLMPROF_FAKE_TOOLS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fake_tools"
    LLMPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LLMPROF_BINARY_DIR="${PROJECT_BINARY_DIR}"
    LLMPROF_DEEP_PROFILE_EXE="$<TARGET_FILE:deep-profile>")
  add_dependencies(test_end_to_end deep-profile)
  if(TARGET llmprof-decode)
    target_compile_definitions(test_end_to_end PRIVATE LLMPROF_EXAMPLE_EXE="$<TARGET_FILE:llmprof-decode>")
    add_dependencies(test_end_to_end llmprof-decode)
  endif()
  llmprof_set_warnings(test_end_to_end)
  catch_discover_tests(test_end_to_end TEST_PREFIX "end_to_end: " DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT 180)
endif()
