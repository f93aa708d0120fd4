// The exit statuses of deep-profile (README "Exit codes") and the one mapping from an Error to them,
// so that every subcommand, and any tool built on libllmprof, answers the same failure the same way.
#pragma once

#include <span>
#include <string_view>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

enum ExitCode : int {
  exit_ok = 0,             // everything that was asked for succeeded
  exit_incomplete = 1,     // the run finished but a requested stage failed or was skipped
  exit_usage = 2,          // bad command line or configuration (unknown key, wrong type, bad value)
  exit_not_ready = 3,      // the machine is not ready: tool missing, cannot write, no free space
  exit_bad_input = 4,      // an input file, run directory or program is missing or unparsable
  exit_regression = 5,     // compare --fail-if-slower found a regression
  exit_inconclusive = 6,   // compare --fail-if-slower could not compare (a time A measured is missing in B)
  exit_noise = 7,          // compare --fail-if-slower with repeats: the change cannot be told from the noise
  exit_timeout = 124,      // a stage ran past its timeout and was killed (as timeout(1) exits)
  exit_interrupted = 130,  // SIGINT/SIGTERM stopped the work; artifacts and run.json are kept
};

// invalid_argument -> exit_usage; not_found, parse_error -> exit_bad_input; io_error, no_space,
// process_failed, unsupported, already_exists -> exit_not_ready; no_report -> exit_incomplete;
// timeout -> exit_timeout; interrupted -> exit_interrupted.
// A configuration the user named that cannot be loaded is a usage error whatever its code (a
// missing --config file is "bad command line"), so the CLI maps configuration errors to exit_usage
// before they get here.
LLMPROF_API ExitCode exit_code_for(const Error& error) noexcept;

// What a CI gate (compare --fail-if-slower) decided; the compare layer decides it (decide_gate in
// run_comparison.hpp), this is only its exit status, so a harness calling the library exits as the CLI does.
enum class GateOutcome {
  passed,          // compared, no regression (or no gate was asked for)
  regression,      // slower than the limit (beyond the noise, with repeats)
  cannot_compare,  // a time A measured is missing in B, or nothing was measured at all
  inconclusive,    // with repeats: the change cannot be told from the noise
};
LLMPROF_API std::span<const std::string_view> choice_names(GateOutcome) noexcept;  // "passed", "regression", ...
LLMPROF_API const char* to_string(GateOutcome outcome) noexcept;

// passed -> exit_ok; regression -> exit_regression; cannot_compare -> exit_inconclusive;
// inconclusive -> exit_noise.
LLMPROF_API ExitCode exit_code_for(GateOutcome outcome) noexcept;

}  // namespace llmprof
