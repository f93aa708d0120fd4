// Error -> exit status (see exit_code.hpp).
#include "llmprof/exit_code.hpp"

#include "llmprof/choice.hpp"

namespace llmprof {

ExitCode exit_code_for(const Error& error) noexcept {
  switch (error.code) {
    case ErrorCode::invalid_argument:
      return exit_usage;
    case ErrorCode::not_found:
    case ErrorCode::parse_error:
      return exit_bad_input;
    case ErrorCode::io_error:
    case ErrorCode::no_space:
    case ErrorCode::process_failed:
    case ErrorCode::unsupported:
    case ErrorCode::already_exists:
      return exit_not_ready;
    case ErrorCode::no_report:
      return exit_incomplete;
    case ErrorCode::timeout:
      return exit_timeout;
    case ErrorCode::interrupted:
      return exit_interrupted;
  }
  return exit_not_ready;
}

std::span<const std::string_view> choice_names(GateOutcome) noexcept {
  static constexpr std::string_view names[] = {"passed", "regression", "cannot compare", "inconclusive"};
  return names;
}

const char* to_string(GateOutcome outcome) noexcept { return choice_name(outcome).data(); }

ExitCode exit_code_for(GateOutcome outcome) noexcept {
  switch (outcome) {
    case GateOutcome::passed:
      return exit_ok;
    case GateOutcome::regression:
      return exit_regression;
    case GateOutcome::cannot_compare:
      return exit_inconclusive;
    case GateOutcome::inconclusive:
      return exit_noise;
  }
  return exit_not_ready;
}

}  // namespace llmprof
