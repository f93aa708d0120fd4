# Serving engines with the real nsys 2022.4 (tests/e2e/serving_real_test.cpp) on an engine-shaped CPU loop
# (tests/e2e/engine_loop.cpp, NVTX only). Skipped like real_tools when the tools are absent; serial for the
# same reason (two nsys sessions at once disturb each other).
if(TARGET deep-profile)
  add_executable(llmprof-engine-loop ${CMAKE_CURRENT_SOURCE_DIR}/e2e/engine_loop.cpp)
  target_link_libraries(llmprof-engine-loop PRIVATE llmprof::nvtx)
  llmprof_set_warnings(llmprof-engine-loop)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/serving_real_test.cpp LABELS e2e-slow TIMEOUT 300)
  target_compile_definitions(test_serving_real PRIVATE LLMPROF_ENGINE_LOOP_EXE="$<TARGET_FILE:llmprof-engine-loop>")
  add_dependencies(test_serving_real llmprof-engine-loop)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/serving_real_properties.cmake)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/serving_real_properties.cmake
       "foreach(test IN LISTS test_serving_real_TESTS)\n"
       "  set_tests_properties(\"\${test}\" PROPERTIES SKIP_REGULAR_EXPRESSION \"LLMPROF-SKIPPED\" RUN_SERIAL TRUE)\n"
       "endforeach()\n")
endif()
