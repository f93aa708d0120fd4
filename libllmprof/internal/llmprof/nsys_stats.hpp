// Typed rows of the `nsys stats --format csv` reports that libllmprof reads.
//
// Columns are found by header name, not position (nsys has reordered them between versions).
// Times are integers in nanoseconds as nsys prints them; averages and medians may be fractional.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

// An NVTX range name split into its domain and name. nsys prints ":prefill" for a range in the
// default domain (domain empty here) and "llm:prefill" for one in domain "llm".
struct NvtxRangeName {
  std::string domain;  // empty for NVTX's default domain
  std::string name;
  bool operator==(const NvtxRangeName&) const = default;
  // ":prefill" / "llm:prefill", the nsys spelling.
  std::string qualified() const;
};

// Splits nsys's "domain:name" spelling at the first ':'; a string without ':' is a default-domain name.
NvtxRangeName parse_nsys_range_name(std::string_view text);

// Statistics columns shared by most nsys summary reports.
struct NsysTimeStatistics {
  double time_percent = 0;  // "Time (%)"; 0 where the report has no such column
  std::int64_t total_time_ns = 0;
  std::int64_t count = 0;  // Instances / Num Calls / Count, depending on the report
  double average_ns = 0;
  double median_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double stddev_ns = 0;
};

// cuda_gpu_kern_sum: one row per kernel name. nsys 2022.4's `gpukernsum` has one row per kernel name
// *and* grid/block shape (extra GridXYZ, BlockXYZ columns); the parser merges those into one row per name:
// total, count, min, max, average and the (sample) standard deviation are exact; the median is that
// of the shape with the most instances (the per-instance durations needed for an exact one are not there).
struct KernelSummaryRow {
  std::string name;  // demangled, or the base name when nsys ran with --base
  NsysTimeStatistics time;
};

// nvtx_sum: one row per range name (and style).
struct NvtxRangeSummaryRow {
  NvtxRangeName range;
  std::string style;        // "PushPop" or "StartEnd"
  NsysTimeStatistics time;  // wall time of the range instances on the CPU timeline
};

// nvtx_kern_sum: kernels grouped by the NVTX range that enclosed their launch.
struct NvtxKernelRow {
  std::optional<NvtxRangeName> range;  // nullopt for kernels launched outside any range
  std::string style;
  std::int64_t process_id = 0;
  std::int64_t thread_id = 0;
  std::int64_t range_instances = 0;   // "NVTX Inst"
  std::int64_t kernel_instances = 0;  // "Kern Inst"
  NsysTimeStatistics time;            // of the kernels (count = kernel_instances)
  std::string kernel_name;
};

// nvtx_gpu_proj_sum: each range projected onto the GPU timeline.
struct NvtxGpuProjectionRow {
  NvtxRangeName range;
  std::string style;
  std::int64_t total_projection_ns = 0;  // "Total Proj Time (ns)"
  std::int64_t total_range_ns = 0;       // "Total Range Time (ns)"
  std::int64_t range_instances = 0;
  std::int64_t total_gpu_operations = 0;
  double average_range_level = 0;  // nesting depth; 0 for outermost ranges
  double average_children = 0;
};

// cuda_api_sum: one row per CUDA API function.
struct CudaApiRow {
  std::string name;
  NsysTimeStatistics time;  // count = Num Calls
};

// cuda_gpu_mem_time_sum: one row per memory operation kind.
struct GpuMemoryTimeRow {
  std::string operation;  // "[CUDA memcpy Host-to-Device]"
  NsysTimeStatistics time;
};

Result<std::vector<KernelSummaryRow>> parse_nsys_kernel_summary(const std::filesystem::path& csv_file);
Result<std::vector<NvtxRangeSummaryRow>> parse_nsys_nvtx_summary(const std::filesystem::path& csv_file);
Result<std::vector<NvtxKernelRow>> parse_nsys_nvtx_kernel_summary(const std::filesystem::path& csv_file);
Result<std::vector<NvtxGpuProjectionRow>> parse_nsys_nvtx_gpu_projection(const std::filesystem::path& csv_file);
Result<std::vector<CudaApiRow>> parse_nsys_cuda_api_summary(const std::filesystem::path& csv_file);
Result<std::vector<GpuMemoryTimeRow>> parse_nsys_gpu_memory_time(const std::filesystem::path& csv_file);

