# End-to-end tests with the real Nsight tools (tests/e2e/real_tools_test.cpp): Debian 12's nsys/ncu
# unpacked by scripts/install-nsight.sh. A test whose tools are absent prints LLMPROF-SKIPPED and ctest
# reports it as skipped; scripts/test.sh sets LLMPROF_REQUIRE_REAL_TOOLS=1 so that CI fails instead.
if(TARGET deep-profile)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/real_tools_test.cpp LABELS e2e-slow TIMEOUT 300)
  if(TARGET llmprof-decode)
    target_compile_definitions(test_real_tools PRIVATE LLMPROF_EXAMPLE_EXE="$<TARGET_FILE:llmprof-decode>")
    add_dependencies(test_real_tools llmprof-decode)
  endif()
  # Serial because two nsys sessions at once disturb each other
  # (seen under ctest -j2).
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/real_tools_properties.cmake)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/real_tools_properties.cmake
       "foreach(test IN LISTS test_real_tools_TESTS)\n"
       "  set_tests_properties(\"\${test}\" PROPERTIES RUN_SERIAL TRUE)\n"
       "endforeach()\n")
endif()
# The shipped ncu section (config/ncu-sections) as Debian's real ncu 2022.3 reads it: listed without a parse error,
# its metrics exactly the file's (tests/tools/check_ncu_section.py; skipped without that ncu).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME "real ncu lists config/ncu-sections/LlmprofRoofline.section and its metrics"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_ncu_section.py ${PROJECT_SOURCE_DIR})
  set_tests_properties("real ncu lists config/ncu-sections/LlmprofRoofline.section and its metrics" PROPERTIES
                       LABELS unit TIMEOUT 120 SKIP_REGULAR_EXPRESSION "LLMPROF-SKIPPED")
endif()
