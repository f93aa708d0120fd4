# The docs stay true (tests/tools/check_docs.py): docs/architecture.md's layer edges are layers.txt's,
# the README's header table lists exactly the public headers, and "Where to find" names existing files.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME "docs: architecture edges, README headers and Where to find match the tree"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_docs.py ${PROJECT_SOURCE_DIR})
  set_tests_properties("docs: architecture edges, README headers and Where to find match the tree" PROPERTIES
                       LABELS unit)
endif()
# The tree is what it says (tests/tools/check_tree.py): nothing at the root but the shape, no empty source
# file, no link out of the repository, under 35 MB with the large fixtures stored as gzip -9n. It reads git's file
# list, so it runs where the source is a checkout.
if(Python3_Interpreter_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  set(tree_test "tree: the root's shape, no empty source file, no link out of the repository, under 35 MB")
  add_test(NAME "${tree_test}"
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_tree.py ${PROJECT_SOURCE_DIR})
  set_tests_properties("${tree_test}" PROPERTIES LABELS unit)
endif()
