# `deep-profile config` end to end (tests/cli/config_cli_test.sh): resolved TOML, round trip, exit 2 on errors.
if(TARGET deep-profile)
  add_test(NAME "config: deep-profile config command"
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/config_cli_test.sh $<TARGET_FILE:deep-profile>)
  set_tests_properties("config: deep-profile config command" PROPERTIES TIMEOUT 60 LABELS cli
                       ENVIRONMENT "LLMPROF_CONFIG_DIR=${PROJECT_SOURCE_DIR}/config")
endif()
