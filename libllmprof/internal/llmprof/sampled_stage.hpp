// What the GPU's sampled counters measured over a stage's instances or a rank's steps: one record, made by one
// function (measure_sampled_stage, llmprof/sampled_utilisation.hpp), that fills a report stage's sampled_* fields
// (llmprof/report_model.hpp) and a rank's sampled figures in analysis/ranks.csv (llmprof/ranks_record.hpp) alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "llmprof/report_model.hpp"

namespace llmprof {

struct SampledStage {
  std::int64_t samples = 0;  // samples whose period's middle fell in the instances' merged windows
  // Shares of each metric's peak, 0..1: mean and nearest-rank percentiles (ReportStage::sampled_sm_active, ...).
  SampledFigure sm_active, tensor_active, dram_read, dram_write;
  // (read + write share) x peak DRAM bandwidth x sample period, summed, over the steps of the instances kept.
  std::optional<double> dram_bytes_per_step;
  std::optional<double> mbu;  // the mean read + write share
  // How many samples at what rate over which windows, instances left out, sampled values left out and where the
  // samples came from; or why the figures are withheld.
  std::string note;
};

}  // namespace llmprof
