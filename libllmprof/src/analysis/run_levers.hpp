// The levers of one stage of the verdict (llmprof/report_model.hpp's VerdictStage): launch overhead, the HBM and
// compute limits (only the one that binds), the idle between CUDA graph replays and a straggler rank, each with the
// gain it is measured to give or why that gain is withheld, ranked by gain. run_verdict.cpp picks the stages and
// writes the headline from them.
#pragma once

#include <optional>
#include <string>

#include "llmprof/report_model.hpp"

namespace llmprof::detail {

// The stage's step figures and its ranked levers; `main`: the run's main stage, else an engine step kind.
VerdictStage stage_levers(const RunReportModel& model, const ReportStage& stage, bool main);

// "per step", or "per `decode` range" where no step is known.
std::string per_unit(const ReportStage& stage);

// Finite and > 0.
bool positive(const std::optional<double>& value);

}  // namespace llmprof::detail
