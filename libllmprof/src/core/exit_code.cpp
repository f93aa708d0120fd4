// Error -> exit status (see exit_code.hpp).
#include "llmprof/exit_code.hpp"

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

}  // namespace llmprof
