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
    # GCC 12.2 at -O2 warns on `"literal" + std::string&&` (libstdc++'s inlined insert: "bound between
    # 9223372036854775810 and 18446744073709551615 exceeds maximum object size"), a false positive of that release
    # seen in every optimized build here: noise that would hide a real warning.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-Wno-stringop-overflow>)
    endif()
    if(LLMPROF_WARNINGS_AS_ERRORS AND NOT arg_WARNINGS_ONLY)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
