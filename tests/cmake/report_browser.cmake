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

# The verdict card's headline and ranked levers lie in the first 1400x900 viewport, on the recorded 1b eager decode
# (H100) and a recorded serving run (H100): tests/tools/check_verdict_above_fold.py. Re-take docs/images/ with
# `--save docs/images` (see its header).
if(TARGET deep-profile AND Python3_Interpreter_FOUND)
  add_test(NAME "report: the verdict headline and levers are above the fold in headless Chromium"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_verdict_above_fold.py
                   --deep-profile $<TARGET_FILE:deep-profile>
                   --run ${PROJECT_SOURCE_DIR}/examples/ncu-budget-h100/after-1b
                   --run ${PROJECT_SOURCE_DIR}/examples/ncu-budget-h100/serving
                   --work ${CMAKE_CURRENT_BINARY_DIR}/verdict_above_fold
                   --chromium "${LLMPROF_CHROMIUM}")
  set_tests_properties("report: the verdict headline and levers are above the fold in headless Chromium" PROPERTIES
                       SKIP_REGULAR_EXPRESSION LLMPROF-SKIPPED TIMEOUT 240 LABELS "e2e;slow")
endif()
