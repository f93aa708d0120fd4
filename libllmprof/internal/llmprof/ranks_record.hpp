// The per-rank record of a run under a launcher, as analysis/ranks.csv holds it: one column table
// (rundir/ranks_csv.cpp) writes the file and reads it back, so the analysis that fills it
// (llmprof/cross_rank.hpp, llmprof/rank_sampling.hpp) and the report that reads it never disagree on a column.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"
#include "llmprof/sampled_stage.hpp"

namespace llmprof {

// A rank's step range measured from the GPU's sampled counters (llmprof/rank_sampling.hpp).
struct RankSampling {
  std::string stage;               // the step range measured, e.g. "decode_step"
  std::optional<int> source_rank;  // whose capture took the samples
  std::optional<double> clock_shift_ms;  // added to the source's sample times to put them on this rank's clock
  std::int64_t steps = 0;          // step instances inside the source's sampling window (the figures' steps)
  std::int64_t steps_outside = 0;  // instances the window missed (left out of every figure)
  // The step range's figures, as a stage's are measured (measure_sampled_stage), their note saying where the samples
  // came from or why the figures are withheld. ranks.csv holds the samples, the SM and tensor shares' means, MBU and
  // the bytes per step; what it reads back has those alone.
  SampledStage figures;
};

struct RankFigures {
  int rank = 0;
  std::optional<double> stage1_wall_s, nsys_wall_s;
  std::optional<double> kernel_time_s, collective_kernel_time_s;
  std::optional<double> collective_share;  // collective kernel time / kernel time
  // Fraction of the collective kernels' time during which a computation kernel ran too.
  std::optional<double> comm_compute_overlap;
  std::size_t steps = 0;                         // step ranges seen
  std::optional<double> mean_step_start_lag_ms;  // behind the earliest rank's start of each step, after alignment
  // The step range's utilisation from GPU-metrics samples (llmprof/rank_sampling.hpp); unset when nothing
  // sampled in the run.
  std::optional<RankSampling> sampled;
};

// The bounds of ranks.csv's sampled columns (shares of peak in [0, 1], counts and bytes >= 0) applied to a rank's
// figures where they are made: a figure past its bound is withheld (reset), and each returned warning, prefixed with
// `subject`, names it, its value and where it came from.
std::vector<std::string> withhold_impossible_sampled_figures(RankSampling& sampling, const std::string& subject);

// analysis/ranks.csv: one row per rank, the figures' columns (empty where unknown), the step start basis, and the
// sampled columns when some rank was sampled. stage, steps_outside, the note and the sampled shares other than the SM
// and tensor means are not written (ranks.md has the note).
std::string write_ranks_csv(const std::vector<RankFigures>& ranks, const std::string& step_basis);

// What read_ranks_csv gives back: every rank's figures and the step start basis ("GPU", "CPU").
struct RanksCsv {
  std::vector<RankFigures> ranks;
  std::string step_basis;
};
// Reads what write_ranks_csv wrote; Error naming the file, line and column of a cell that does not parse, or the
// column missing from the header. `source_name` (usually the path) prefixes errors.
Result<RanksCsv> read_ranks_csv(std::istream& in, const std::string& source_name);

}  // namespace llmprof
