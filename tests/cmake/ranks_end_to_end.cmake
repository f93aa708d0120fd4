# End-to-end tests under real launchers (tests/e2e/ranks_test.cpp): mpirun. srun, on the single-node
# Slurm of scripts/cluster.sh, is in sweep_end_to_end.cmake (tests/e2e/slurm_test.cpp).
if(TARGET deep-profile)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/ranks_test.cpp LABELS e2e-slow TIMEOUT 240)
endif()
