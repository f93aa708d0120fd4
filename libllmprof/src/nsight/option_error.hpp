// The error a command builder's validate() returns for an option the tool would reject: invalid_argument, with
// what to write instead. One home for nsys_command.cpp and ncu_command.cpp.
#pragma once

#include <string>
#include <utility>

#include "llmprof/result.hpp"

namespace llmprof::detail {

inline Error invalid_option(std::string message, std::string hint, std::string subject = {}) {
  return make_error(ErrorCode::invalid_argument, std::move(message), std::move(hint), std::move(subject));
}

}  // namespace llmprof::detail
