// Parsers for the `nsys stats --format csv` reports: columns by header name, times as integer ns.
#include "llmprof/nsys_stats.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>

#include "parse/csv_columns.hpp"
#include "llmprof/csv.hpp"

namespace llmprof {
namespace {

using detail::CsvRow;

// The seven statistics columns, in this order, with the report's own name for the count column.
std::vector<std::string> statistics_columns(const std::string& count_column) {
  return {"Total Time (ns)", count_column, "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"};
}

NsysTimeStatistics read_statistics(CsvRow& row, const std::vector<std::size_t>& at) {
  NsysTimeStatistics stats;
  stats.total_time_ns = row.integer(at[0]);
  stats.count = row.integer(at[1]);
  stats.average_ns = row.number(at[2]);
  stats.median_ns = row.number(at[3]);
  stats.min_ns = row.integer(at[4]);
  stats.max_ns = row.integer(at[5]);
  stats.stddev_ns = row.number(at[6]);
  return stats;
}

std::vector<std::string> concat(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Reads every row of a report whose header holds `columns`; `fill(row, indices, out)` converts one
// and `sink(out)` takes it, so that nothing but what the sink keeps stays in memory.
template <typename Row, typename Fill, typename Sink>
Result<void> stream_table(Result<CsvReader> opened, const std::vector<std::string>& columns, Fill fill, Sink&& sink) {
  if (!opened) return opened.error();
  CsvReader& reader = *opened;
  if (auto header = reader.read_header(); !header) return header.error();
  auto indices = detail::require_columns(reader, columns);
  if (!indices) return indices.error();
  const std::size_t width = *std::max_element(indices->begin(), indices->end()) + 1;
  for (;;) {
    auto more = reader.next();
    if (!more) return more.error();
    if (!*more) break;
    CsvRow row(reader);
    if (!row.check_width(width)) return *row.error();
    Row out;
    fill(row, *indices, out);
    if (row.error()) return *row.error();
    sink(std::move(out));
  }
  return {};
}

template <typename Row, typename Fill>
Result<std::vector<Row>> parse_table(Result<CsvReader> opened, const std::vector<std::string>& columns, Fill fill) {
  std::vector<Row> rows;
  auto read = stream_table<Row>(std::move(opened), columns, fill, [&rows](Row&& row) { rows.push_back(std::move(row)); });
  if (!read) return read.error();
  return rows;
}

CsvReaderOptions options_for(const std::vector<std::string>& columns) {
  CsvReaderOptions options;
  options.is_header = detail::csv_header_with_most_of(columns);
  return options;
}

Result<CsvReader> open_reader(const std::filesystem::path& file, const std::vector<std::string>& columns) {
  return CsvReader::open(file, options_for(columns));
}
Result<CsvReader> open_reader(std::istream& in, const std::string& source, const std::vector<std::string>& columns) {
  return CsvReader(in, source, options_for(columns));
}

template <typename Row>
void fill_named_statistics(CsvRow& row, const std::vector<std::size_t>& at, Row& out, std::string Row::*name) {
  // Columns: Time (%), the seven statistics, then the name column.
  out.time = read_statistics(row, {at.begin() + 1, at.begin() + 8});
  out.time.time_percent = row.number(at[0]);
  out.*name = std::string(row.text(at[8]));
}

const std::vector<std::string> kKernelColumns = concat(concat({"Time (%)"}, statistics_columns("Instances")), {"Name"});
const std::vector<std::string> kApiColumns = concat(concat({"Time (%)"}, statistics_columns("Num Calls")), {"Name"});
const std::vector<std::string> kMemoryColumns = concat(concat({"Time (%)"}, statistics_columns("Count")), {"Operation"});
const std::vector<std::string> kNvtxColumns =
    concat(concat({"Time (%)"}, statistics_columns("Instances")), {"Style", "Range"});
const std::vector<std::string> kNvtxKernelColumns = {
    "NVTX Range", "Style", "PID", "TID", "NVTX Inst", "Kern Inst", "Total Time (ns)", "Avg (ns)",
    "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Kernel Name"};
const std::vector<std::string> kProjectionColumns = {
    "Range", "Style", "Total Proj Time (ns)", "Total Range Time (ns)", "Range Instances", "Total GPU Ops",
    "Avg Range Lvl", "Avg Num Child"};

void fill_kernel(CsvRow& row, const std::vector<std::size_t>& at, KernelSummaryRow& out) {
  fill_named_statistics(row, at, out, &KernelSummaryRow::name);
}
void fill_api(CsvRow& row, const std::vector<std::size_t>& at, CudaApiRow& out) {
  fill_named_statistics(row, at, out, &CudaApiRow::name);
}
void fill_memory(CsvRow& row, const std::vector<std::size_t>& at, GpuMemoryTimeRow& out) {
  fill_named_statistics(row, at, out, &GpuMemoryTimeRow::operation);
}
void fill_nvtx(CsvRow& row, const std::vector<std::size_t>& at, NvtxRangeSummaryRow& out) {
  fill_named_statistics(row, at, out, &NvtxRangeSummaryRow::style);
  out.range = parse_nsys_range_name(row.text(at[9]));
}
void fill_nvtx_kernel(CsvRow& row, const std::vector<std::size_t>& at, NvtxKernelRow& out) {
  const auto range = row.text(at[0]);
  if (!range.empty()) out.range = parse_nsys_range_name(range);  // empty: launched outside any range
  out.style = std::string(row.text(at[1]));
  out.process_id = row.integer(at[2]);
  out.thread_id = row.integer(at[3]);
  out.range_instances = row.integer(at[4]);
  out.kernel_instances = row.integer(at[5]);
  out.time = read_statistics(row, {at[6], at[5], at[7], at[8], at[9], at[10], at[11]});
  out.kernel_name = std::string(row.text(at[12]));
}
void fill_projection(CsvRow& row, const std::vector<std::size_t>& at, NvtxGpuProjectionRow& out) {
  out.range = parse_nsys_range_name(row.text(at[0]));
  out.style = std::string(row.text(at[1]));
  out.total_projection_ns = row.integer(at[2]);
  out.total_range_ns = row.integer(at[3]);
  out.range_instances = row.integer(at[4]);
  out.total_gpu_operations = row.integer(at[5]);
  out.average_range_level = row.number(at[6]);
  out.average_children = row.number(at[7]);
}

}  // namespace

std::string NvtxRangeName::qualified() const { return domain + ":" + name; }

NvtxRangeName parse_nsys_range_name(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return {"", std::string(text)};
  return {std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

const std::vector<std::string>& nsys_stats_report_names() {
  static const std::vector<std::string> names = {"cuda_gpu_kern_sum", "nvtx_sum",     "nvtx_kern_sum",
                                                 "nvtx_gpu_proj_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum"};
  return names;
}

#define LLMPROF_NSYS_PARSER(function, Row, columns, fill)                                                \
  Result<std::vector<Row>> function(const std::filesystem::path& csv_file) {                             \
    return parse_table<Row>(open_reader(csv_file, columns), columns, fill);                              \
  }                                                                                                      \
  Result<std::vector<Row>> function(std::istream& in, const std::string& source_name) {                  \
    return parse_table<Row>(open_reader(in, source_name, columns), columns, fill);                       \
  }

Result<void> for_each_nsys_nvtx_kernel_row(const std::filesystem::path& csv_file,
                                           const std::function<void(NvtxKernelRow&&)>& on_row) {
  return stream_table<NvtxKernelRow>(open_reader(csv_file, kNvtxKernelColumns), kNvtxKernelColumns, fill_nvtx_kernel, on_row);
}

LLMPROF_NSYS_PARSER(parse_nsys_kernel_summary, KernelSummaryRow, kKernelColumns, fill_kernel)
LLMPROF_NSYS_PARSER(parse_nsys_nvtx_summary, NvtxRangeSummaryRow, kNvtxColumns, fill_nvtx)
LLMPROF_NSYS_PARSER(parse_nsys_nvtx_kernel_summary, NvtxKernelRow, kNvtxKernelColumns, fill_nvtx_kernel)
LLMPROF_NSYS_PARSER(parse_nsys_nvtx_gpu_projection, NvtxGpuProjectionRow, kProjectionColumns, fill_projection)
LLMPROF_NSYS_PARSER(parse_nsys_cuda_api_summary, CudaApiRow, kApiColumns, fill_api)
LLMPROF_NSYS_PARSER(parse_nsys_gpu_memory_time, GpuMemoryTimeRow, kMemoryColumns, fill_memory)
#undef LLMPROF_NSYS_PARSER

std::filesystem::path nsys_stats_report_path(const std::filesystem::path& output_prefix, std::string_view report) {
  auto path = output_prefix;
  path += "_";
  path += std::string(report);
  path += ".csv";
  return path;
}

namespace {

// Folds nvtx_kern_sum rows that differ only in process and thread into one row per (range, style,
// kernel): what the analysis reads. A capture with many threads or ranks then costs memory per
// kernel and range, not per table row (issue: 5.1 GB for a 200 MB table).
class NvtxKernelMerger {
 public:
  void add(NvtxKernelRow&& row) {
    std::string key = (row.range ? row.range->qualified() : std::string("\x01")) + '\x00' + row.style + '\x00' + row.kernel_name;
    const auto [found, inserted] = index_.try_emplace(std::move(key), rows_.size());
    if (inserted) {
      rows_.push_back(std::move(row));
      return;
    }
    NvtxKernelRow& merged = rows_[found->second];
    if (merged.process_id != row.process_id) merged.process_id = 0;  // 0: several
    if (merged.thread_id != row.thread_id) merged.thread_id = 0;
    merged.range_instances += row.range_instances;
    merged.kernel_instances += row.kernel_instances;
    NsysTimeStatistics& time = merged.time;
    time.total_time_ns += row.time.total_time_ns;
    time.count += row.time.count;
    time.min_ns = std::min(time.min_ns, row.time.min_ns);
    time.max_ns = std::max(time.max_ns, row.time.max_ns);
    time.average_ns = time.count > 0 ? static_cast<double>(time.total_time_ns) / static_cast<double>(time.count) : 0;
    // The median and spread of a union cannot be had from the parts' summaries.
    time.median_ns = std::numeric_limits<double>::quiet_NaN();
    time.stddev_ns = std::numeric_limits<double>::quiet_NaN();
  }
  std::vector<NvtxKernelRow> take() { return std::move(rows_); }

 private:
  std::vector<NvtxKernelRow> rows_;
  std::unordered_map<std::string, std::size_t> index_;
};

Result<std::vector<NvtxKernelRow>> parse_merged_nvtx_kernel_summary(const std::filesystem::path& csv_file) {
  NvtxKernelMerger merger;
  auto read = for_each_nsys_nvtx_kernel_row(csv_file, [&merger](NvtxKernelRow&& row) { merger.add(std::move(row)); });
  if (!read) return read.error();
  return merger.take();
}

// Parses the report file when it exists; leaves `slot` nullopt when it does not.
template <typename Row>
Result<void> load_report(const std::filesystem::path& prefix, std::string_view report,
                         Result<std::vector<Row>> (*parse)(const std::filesystem::path&),
                         std::optional<std::vector<Row>>& slot, int& found) {
  const auto path = nsys_stats_report_path(prefix, report);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
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
  for (auto loaded : {load_report(output_prefix, "cuda_gpu_kern_sum", &parse_nsys_kernel_summary, stats.kernels, found),
                      load_report(output_prefix, "nvtx_sum", &parse_nsys_nvtx_summary, stats.ranges, found),
                      load_report(output_prefix, "nvtx_kern_sum", &parse_merged_nvtx_kernel_summary, stats.range_kernels, found),
                      load_report(output_prefix, "nvtx_gpu_proj_sum", &parse_nsys_nvtx_gpu_projection,
                                  stats.range_projections, found),
                      load_report(output_prefix, "cuda_api_sum", &parse_nsys_cuda_api_summary, stats.cuda_api, found),
                      load_report(output_prefix, "cuda_gpu_mem_time_sum", &parse_nsys_gpu_memory_time,
                                  stats.memory_operations, found)}) {
    if (!loaded) return loaded.error();
  }
  if (found == 0)
    return make_error(ErrorCode::not_found,
                      "no nsys stats report found under prefix " + output_prefix.string() + " (looked for " +
                          nsys_stats_report_path(output_prefix, "cuda_gpu_kern_sum").filename().string() + " and the other reports)",
                      "run `nsys stats --format csv -o PREFIX --report cuda_gpu_kern_sum,... REPORT.nsys-rep` first",
                      output_prefix.string());
  return stats;
}

}  // namespace llmprof
