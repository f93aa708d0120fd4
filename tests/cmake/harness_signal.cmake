# A harness process that receives SIGINT while its run's workload runs (tests/e2e/harness_signal_test.cpp): the
# example harness (examples/harness/harness.cpp, built here against the library target as its package build does
# against the install) and a bare one that installs no handler at all.
add_executable(llmprof-example-harness ${PROJECT_SOURCE_DIR}/examples/harness/harness.cpp)
target_link_libraries(llmprof-example-harness PRIVATE llmprof::llmprof)
add_executable(llmprof-bare-harness ${CMAKE_CURRENT_SOURCE_DIR}/e2e/bare_harness.cpp)
target_link_libraries(llmprof-bare-harness PRIVATE llmprof::llmprof)
llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/harness_signal_test.cpp LABELS e2e-slow TIMEOUT 120)
target_compile_definitions(test_harness_signal PRIVATE
                           LLMPROF_EXAMPLE_HARNESS="$<TARGET_FILE:llmprof-example-harness>"
                           LLMPROF_BARE_HARNESS="$<TARGET_FILE:llmprof-bare-harness>")
add_dependencies(test_harness_signal llmprof-example-harness llmprof-bare-harness)