// The same parsers reading from a stream (tests, fuzzers, stdin); `source_name` names the input
// in error messages.
Result<std::vector<KernelSummaryRow>> parse_nsys_kernel_summary(std::istream& in, const std::string& source_name);
Result<std::vector<NvtxRangeSummaryRow>> parse_nsys_nvtx_summary(std::istream& in, const std::string& source_name);
Result<std::vector<NvtxKernelRow>> parse_nsys_nvtx_kernel_summary(std::istream& in, const std::string& source_name);
Result<std::vector<NvtxGpuProjectionRow>> parse_nsys_nvtx_gpu_projection(std::istream& in,
                                                                         const std::string& source_name);
Result<std::vector<CudaApiRow>> parse_nsys_cuda_api_summary(std::istream& in, const std::string& source_name);
Result<std::vector<GpuMemoryTimeRow>> parse_nsys_gpu_memory_time(std::istream& in, const std::string& source_name);

// nvtx_kern_sum row by row, keeping nothing: for tables too large to hold (millions of rows).
Result<void> for_each_nsys_nvtx_kernel_row(const std::filesystem::path& csv_file,
                                           const std::function<void(NvtxKernelRow&&)>& on_row);

// Every report found under an `nsys stats -o PREFIX` prefix (files PREFIX_<report>.csv).
// nvtx_kern_sum is streamed and folded to one row per (range, style, kernel): rows of several
// processes or threads are summed (process_id/thread_id 0 when they differ; median and stddev NaN,
// which a union's summaries cannot give), so memory follows kernels x ranges, not table rows.
// A report whose file is absent is nullopt; a file that exists but does not parse is an Error.
struct NsysStats {
  std::optional<std::vector<KernelSummaryRow>> kernels;                // cuda_gpu_kern_sum
  std::optional<std::vector<NvtxRangeSummaryRow>> ranges;              // nvtx_sum
  std::optional<std::vector<NvtxKernelRow>> range_kernels;             // nvtx_kern_sum
  std::optional<std::vector<NvtxGpuProjectionRow>> range_projections;  // nvtx_gpu_proj_sum
  std::optional<std::vector<CudaApiRow>> cuda_api;                     // cuda_api_sum
  std::optional<std::vector<GpuMemoryTimeRow>> memory_operations;      // cuda_gpu_mem_time_sum
};

// The report names above, in the order `nsys stats --report` should be given them (current spelling).
const std::vector<std::string>& nsys_stats_report_names();

// Each report under both of its spellings. Nsight Systems renamed its stats reports after 2022.4:
// 2022.4 (Debian 12's package) lists `gpukernsum`, `nvtxsum`, `nvtxkernsum`, `nvtxgpuproj`, `cudaapisum`,
// `gpumemtimesum`; 2025.3 lists `cuda_gpu_kern_sum`, `nvtx_sum`, ... Both map to the typed rows above.
struct NsysStatsReportSpelling {
  std::string current;  // 2025.3: "cuda_gpu_kern_sum"
  std::string legacy;   // 2022.4: "gpukernsum"
  std::string what;     // "CUDA GPU kernel summary"
};
const std::vector<NsysStatsReportSpelling>& nsys_stats_report_spellings();

// What to pass to `nsys stats --report` for a tool whose `nsys stats --help-reports` listed `available`:
// each report under the spelling the tool has (current first). Reports it has under neither spelling are
// in `missing` (current spelling); the pipeline refuses to run nsys stats then, naming them.
struct NsysStatsReportChoice {
  std::vector<std::string> names;
  std::vector<std::string> missing;
  bool legacy = false;  // at least one report is asked for by its 2022.4 name
};
NsysStatsReportChoice choose_nsys_stats_reports(const std::vector<std::string>& available);

