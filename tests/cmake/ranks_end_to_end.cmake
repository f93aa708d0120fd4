# End-to-end tests under real launchers (tests/e2e/ranks_test.cpp): mpirun, and srun on the
# single-node cluster of scripts/cluster.sh (where it runs).
if(TARGET deep-profile)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/ranks_test.cpp LABELS e2e-slow TIMEOUT 240)
endif()
