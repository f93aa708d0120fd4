// Error formatting shared by every Result-returning function.
#include "llmprof/result.hpp"

namespace llmprof {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::not_found:
      return "not_found";
    case ErrorCode::io_error:
      return "io_error";
    case ErrorCode::no_space:
      return "no_space";
    case ErrorCode::parse_error:
      return "parse_error";
    case ErrorCode::process_failed:
      return "process_failed";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::interrupted:
      return "interrupted";
    case ErrorCode::no_report:
      return "no_report";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::already_exists:
      return "already_exists";
  }
  return "unknown";
}

std::string Error::describe() const {
  std::string text = message;
  if (!subject.empty() && message.find(subject) == std::string::npos) text += " (" + subject + ")";
  if (!hint.empty()) text += ". Hint: " + hint;
  return text;
}

Error make_error(ErrorCode code, std::string message, std::string hint, std::string subject) {
  return Error{code, std::move(message), std::move(hint), std::move(subject)};
}

BadResultAccess::BadResultAccess(const Error& error)
    : std::logic_error("llmprof::Result::value() called on an error: " + error.describe()) {}

}  // namespace llmprof