// PREFIX_<report>.csv for one of nsys_stats_report_names() (the `nsys stats -o PREFIX` naming).
std::filesystem::path nsys_stats_report_path(const std::filesystem::path& output_prefix, std::string_view report);

// The report file under the prefix for one report, under whichever spelling exists (current first);
// nullopt when neither does. `current_name` is one of nsys_stats_report_names().
std::optional<std::filesystem::path> find_nsys_stats_report(const std::filesystem::path& output_prefix,
                                                            std::string_view current_name);

// Error(not_found) when not one report file exists under the prefix (never a silently empty result).
// Reads either spelling of each report (2022.4 and 2025.3 layouts; see the parsers' notes).
Result<NsysStats> load_nsys_stats(const std::filesystem::path& output_prefix);

// The same tables computed from the SQLite export (`nsys export --type sqlite`, Nsight Systems 2022.4 to
// 2025.3), without running `nsys stats`: row for row what load_nsys_stats gives for that tool's CSVs
// (averages, medians, deviations and percentages rounded to 0.1 as nsys prints them; nvtx_kern_sum folded
// the same way). A table is nullopt when the export lacks what its report needs (no CUPTI_ACTIVITY_KIND_KERNEL:
// no kernels nor range_kernels; no NVTX_EVENTS: no range tables; no CUPTI_ACTIVITY_KIND_RUNTIME: no cuda_api,
// range_kernels nor range_projections), as an absent CSV is. Error(not_found) for a missing file,
// Error(parse_error) for one that is not an nsys export or is damaged. Operation names follow the
// exporting version: "[CUDA memcpy DtoD]" from 2022.x, "[CUDA memcpy Device-to-Device]" from later ones.
Result<NsysStats> nsys_stats_from_sqlite(const std::filesystem::path& sqlite_export);

// A capture's tables as the run directory holds them: the `nsys stats` CSVs under `output_prefix` where any
// exists (the user asked for them with nsys.stats_reports, or the run had no SQLite export), else computed from
// `sqlite_export`. Error(not_found) when neither is there.
Result<NsysStats> load_capture_tables(const std::filesystem::path& output_prefix,
                                      const std::filesystem::path& sqlite_export);
// Whether any `nsys stats` CSV exists under the prefix (either spelling).
bool has_nsys_stats_csv(const std::filesystem::path& output_prefix);

// Calls of cudaGraphLaunch / cuGraphLaunch (any _v<N> suffix) in the CUDA API summary; nullopt without one.
std::optional<std::int64_t> count_graph_launches(const NsysStats& stats);

// Kernel executions in cuda_gpu_kern_sum (its instance counts summed); nullopt without the table.
std::optional<std::int64_t> count_kernel_launches(const NsysStats& stats);

// `primary` with the kernel tables (cuda_gpu_kern_sum, nvtx_kern_sum) of `node_traced`, a capture of the same
// workload with --cuda-graph-trace=node: its kernels include those inside CUDA graphs, while the primary
// capture's CPU ranges, API calls and GPU projections are kept (node tracing slows the host side).
NsysStats with_kernel_tables_of(NsysStats primary, const NsysStats& node_traced);

// nsys 2022.4 `nvtxgpuproj` is a per-instance trace (Name, Projected Duration, Orig Duration, NumGPUOps,
// Lvl, NumChild, ...), not the per-range summary of 2025.3's `nvtx_gpu_proj_sum`: its rows are summed
// per (range, style) into the same NvtxGpuProjectionRow.
Result<std::vector<NvtxGpuProjectionRow>> parse_nsys_nvtx_gpu_projection_trace(const std::filesystem::path& csv_file);
Result<std::vector<NvtxGpuProjectionRow>> parse_nsys_nvtx_gpu_projection_trace(std::istream& in,
                                                                               const std::string& source_name);

}  // namespace llmprof
