# The layering check the build runs (cmake/check_layers.py): the real tree passes, and a tree whose
# core includes a report header is refused with the offending line named.
add_test(NAME "layers: the library's includes follow libllmprof/layers.txt"
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_layers.py ${PROJECT_SOURCE_DIR}/libllmprof)
add_test(NAME "layers: a lower layer including a higher one is refused"
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_layers.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/layers-violation)
set_tests_properties("layers: a lower layer including a higher one is refused" PROPERTIES
  PASS_REGULAR_EXPRESSION "src/core/text.cpp:2: layer \"core\" includes \"llmprof/report.hpp\" of layer \"report\"")
set_tests_properties("layers: the library's includes follow libllmprof/layers.txt"
                     "layers: a lower layer including a higher one is refused" PROPERTIES LABELS unit)
# A public function defined in another layer's sources (declared in report.hpp, defined in core) is refused.
add_test(NAME "layers: a public function defined outside its header's layer is refused"
         COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/check_layers.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/layers-misplaced-definition)
set_tests_properties("layers: a public function defined outside its header's layer is refused" PROPERTIES
  LABELS unit PASS_REGULAR_EXPRESSION
  "src/core/format.cpp: defines short_kernel_name\\(\\), declared in report.hpp \\(layer \"report\"\\)")
