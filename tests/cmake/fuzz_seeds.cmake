# Every libFuzzer target (fuzz/*_fuzzer.cpp) built with this compiler and without libFuzzer, linked against the
# library with a driver that feeds it its committed seeds (fuzz/corpus/<name>/ and the fixtures
# fuzz/fixture-seeds.txt names for it, as fuzz/run-fuzzers.sh does): the fuzz preset needs clang and
# no CI job builds it, and an API change once left one target not compiling and another not linking unnoticed.
# Here a target that no longer builds breaks the build, and each seed passes through the target's own invariant
# checks (fuzz/fuzz_support.hpp), which abort on a broken promise.
file(STRINGS ${PROJECT_SOURCE_DIR}/fuzz/fixture-seeds.txt LLMPROF_FUZZ_FIXTURE_SEEDS REGEX "^[a-z_]+ +[^ ]+$")
file(GLOB LLMPROF_FUZZ_TARGET_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/*_fuzzer.cpp)
foreach(source IN LISTS LLMPROF_FUZZ_TARGET_SOURCES)
  get_filename_component(stem ${source} NAME_WE)
  string(REGEX REPLACE "_fuzzer$" "" name ${stem})
  add_executable(fuzz_seeds_${name} ${source} ${CMAKE_CURRENT_SOURCE_DIR}/support/fuzz_seed_driver.cpp)
  target_link_libraries(fuzz_seeds_${name} PRIVATE llmprof::llmprof)
  target_include_directories(fuzz_seeds_${name} PRIVATE ${PROJECT_SOURCE_DIR}/fuzz ${PROJECT_SOURCE_DIR}/libllmprof/src)
  llmprof_set_warnings(fuzz_seeds_${name})
  set(seeds)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
    list(APPEND seeds ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
  endif()
  foreach(line IN LISTS LLMPROF_FUZZ_FIXTURE_SEEDS)
    if(line MATCHES "^${name} +([^ ]+)$")
      list(APPEND seeds ${PROJECT_SOURCE_DIR}/${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(seeds)
    add_test(NAME "fuzz seeds: ${name}: every committed seed passes the target's checks"
             COMMAND fuzz_seeds_${name} ${seeds})
    set_tests_properties("fuzz seeds: ${name}: every committed seed passes the target's checks" PROPERTIES
      LABELS unit TIMEOUT 120)
  endif()
endforeach()
