# One home per helper (cmake/check_one_home.py): whole-file reads, trimming and percentages each have
# one home in libllmprof/src/core; the tree passes, and a file with a second home of each is refused.
add_test(NAME "lint: each helper has one home (file read, trim, percent)"
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_one_home.py ${PROJECT_SOURCE_DIR})
add_test(NAME "lint: a second home of a helper is refused"
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_one_home.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/one-home-violation)
set_tests_properties("lint: a second home of a helper is refused" PROPERTIES
  PASS_REGULAR_EXPRESSION "check_one_home: 5 second home\\(s\\)")
set_tests_properties("lint: each helper has one home (file read, trim, percent)"
                     "lint: a second home of a helper is refused" PROPERTIES LABELS unit)

# clang-tidy over the library and the app with the repository's .clang-tidy (bugs that compile cleanly;
# WarningsAsErrors), from this build's compile_commands.json: the tree must keep passing it. 372 s in a
# fresh-clone CI on the two-core machine, so it is "slow"; beside two busy loops (scripts/stress-tests.sh) it ran
# past 900 s, so its bound is set for a loaded machine: clang-tidy does not hang, it only gets less CPU.
# Skipped where clang-tidy 14's runner is not installed (scripts/install-deps.sh installs it).
find_program(LLMPROF_RUN_CLANG_TIDY NAMES run-clang-tidy-14 run-clang-tidy)
if(LLMPROF_RUN_CLANG_TIDY AND CMAKE_EXPORT_COMPILE_COMMANDS)
  add_test(NAME "lint: clang-tidy finds nothing in libllmprof/src and apps"
           COMMAND ${LLMPROF_RUN_CLANG_TIDY} -p ${PROJECT_BINARY_DIR} -quiet -j 2 "libllmprof/src/|apps/"
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties("lint: clang-tidy finds nothing in libllmprof/src and apps" PROPERTIES
    LABELS lint-slow TIMEOUT 2700)
else()
  message(STATUS "llmprof: run-clang-tidy not found; the clang-tidy test is not registered")
endif()
