// A public function of the report layer...
#pragma once
#include <string>
#include <string_view>

namespace llmprof {

std::string short_kernel_name(std::string_view name);

}  // namespace llmprof
