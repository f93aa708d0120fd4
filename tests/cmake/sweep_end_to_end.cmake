# Sweeps run point by point (tests/e2e/sweep_points_test.cpp: --point-index and --merge, no scheduler)
# and through a real single-node Slurm (tests/e2e/slurm_test.cpp: the job array and its merge job,
# srun; each test starts its own cluster with scripts/cluster.sh, or skips with the reason unless
# LLMPROF_REQUIRE_CLUSTER=1). The label "e2e-slurm-slow" is matched by -L e2e, -L slurm and -LE slow.
if(TARGET deep-profile)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/sweep_points_test.cpp LABELS e2e-slow TIMEOUT 180)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/slurm_test.cpp LABELS e2e-slurm-slow TIMEOUT 240)
endif()
