find_package(Python3 COMPONENTS Interpreter QUIET)
# Comments say why without citing an issue or a date (tests/tools/check_comments.py): the tree passes, and a
# fixture with both is refused with each line named.
if(Python3_Interpreter_FOUND)
  add_test(NAME "comments: no issue number or date in libllmprof/ and apps/"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_comments.py ${PROJECT_SOURCE_DIR})
  add_test(NAME "comments: an issue number or a date in a comment is refused"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_comments.py
                   ${CMAKE_CURRENT_SOURCE_DIR}/data/comment-violations)
  set_tests_properties("comments: an issue number or a date in a comment is refused" PROPERTIES
    PASS_REGULAR_EXPRESSION "libllmprof/src/core/noted.cpp:2: cites an issue \\(\"issue 48\"\\).*libllmprof/src/core/noted.cpp:4: a comment cites an issue \\(\"#48\"\\).*libllmprof/src/core/noted.cpp:6: a comment carries a date \\(\"Nov 23, 2026\"\\).*apps/tool/noted.cpp:3: a comment carries a date \\(\"2026-11-23\"\\)")
  set_tests_properties("comments: no issue number or date in libllmprof/ and apps/"
                       "comments: an issue number or a date in a comment is refused" PROPERTIES LABELS unit)
endif()
