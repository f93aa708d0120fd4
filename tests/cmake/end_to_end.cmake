# End-to-end tests of `deep-profile run` (tests/e2e/): the real binary, fake nsys/ncu on PATH, the
# bundled example as the workload where it is built (else a shell workload; that variant is skipped).
if(TARGET deep-profile)
  # Per test case: the daemon case runs deep-profile twice, each with its probe (31-34 s on the loaded 2-core
  # development machine); it took 122 s beside two nice-19 busy loops, so 180 s left no room for two busy loops at
  # full priority beside `ctest -j 2` (scripts/stress-tests.sh).
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/end_to_end_test.cpp LABELS e2e-slow TIMEOUT 480)
  if(TARGET llmprof-decode)
    target_compile_definitions(test_end_to_end PRIVATE LLMPROF_EXAMPLE_EXE="$<TARGET_FILE:llmprof-decode>")
    add_dependencies(test_end_to_end llmprof-decode)
  endif()
endif()
if(TARGET deep-profile)
  # A CUDA-graph decode replayed from the H100 recordings: the node-traced second nsys capture.
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/graph_capture_test.cpp LABELS e2e-slow TIMEOUT 180)
endif()
if(TARGET deep-profile)
  # Serving engines whose front never touches CUDA and blocks on its worker (python3 multiprocessing): each ncu
  # pass ends the whole engine once its plan is met.
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/blocking_front_test.cpp LABELS e2e-slow TIMEOUT 300)
endif()
