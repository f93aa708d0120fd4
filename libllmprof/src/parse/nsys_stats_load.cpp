// load_nsys_stats: every report of a run's `nsys stats` output that exists (either spelling), with
// nvtx_kern_sum folded while it streams so memory grows with kernels and ranges, not table rows.
#include <string>
#include <system_error>
#include <type_traits>

#include "llmprof/nsys_stats.hpp"
#include "parse/nvtx_kernel_merger.hpp"

namespace llmprof {
namespace {

Result<std::vector<NvtxKernelRow>> parse_merged_nvtx_kernel_summary(const std::filesystem::path& csv_file) {
  detail::NvtxKernelMerger merger;
  auto read = for_each_nsys_nvtx_kernel_row(csv_file, [&merger](NvtxKernelRow&& row) { merger.add(std::move(row)); });
  if (!read) return read.error();
  return merger.take();
}

using ProjectionParser = Result<std::vector<NvtxGpuProjectionRow>> (*)(const std::filesystem::path&);

// The 2025.3 summary parser for nvtx_gpu_proj_sum, the trace parser for 2022.4's nvtxgpuproj.
ProjectionParser projection_parser_for(const std::filesystem::path& file) {
  if (file.filename().string().ends_with("_nvtxgpuproj.csv")) return &parse_nsys_nvtx_gpu_projection_trace;
  return &parse_nsys_nvtx_gpu_projection;
}

// Parses the report file when it exists (either spelling); leaves `slot` nullopt when it does not.
template <typename Row>
Result<void> load_report(const std::filesystem::path& prefix, std::string_view report,
                         Result<std::vector<Row>> (*parse)(const std::filesystem::path&),
                         std::optional<std::vector<Row>>& slot, int& found) {
  const auto located = find_nsys_stats_report(prefix, report);
  if (!located) return {};
  const auto& path = *located;
  std::error_code ec;
  if constexpr (std::is_same_v<Row, NvtxGpuProjectionRow>) parse = projection_parser_for(path);
  // nsys 2025.3 writes a zero-byte file for a report with no rows ("PROCESSED (EMPTY RESULTS)", e.g.
  // cuda_gpu_mem_time_sum for a capture without memcpy): the table exists and is empty. The per-file
  // parsers still reject an empty file, since there it means a tool failed.
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec) {
    slot = std::vector<Row>{};
    ++found;
    return {};
  }
  auto rows = parse(path);
  if (!rows) return rows.error();
  slot = std::move(*rows);
  ++found;
  return {};
}
}  // namespace

Result<NsysStats> load_nsys_stats(const std::filesystem::path& output_prefix) {
  NsysStats stats;
  int found = 0;
  for (auto loaded :
       {load_report(output_prefix, "cuda_gpu_kern_sum", &parse_nsys_kernel_summary, stats.kernels, found),
        load_report(output_prefix, "nvtx_sum", &parse_nsys_nvtx_summary, stats.ranges, found),
        load_report(output_prefix, "nvtx_kern_sum", &parse_merged_nvtx_kernel_summary, stats.range_kernels, found),
        load_report(output_prefix, "nvtx_gpu_proj_sum", &parse_nsys_nvtx_gpu_projection, stats.range_projections,
                    found),
        load_report(output_prefix, "cuda_api_sum", &parse_nsys_cuda_api_summary, stats.cuda_api, found),
        load_report(output_prefix, "cuda_gpu_mem_time_sum", &parse_nsys_gpu_memory_time, stats.memory_operations,
                    found)}) {
    if (!loaded) return loaded.error();
  }
  if (found == 0)
    return make_error(ErrorCode::not_found,
                      "no nsys stats report found under prefix " + output_prefix.string() + " (looked for " +
                          nsys_stats_report_path(output_prefix, "cuda_gpu_kern_sum").filename().string() +
                          " and the other reports)",
                      "run `nsys stats --format csv -o PREFIX --report cuda_gpu_kern_sum,... REPORT.nsys-rep` first",
                      output_prefix.string());
  return stats;
}

std::optional<std::int64_t> count_graph_launches(const NsysStats& stats) {
  if (!stats.cuda_api) return std::nullopt;
  std::int64_t launches = 0;
  for (const auto& row : *stats.cuda_api) {
    // nsys 2025.3 names the runtime call cudaGraphLaunch_v10000 (the H100 fixtures); the driver's is cuGraphLaunch.
    const std::string_view name = row.name;
    if (name.rfind("cudaGraphLaunch", 0) == 0 || name.rfind("cuGraphLaunch", 0) == 0) launches += row.time.count;
  }
  return launches;
}

std::optional<std::int64_t> count_kernel_launches(const NsysStats& stats) {
  if (!stats.kernels) return std::nullopt;
  std::int64_t launches = 0;
  for (const auto& row : *stats.kernels) launches += row.time.count;
  return launches;
}

NsysStats with_kernel_tables_of(NsysStats primary, const NsysStats& node_traced) {
  primary.kernels = node_traced.kernels;
  primary.range_kernels = node_traced.range_kernels;
  return primary;
}

bool has_nsys_stats_csv(const std::filesystem::path& output_prefix) {
  std::error_code error;
  for (const auto& report : nsys_stats_report_names()) {
    const auto file = find_nsys_stats_report(output_prefix, report);  // either spelling (nsys 2022.4 / 2025.3)
    if (file && std::filesystem::is_regular_file(*file, error)) return true;
  }
  return false;
}

Result<NsysStats> load_capture_tables(const std::filesystem::path& output_prefix,
                                      const std::filesystem::path& sqlite_export) {
  std::error_code error;
  if (has_nsys_stats_csv(output_prefix) || !std::filesystem::exists(sqlite_export, error))
    return load_nsys_stats(output_prefix);
  return nsys_stats_from_sqlite(sqlite_export);
}

}  // namespace llmprof
