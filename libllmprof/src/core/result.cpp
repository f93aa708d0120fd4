// Error formatting shared by every Result-returning function.
#include "llmprof/result.hpp"

#include "llmprof/choice.hpp"

namespace llmprof {

// ErrorCode's one spelling table (choice.hpp). It lives here, not beside the enum, so that result.hpp,
// which every file of the library includes, stays free of choice.hpp.
std::span<const std::string_view> choice_names(ErrorCode) noexcept {
  static constexpr std::string_view names[] = {"invalid_argument", "not_found",      "io_error",    "no_space",
                                               "parse_error",      "process_failed", "timeout",     "interrupted",
                                               "no_report",        "unsupported",    "already_exists"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(ErrorCode code) noexcept { return choice_name(code).data(); }

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
