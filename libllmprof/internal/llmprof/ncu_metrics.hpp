// Nsight Compute CSV exports parsed into one record per profiled kernel launch.
//
// Two layouts exist: the wide `--page raw --csv` layout (a column per metric, a units row under the
// header) and the long layout (`--csv` or `--page details --csv`: one row per metric with
// "Section Name, Metric Name, Metric Unit, Metric Value"). Both give the same NcuKernelLaunch.
// Every value is normalised to base units (ns, byte, byte/second, FLOP/inst counts, Hz; percentages
// stay in percent) whatever unit ncu printed, so `--print-units base` and the default agree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/nsys_stats.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// A value converted to its base unit.
struct NormalizedValue {
  double value = 0;
  std::string unit;  // the base unit: "ns", "byte", "byte/second", "hz", "%", "inst", "cycle", ...
};

// Converts `value` printed with `unit` ("us", "Kbyte", "Tbyte/s", "Ghz", "%", "" ...) to the base
// unit. An unknown unit is kept as printed (value unchanged); never guessed.
NormalizedValue normalize_to_base_unit(double value, std::string_view unit);

struct NcuKernelLaunch {
  std::int64_t id = 0;  // ncu's launch index within the report ("ID")
  std::int64_t process_id = 0;
  std::string process_name;
  std::string kernel_name;  // as ncu printed it (demangled unless --print-kernel-base was used)
  // NVTX push/pop ranges that enclosed the launch, outermost first, from the
  // "thread Domain:Push/Pop_Range:..." column.
  std::vector<NvtxRangeName> nvtx_stack;
  std::string block_size;  // "(128, 1, 1)"
  std::string grid_size;
  std::int64_t device = 0;
  std::string compute_capability;  // "9.0"
  // Metric name -> value in base units. In the raw layout the name is the metric identifier
  // ("gpu__time_duration.sum"); in the long layout both the "Metric Name" as printed and, where it
  // is an identifier, that identifier.
  std::map<std::string, NormalizedValue, std::less<>> metrics;
  // Metrics whose value is text, as printed ("device__attribute_display_name" ->
  // "NVIDIA H100 80GB HBM3", "launch__func_cache_config" -> "CachePreferNone").
  std::map<std::string, std::string, std::less<>> text_metrics;
  std::string host_name;
  std::int64_t context = 0;
  std::int64_t stream = 0;

  std::optional<double> metric(std::string_view name) const;
  std::optional<std::string_view> text_metric(std::string_view name) const;
};

// Splits ncu's NVTX push/pop column (`1224  "<default domain>:prefill:none:none:none:none:none:none" `,
// one quoted "domain:range:payload type:payload:color type:color:message type:message" entry per
// enclosing range, outermost first) into the range stack. "<default domain>" becomes an empty
// domain; a range name may itself contain ':' (the last six fields are the attributes).
std::vector<NvtxRangeName> parse_ncu_nvtx_stack(std::string_view cell);

enum class NcuCsvLayout { raw, long_form };

struct NcuReport {
  NcuCsvLayout layout = NcuCsvLayout::raw;
  std::vector<NcuKernelLaunch> launches;  // in file order
  std::vector<std::string> preamble;      // lines before the CSV header (==PROF==, app output)
};

struct NcuParseOptions {
  // Which metrics to keep, by the name they get in NcuKernelLaunch::metrics; empty keeps all.
  // Cells of dropped metrics are not even converted, so a narrow filter makes parsing a wide raw
  // page several times faster.
  std::function<bool(std::string_view metric_name)> keep_metric;
};

// An NcuParseOptions::keep_metric keeping metrics whose name starts with one of `prefixes`.
std::function<bool(std::string_view)> keep_metrics_with_prefixes(std::vector<std::string> prefixes);

// What for_each_ncu_launch saw besides the launches.
struct NcuCsvInfo {
  NcuCsvLayout layout = NcuCsvLayout::raw;
  std::vector<std::string> preamble;  // lines before the CSV header (==PROF==, app output)
  std::size_t launch_count = 0;       // launches passed to the visitor
};

// Called once per launch in file order. The launch is valid only during the call (the parser
// reuses it for the next row, so memory stays at one row); copy what you keep. Return false to stop.
using NcuLaunchVisitor = std::function<bool(const NcuKernelLaunch& launch)>;

// Streams the launches of an ncu CSV export of either layout; skips leading non-CSV lines.
// Errors (file, line, what): no header (empty file, only ncu's ==ERROR== text, random bytes), a
// missing ID / Kernel Name / Metric column, a truncated row, an unterminated quote.
Result<NcuCsvInfo> for_each_ncu_launch(const std::filesystem::path& csv_file, const NcuParseOptions& options,
                                       const NcuLaunchVisitor& visit);
Result<NcuCsvInfo> for_each_ncu_launch(std::istream& in, const std::string& source_name, const NcuParseOptions& options,
                                       const NcuLaunchVisitor& visit);

// Detects the layout from the header row; skips leading lines that are not the CSV header.
// Collects every launch (built on for_each_ncu_launch).
Result<NcuReport> parse_ncu_csv(const std::filesystem::path& csv_file, const NcuParseOptions& options = {});
Result<NcuReport> parse_ncu_csv(std::istream& in, const std::string& source_name, const NcuParseOptions& options = {});

}  // namespace llmprof
