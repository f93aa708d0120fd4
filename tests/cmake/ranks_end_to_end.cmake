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
if(TARGET deep-profile AND TARGET llmprof-decode)
  # Its test with the real nsys (the straggler) is serial like the real-tools tests: two nsys sessions at
  # once disturb each other, and a loaded machine blurs the delay it measures.
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/tensor_parallel_properties.cmake)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tensor_parallel_properties.cmake
       "foreach(test IN LISTS test_tensor_parallel_TESTS)\n"
       "  if(test MATCHES \"real nsys\")\n"
       "    set_tests_properties(\"\${test}\" PROPERTIES RUN_SERIAL TRUE)\n"
       "  endif()\n"
       "endforeach()\n")
endif()
