# The library's surface (tests/tools/check_abi.py): libllmprof.so exports exactly the names recorded in
# libllmprof/abi/exported-symbols.txt, all llmprof's; at most 30 installed headers; deep_profiler.hpp reaches at
# most 12. `cmake --build --preset dev --target llmprof-exported-symbols` re-records the list after a deliberate change.
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(LLMPROF_NM nm)
if(TARGET llmprof_shared AND Python3_Interpreter_FOUND AND LLMPROF_NM)
  add_test(NAME "abi: libllmprof.so exports the recorded names and the API stays small"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_abi.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:llmprof_shared>)
  set_tests_properties("abi: libllmprof.so exports the recorded names and the API stays small" PROPERTIES LABELS unit)
  add_custom_target(llmprof-exported-symbols
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_abi.py ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:llmprof_shared> --update
    DEPENDS llmprof_shared
    COMMENT "Recording the names libllmprof.so exports in libllmprof/abi/exported-symbols.txt")
endif()
