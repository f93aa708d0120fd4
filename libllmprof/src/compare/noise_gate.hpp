// The repeats-based regression gate (see NoiseGate in llmprof/run_comparison.hpp).
#pragma once

#include "llmprof/report.hpp"
#include "llmprof/run_comparison.hpp"

namespace llmprof::detail {

NoiseGate judge_noise(const RunReportModel& a, const RunReportModel& b, double limit_pct, double level);

}  // namespace llmprof::detail
