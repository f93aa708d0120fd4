# Warning flags for targets built in this tree (never exported to consumers).
# LLMPROF_WARNINGS_AS_ERRORS adds -Werror to this tree's own code: CI's one build both runs the tests and fails on a
# new warning (a second, -Werror build of the whole tree took a full rebuild on CI's 2 cores: ccache keys on the
# flags). WARNINGS_ONLY keeps a target's warnings without -Werror: the LibTorch example, whose included headers
# are not ours to fix.
function(llmprof_set_warnings target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "WARNINGS_ONLY" "" "")
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                             -Wno-missing-field-initializers)
    if(LLMPROF_WARNINGS_AS_ERRORS AND NOT arg_WARNINGS_ONLY)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
