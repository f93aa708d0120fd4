# Hostile command lines against the real deep-profile (tests/tools/hardening_cli_test.sh), one
# ctest entry per case: nothing lost, no unmeasured figure, a truthful exit code. A case whose
# precondition is missing prints LLMPROF-SKIPPED (the tests' one skip marker, tests/support/skip.hpp).
if(TARGET deep-profile)
  foreach(case IN ITEMS retention utf8 disk_full positional_words huge_timeout sweep_plan)
    add_test(NAME "hardening: ${case}"
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/hardening_cli_test.sh $<TARGET_FILE:deep-profile> ${case})
    set_tests_properties("hardening: ${case}" PROPERTIES TIMEOUT 120 SKIP_REGULAR_EXPRESSION LLMPROF-SKIPPED
                         ENVIRONMENT "LLMPROF_CONFIG_DIR=${PROJECT_SOURCE_DIR}/config")
  endforeach()
endif()
