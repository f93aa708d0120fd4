// Parsers for the `nsys stats --format csv` reports: columns by header name, times as integer ns.
#include "llmprof/nsys_stats.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>

#include "llmprof/csv.hpp"
#include "parse/csv_columns.hpp"

namespace llmprof {
namespace {

using detail::CsvRow;

// The seven statistics columns, in this order, with the report's own name for the count column.
std::vector<std::string> statistics_columns(const std::string& count_column) {
  return {"Total Time (ns)", count_column, "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"};
}

// The plausibility check every statistics row of every table passes before it counts: times and
// counts are never negative, and min <= max. A negative Total Time kept as it was made the kernel
// shares sum to 128%; nsys never prints one, so the row is damaged and the table is refused.
void check_statistics(CsvRow& row, const std::vector<std::size_t>& at, const NsysTimeStatistics& stats) {
  const std::pair<std::size_t, double> never_negative[] = {
      {at[0], static_cast<double>(stats.total_time_ns)}, {at[1], static_cast<double>(stats.count)},
      {at[2], stats.average_ns},                         {at[3], stats.median_ns},
      {at[4], static_cast<double>(stats.min_ns)},        {at[5], static_cast<double>(stats.max_ns)},
      {at[6], stats.stddev_ns}};
  for (const auto& [column, value] : never_negative) {
    if (value < 0) row.refuse(column, "a negative time or count, which nsys never prints (the report is damaged)");
  }
  if (stats.min_ns > stats.max_ns) row.refuse(at[4], "the minimum is above the maximum (the report is damaged)");
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
  if (!row.error()) check_statistics(row, at, stats);
  return stats;
}

// Summary tables have one row per group (kernel name, and grid/block shape in 2022.4; range and
// style; API call; memory operation), so two identical records are one row written twice: kept, the
// duplicate doubled that kernel's share (18% to 31%). The per-instance trace of 2022.4's nvtxgpuproj
// legitimately repeats records and is read without this check.
enum class RecordRepeats { refused, allowed };

// Every field of the current record, joined by a separator that cannot occur in CSV text nsys writes.
std::string record_key(const CsvReader& reader) {
  std::string key;
  for (const auto field : reader.fields()) {
    key += field;
    key += '\x1f';
  }
  return key;
}

std::vector<std::string> concat(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Reads every row of a report whose header holds `columns`; `fill(row, indices, out)` converts one
// and `sink(out)` takes it, so that nothing but what the sink keeps stays in memory.
// A range the stages are named by must have a name: an empty one gave report.json a stage that the
// report then refused, so there was no report at all. Refused here, naming the file and line.
NvtxRangeName named_range(CsvRow& row, std::size_t column) {
  NvtxRangeName range = parse_nsys_range_name(row.text(column));
  if (range.name.empty()) {
    row.refuse(column, "an NVTX range with an empty name; stages are named by their range, so give it a name in "
                       "the workload");
  }
  return range;
}

template <typename Row, typename Fill, typename Sink>
Result<void> stream_table(Result<CsvReader> opened, const std::vector<std::string>& columns, Fill fill, Sink&& sink,
                          RecordRepeats repeats = RecordRepeats::allowed) {
  std::unordered_map<std::string, std::size_t> seen;  // record -> its line, for summary tables
  if (!opened) return opened.error();
  CsvReader& reader = *opened;
  if (auto header = reader.read_header(); !header) return header.error();
  auto indices = detail::require_columns(reader, columns);
  if (!indices) return indices.error();
  const std::size_t width = *std::max_element(indices->begin(), indices->end()) + 1;
  for (;;) {
    auto next = detail::next_row(reader, width);
    if (!next) return next.error();
    if (!*next) break;
    CsvRow& row = **next;
    if (repeats == RecordRepeats::refused) {
      const auto [first, inserted] = seen.try_emplace(record_key(reader), reader.line_number());
      if (!inserted) {
        return reader.error_here("this row repeats line " + std::to_string(first->second) +
                                     " field for field; a summary has one row per group, so the report is damaged",
                                 "run nsys stats again on the .nsys-rep");
      }
    }
    Row out;
    fill(row, *indices, out);
    if (row.error()) return *row.error();
    sink(std::move(out));
  }
  return {};
}

template <typename Row, typename Fill>
Result<std::vector<Row>> parse_table(Result<CsvReader> opened, const std::vector<std::string>& columns, Fill fill,
                                     RecordRepeats repeats = RecordRepeats::refused) {
  std::vector<Row> rows;
  auto read = stream_table<Row>(
      std::move(opened), columns, fill, [&rows](Row&& row) { rows.push_back(std::move(row)); }, repeats);
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
const std::vector<std::string> kMemoryColumns =
    concat(concat({"Time (%)"}, statistics_columns("Count")), {"Operation"});
const std::vector<std::string> kNvtxColumns =
    concat(concat({"Time (%)"}, statistics_columns("Instances")), {"Style", "Range"});
const std::vector<std::string> kNvtxKernelColumns = {
    "NVTX Range", "Style",    "PID",      "TID",      "NVTX Inst",   "Kern Inst",  "Total Time (ns)",
    "Avg (ns)",   "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Kernel Name"};
const std::vector<std::string> kProjectionTraceColumns = {
    "Name", "Projected Duration (ns)", "Orig Duration (ns)", "Style", "NumGPUOps", "Lvl", "NumChild"};
const std::vector<std::string> kProjectionColumns = {
    "Range",           "Style",         "Total Proj Time (ns)", "Total Range Time (ns)",
    "Range Instances", "Total GPU Ops", "Avg Range Lvl",        "Avg Num Child"};

void fill_kernel(CsvRow& row, const std::vector<std::size_t>& at, KernelSummaryRow& out) {
  fill_named_statistics(row, at, out, &KernelSummaryRow::name);
}

// a += b, false when the sum does not fit (damaged input must be an error, not signed overflow).
bool add_checked(std::int64_t& a, std::int64_t b) { return !__builtin_add_overflow(a, b, &a); }

Error sum_too_large(const std::string& source, const std::string& what) {
  return make_error(ErrorCode::parse_error, source + ": the " + what + " summed over rows does not fit in 64 bits",
                    "the report is damaged; run nsys stats again", source);
}

// Folds `more` into `into` (same kernel, another grid/block shape of nsys 2022.4's gpukernsum); false
// when a sum overflows.
bool merge_statistics(NsysTimeStatistics& into, const NsysTimeStatistics& more) {
  const double n1 = static_cast<double>(into.count), n2 = static_cast<double>(more.count);
  const double n = n1 + n2;
  if (n <= 0) return true;  // no instances to merge (never printed by nsys)
  const double mean = (into.average_ns * n1 + more.average_ns * n2) / n;
  // nsys prints the sample standard deviation (n - 1); the squared deviations of both groups around the
  // common mean add up exactly.
  const double squares =
      (n1 - 1) * into.stddev_ns * into.stddev_ns + n1 * (into.average_ns - mean) * (into.average_ns - mean) +
      (n2 - 1) * more.stddev_ns * more.stddev_ns + n2 * (more.average_ns - mean) * (more.average_ns - mean);
  if (more.count > into.count) into.median_ns = more.median_ns;
  into.time_percent += more.time_percent;
  if (!add_checked(into.total_time_ns, more.total_time_ns) || !add_checked(into.count, more.count)) return false;
  into.average_ns = static_cast<double>(into.total_time_ns) / n;
  into.min_ns = std::min(into.min_ns, more.min_ns);
  into.max_ns = std::max(into.max_ns, more.max_ns);
  into.stddev_ns = n > 1 ? std::sqrt(std::max(squares, 0.0) / (n - 1)) : 0.0;
  return true;
}

Result<std::vector<KernelSummaryRow>> merge_kernel_shapes(std::vector<KernelSummaryRow> rows,
                                                          const std::string& source) {
  std::vector<KernelSummaryRow> merged;
  std::map<std::string, std::size_t> index;
  for (auto& row : rows) {
    auto [it, inserted] = index.try_emplace(row.name, merged.size());
    if (inserted) {
      merged.push_back(std::move(row));
    } else if (!merge_statistics(merged[it->second].time, row.time)) {
      return sum_too_large(source, "time or instance count of kernel '" + row.name + "'");
    }
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const auto& a, const auto& b) { return a.time.total_time_ns > b.time.total_time_ns; });
  return merged;
}
void fill_api(CsvRow& row, const std::vector<std::size_t>& at, CudaApiRow& out) {
  fill_named_statistics(row, at, out, &CudaApiRow::name);
}
void fill_memory(CsvRow& row, const std::vector<std::size_t>& at, GpuMemoryTimeRow& out) {
  fill_named_statistics(row, at, out, &GpuMemoryTimeRow::operation);
}
void fill_nvtx(CsvRow& row, const std::vector<std::size_t>& at, NvtxRangeSummaryRow& out) {
  fill_named_statistics(row, at, out, &NvtxRangeSummaryRow::style);
  out.range = named_range(row, at[9]);
}
void fill_nvtx_kernel(CsvRow& row, const std::vector<std::size_t>& at, NvtxKernelRow& out) {
  const auto range = row.text(at[0]);
  if (!range.empty()) out.range = named_range(row, at[0]);  // empty: launched outside any range
  out.style = std::string(row.text(at[1]));
  out.process_id = row.integer(at[2]);
  out.thread_id = row.integer(at[3]);
  out.range_instances = row.integer(at[4]);
  out.kernel_instances = row.integer(at[5]);
  out.time = read_statistics(row, {at[6], at[5], at[7], at[8], at[9], at[10], at[11]});
  out.kernel_name = std::string(row.text(at[12]));
}
// The same plausibility check for the projection tables' integer cells.
std::int64_t non_negative_integer(CsvRow& row, std::size_t column) {
  const std::int64_t value = row.integer(column);
  if (value < 0) row.refuse(column, "a negative time or count, which nsys never prints (the report is damaged)");
  return value;
}

void fill_projection(CsvRow& row, const std::vector<std::size_t>& at, NvtxGpuProjectionRow& out) {
  out.range = named_range(row, at[0]);
  out.style = std::string(row.text(at[1]));
  out.total_projection_ns = non_negative_integer(row, at[2]);
  out.total_range_ns = non_negative_integer(row, at[3]);
  out.range_instances = non_negative_integer(row, at[4]);
  out.total_gpu_operations = non_negative_integer(row, at[5]);
  out.average_range_level = row.number(at[6]);
  out.average_children = row.number(at[7]);
}

// One instance row of 2022.4's nvtxgpuproj trace, before summing per range.
struct ProjectionInstance {
  NvtxGpuProjectionRow row;
  std::int64_t level = 0;
  std::int64_t children = 0;
};
void fill_projection_instance(CsvRow& row, const std::vector<std::size_t>& at, ProjectionInstance& out) {
  out.row.range = named_range(row, at[0]);
  out.row.total_projection_ns = non_negative_integer(row, at[1]);
  out.row.total_range_ns = non_negative_integer(row, at[2]);
  out.row.style = std::string(row.text(at[3]));
  out.row.total_gpu_operations = non_negative_integer(row, at[4]);
  out.level = row.integer(at[5]);
  out.children = row.integer(at[6]);
  out.row.range_instances = 1;
}

Result<std::vector<NvtxGpuProjectionRow>> sum_projection_instances(const std::vector<ProjectionInstance>& instances,
                                                                   const std::string& source) {
  std::vector<NvtxGpuProjectionRow> rows;
  std::vector<std::pair<std::int64_t, std::int64_t>> level_child_sums;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> index;
  for (const auto& instance : instances) {
    const auto key = std::make_tuple(instance.row.range.domain, instance.row.range.name, instance.row.style);
    auto [it, inserted] = index.try_emplace(key, rows.size());
    if (inserted) {
      rows.push_back(instance.row);
      level_child_sums.emplace_back(instance.level, instance.children);
      continue;
    }
    NvtxGpuProjectionRow& into = rows[it->second];
    auto& [levels, children] = level_child_sums[it->second];
    if (!add_checked(into.total_projection_ns, instance.row.total_projection_ns) ||
        !add_checked(into.total_range_ns, instance.row.total_range_ns) ||
        !add_checked(into.total_gpu_operations, instance.row.total_gpu_operations) ||
        !add_checked(into.range_instances, 1) || !add_checked(levels, instance.level) ||
        !add_checked(children, instance.children)) {
      return sum_too_large(source, "times, operations or levels of range '" + instance.row.range.name + "'");
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double n = static_cast<double>(rows[i].range_instances);
    rows[i].average_range_level = static_cast<double>(level_child_sums[i].first) / n;
    rows[i].average_children = static_cast<double>(level_child_sums[i].second) / n;
  }
  return rows;
}

}  // namespace

std::string NvtxRangeName::qualified() const { return domain + ":" + name; }

NvtxRangeName parse_nsys_range_name(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return {"", std::string(text)};
  return {std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

#define LLMPROF_NSYS_PARSER(function, Row, columns, fill)                               \
  Result<std::vector<Row>> function(const std::filesystem::path& csv_file) {            \
    return parse_table<Row>(open_reader(csv_file, columns), columns, fill);             \
  }                                                                                     \
  Result<std::vector<Row>> function(std::istream& in, const std::string& source_name) { \
    return parse_table<Row>(open_reader(in, source_name, columns), columns, fill);      \
  }

Result<void> for_each_nsys_nvtx_kernel_row(const std::filesystem::path& csv_file,
                                           const std::function<void(NvtxKernelRow&&)>& on_row) {
  return stream_table<NvtxKernelRow>(open_reader(csv_file, kNvtxKernelColumns), kNvtxKernelColumns, fill_nvtx_kernel,
                                     on_row);
}

#define LLMPROF_NSYS_MERGING_PARSER(function, Row, columns, fill, Instance, merge, repeats)           \
  Result<std::vector<Row>> function(const std::filesystem::path& csv_file) {                          \
    auto rows = parse_table<Instance>(open_reader(csv_file, columns), columns, fill, repeats);        \
    if (!rows) return rows.error();                                                                   \
    return merge(std::move(*rows), csv_file.string());                                                \
  }                                                                                                   \
  Result<std::vector<Row>> function(std::istream& in, const std::string& source_name) {               \
    auto rows = parse_table<Instance>(open_reader(in, source_name, columns), columns, fill, repeats); \
    if (!rows) return rows.error();                                                                   \
    return merge(std::move(*rows), source_name);                                                      \
  }

LLMPROF_NSYS_MERGING_PARSER(parse_nsys_kernel_summary, KernelSummaryRow, kKernelColumns, fill_kernel, KernelSummaryRow,
                            merge_kernel_shapes, RecordRepeats::refused)
LLMPROF_NSYS_MERGING_PARSER(parse_nsys_nvtx_gpu_projection_trace, NvtxGpuProjectionRow, kProjectionTraceColumns,
                            fill_projection_instance, ProjectionInstance, sum_projection_instances,
                            RecordRepeats::allowed)
#undef LLMPROF_NSYS_MERGING_PARSER

LLMPROF_NSYS_PARSER(parse_nsys_nvtx_summary, NvtxRangeSummaryRow, kNvtxColumns, fill_nvtx)
LLMPROF_NSYS_PARSER(parse_nsys_nvtx_kernel_summary, NvtxKernelRow, kNvtxKernelColumns, fill_nvtx_kernel)
LLMPROF_NSYS_PARSER(parse_nsys_nvtx_gpu_projection, NvtxGpuProjectionRow, kProjectionColumns, fill_projection)
LLMPROF_NSYS_PARSER(parse_nsys_cuda_api_summary, CudaApiRow, kApiColumns, fill_api)
LLMPROF_NSYS_PARSER(parse_nsys_gpu_memory_time, GpuMemoryTimeRow, kMemoryColumns, fill_memory)
#undef LLMPROF_NSYS_PARSER

}  // namespace llmprof
