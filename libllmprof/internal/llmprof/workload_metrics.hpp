// The workload's own account of its work and speed (schema "llmprof.workload_metrics/1").
//
// The example workload writes this file (`--metrics-out FILE` or LLMPROF_METRICS_FILE); the
// pipeline copies it to MAIN/stage1/metrics.json and the analysis uses it for the second MFU
// opinion (model FLOP per token x tokens/s against the device's dense peak).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

inline constexpr std::string_view workload_metrics_schema = "llmprof.workload_metrics/1";

// The figures report.json's bare_run holds (ReportBareRun) are this record's own members, so the analysis writes
// the record it read with bare_run's one field table; the rest is the model's shape and what the file names.
struct WorkloadMetrics : ReportBareRun {
  std::string model;  // "llama-style"
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t intermediate = 0;
  std::int64_t vocab = 0;
  std::int64_t generated_tokens = 0;  // batch * new_tokens
  double decode_flop = 0;             // model FLOP of all decode steps together
  // Optional: the bytes one decode step must move from DRAM for the whole batch (every weight once, plus the
  // KV cache the step reads, mean over the steps); 0 when the workload does not state it. Model MBU and the
  // measured-vs-model comparison use it.
  double model_bytes_per_step = 0;
  std::string nvtx_domain;            // "" = NVTX's default domain
  std::vector<std::string> nvtx_ranges;
  // Optional keys that failed their checks and were left out (their figures are not computed), one sentence
  // each naming the file, the key and what it held: a bad optional key never costs the rest of the file.
  std::vector<std::string> warnings;

  // Model FLOP/s of the decode phase: flop_per_token * generated_tokens / decode_s.
  // 0 when decode_s is 0 (the workload did not decode).
  double decode_model_flop_per_s() const;
  // Model FLOP/s of the prefill phase: flop_per_prefill / prefill_s; 0 when prefill_s is 0.
  double prefill_model_flop_per_s() const;
};

// Reads and validates a metrics file. Errors (parse_error unless the file cannot be read) name the
// file and the key: invalid JSON, a schema other than llmprof.workload_metrics/1, a missing key, a
// value of the wrong type (an integer field holding 2.5 or "4"), a negative count or time.
Result<WorkloadMetrics> load_workload_metrics(const std::filesystem::path& path);
// The same from JSON text; `source_name` names the input in errors.
Result<WorkloadMetrics> parse_workload_metrics(std::string_view json_text, const std::string& source_name);

}  // namespace llmprof
