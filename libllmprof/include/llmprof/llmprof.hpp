// The harness's one include: what a program that profiles a workload with libllmprof needs. The parsers, the
// timeline engine and the ncu plan stay inside the library (libllmprof/internal/, not installed): the
// installed headers are the API, the rest may change in any release (docs/library.md "What is API").
//
//   #include <llmprof/llmprof.hpp>
//   llmprof::DeepProfiler profiler(config, *runner, clock);   // the whole pipeline
//   auto report = llmprof::load_run_report(summary->main_directory);  // its figures, per stage
//
// docs/library.md walks through a harness (examples/harness/ is the compiled one).
#pragma once

#include "llmprof/version.hpp"

#include "llmprof/clock.hpp"          // SystemClock, ManualClock
#include "llmprof/config.hpp"         // DeepProfileConfig, load_config, validate_config
#include "llmprof/deep_profiler.hpp"  // DeepProfiler, RunSummary, RunOutcome, ProgressEvent
#include "llmprof/exit_code.hpp"      // exit_code_for(Error): the documented exit statuses
#include "llmprof/logging.hpp"        // set_log_sink: the library's lines into the harness's logger
#include "llmprof/ncu_command.hpp"    // NcuCommand
#include "llmprof/nsys_command.hpp"   // NsysCommand
#include "llmprof/process.hpp"        // ProcessRunner, make_system_process_runner
#include "llmprof/report.hpp"         // load_run_report: a run directory's figures (RunReportModel)
#include "llmprof/result.hpp"         // Result<T>, Error
#include "llmprof/stop_signal_watcher.hpp"  // StopSignalWatcher: Ctrl-C / SIGTERM -> DeepProfiler::request_stop
#include "llmprof/tool_cost.hpp"      // tool_cost_of: what profiling cost, in multiples of the bare run
#include "llmprof/tool_probe.hpp"     // probe_nsys, probe_ncu, detect_nvidia_driver, assess_readiness
