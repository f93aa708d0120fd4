# Registers the package test (the script is tests/package/install_and_build_consumers.cmake): installs the
# library component of this build into a temporary prefix and builds downstream projects against it
# (tests/package/consumer: shared Boost beside the library, the core without CUDA, the workload components;
# examples/harness against the install moved elsewhere, run on a workload under the fake Nsight tools).
if(TARGET llmprof_shared)
  add_test(NAME "package: install and consume with find_package(llmprof)"
    COMMAND ${CMAKE_COMMAND}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DBINARY_DIR=${PROJECT_BINARY_DIR}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_consume
      -DGENERATOR=${CMAKE_GENERATOR}
      # The consumer is built like the library (sanitizer presets link only with the same flags).
      "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}" "-DLINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
      -P ${CMAKE_CURRENT_SOURCE_DIR}/package/install_and_build_consumers.cmake)
  set_tests_properties("package: install and consume with find_package(llmprof)" PROPERTIES TIMEOUT 900
                       LABELS "package;slow")
endif()
