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

  std::optional<double> metric(std::string_view name) const;
};

enum class NcuCsvLayout { raw, long_form };

struct NcuReport {
  NcuCsvLayout layout = NcuCsvLayout::raw;
  std::vector<NcuKernelLaunch> launches;  // in file order
  std::vector<std::string> preamble;      // lines before the CSV header (==PROF==, app output)
};

// Detects the layout from the header row; skips leading lines that are not the CSV header.
Result<NcuReport> parse_ncu_csv(const std::filesystem::path& csv_file);

}  // namespace llmprof
