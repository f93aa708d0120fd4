# The large recorded fixtures (0.7 to 3 MB: nsys SQLite exports, ncu raw CSVs, two recorded runs' report.json) are
# tracked gzip-compressed, as FILE.gz beside where FILE belongs: with gzip -9n the 19 stored so shrink 2.6-4.3x
# (SQLite) and 6.5-11x (CSV, JSON), which keeps the tracked tree under 35 MB (tests/tools/check_tree.py holds it
# there and turns away an uncompressed fixture over 1 MB). Configuring unpacks each one to FILE, which .gitignore
# names, so every reader (the Catch2 tests, the Python oracles, the bench programs, fuzz/fixture-seeds.txt,
# `deep-profile report` on a recorded run) opens the path it always did, byte for byte the file that was recorded;
# nothing reads a fixture compressed.
#
# Adding one: `gzip -9n FILE` (-n leaves out the name and time, so the same file always gives the same bytes),
# `git add FILE.gz`, and name FILE in .gitignore's list; check_tree.py fails until it is there.
# Without a build directory (an oracle run by hand in a fresh clone): cmake -P cmake/fixtures.cmake
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)
endif()

# Unpacks every FILE.gz under tests/data and examples of SOURCE_DIR whose FILE is missing or older.
# A failure stops the configure and names the file: a test that ran on a half-written fixture would fail with a
# misleading figure far from the cause.
function(llmprof_unpack_fixtures source_dir)
  find_program(LLMPROF_GZIP gzip)
  if(NOT LLMPROF_GZIP)
    message(FATAL_ERROR "gzip not found: the compressed test fixtures (*.gz under tests/data and examples) "
                        "cannot be unpacked; install gzip (Debian: apt-get install gzip)")
  endif()
  file(GLOB_RECURSE packed LIST_DIRECTORIES false "${source_dir}/tests/data/*.gz" "${source_dir}/examples/*.gz")
  foreach(gz IN LISTS packed)
    string(REGEX REPLACE "\\.gz$" "" plain "${gz}")
    # The gzip trailer's last 4 bytes are the unpacked size (mod 4 GiB, little-endian): a FILE of another size
    # (truncated, or the empty database Python's sqlite3.connect creates for a path that is missing) is unpacked again.
    file(SIZE "${gz}" packed_size)
    math(EXPR trailer_offset "${packed_size} - 4")
    file(READ "${gz}" trailer OFFSET ${trailer_offset} LIMIT 4 HEX)
    string(REGEX REPLACE "^(..)(..)(..)(..)$" "0x\\4\\3\\2\\1" trailer "${trailer}")
    math(EXPR unpacked_size "${trailer}")
    set(plain_size -1)
    if(EXISTS "${plain}")
      file(SIZE "${plain}" plain_size)
    endif()
    if(NOT plain_size EQUAL unpacked_size OR "${gz}" IS_NEWER_THAN "${plain}")
      # Written beside and renamed: two build directories configuring at once never see half a file.
      string(RANDOM LENGTH 8 suffix)
      execute_process(COMMAND "${LLMPROF_GZIP}" -dc "${gz}" OUTPUT_FILE "${plain}.${suffix}.part"
                      RESULT_VARIABLE status ERROR_VARIABLE error)
      if(NOT status EQUAL 0)
        file(REMOVE "${plain}.${suffix}.part")
        message(FATAL_ERROR "cannot unpack the fixture ${gz}: ${error}Restore it with `git checkout -- ${gz}`.")
      endif()
      file(RENAME "${plain}.${suffix}.part" "${plain}")
    endif()
  endforeach()
  if(NOT CMAKE_SCRIPT_MODE_FILE)
    # A checkout that changes a FILE.gz re-configures, which unpacks it again.
    set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${packed})
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  get_filename_component(llmprof_fixture_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  llmprof_unpack_fixtures("${llmprof_fixture_root}")
endif()
