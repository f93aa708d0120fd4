# Renders a fixture run's report.html in headless Chromium (screenshot + DOM dump) and checks the result
# with tests/tools/check_report_browser.py (Python stdlib only). Skips (prints LLMPROF-SKIPPED) only when Chromium is absent.
find_program(LLMPROF_CHROMIUM NAMES chromium chromium-browser)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(TARGET deep-profile AND Python3_Interpreter_FOUND)
  add_test(NAME "report: HTML renders in headless Chromium"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_report_browser.py
                   --deep-profile $<TARGET_FILE:deep-profile>
                   --run ${CMAKE_CURRENT_SOURCE_DIR}/data/runs/h100-decode-b4
                   --work ${CMAKE_CURRENT_BINARY_DIR}/report_browser
                   --chromium "${LLMPROF_CHROMIUM}")
  set_tests_properties("report: HTML renders in headless Chromium" PROPERTIES SKIP_REGULAR_EXPRESSION LLMPROF-SKIPPED TIMEOUT 240
                       LABELS "e2e;slow")
endif()
