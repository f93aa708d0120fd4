# End-to-end tests under real launchers (tests/e2e/ranks_test.cpp): mpirun. srun, on the single-node
# Slurm of scripts/cluster.sh, is in sweep_end_to_end.cmake (tests/e2e/slurm_test.cpp).
if(TARGET deep-profile)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/ranks_test.cpp LABELS e2e-slow TIMEOUT 240)
endif()
# The bundled example's --tensor-parallel under mpirun (tests/e2e/tensor_parallel_test.cpp): the same
# tokens as one process, its bad input, and deep-profile run --launcher over it.
if(TARGET deep-profile AND TARGET llmprof-decode)
  llmprof_add_catch_test(${CMAKE_CURRENT_SOURCE_DIR}/e2e/tensor_parallel_test.cpp LABELS e2e-slow TIMEOUT 240)
  target_compile_definitions(test_tensor_parallel PRIVATE LLMPROF_EXAMPLE_EXE="$<TARGET_FILE:llmprof-decode>")
  add_dependencies(test_tensor_parallel llmprof-decode)
endif()
