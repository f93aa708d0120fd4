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
    # GCC 12.2 at -O2 warns inside libstdc++'s std::string for `"literal" + std::string&&`, `insert` and `find`
    # (-Wstringop-overflow "bound between 9223372036854775810 and 18446744073709551615", -Wrestrict "may overlap up to
    # 9223372036854775813 bytes", -Warray-bounds and -Wstringop-overread on the same paths): false positives of that
    # release (every one in libstdc++'s own code), noise in the release build that would hide a real warning.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      set(false_positives -Wno-stringop-overflow -Wno-stringop-overread -Wno-restrict -Wno-array-bounds)
      target_compile_options(${target} PRIVATE "$<$<NOT:$<CONFIG:Debug>>:${false_positives}>")
    endif()
    if(LLMPROF_WARNINGS_AS_ERRORS AND NOT arg_WARNINGS_ONLY)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
