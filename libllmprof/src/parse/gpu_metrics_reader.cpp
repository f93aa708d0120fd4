// read_gpu_metric_samples: GPU_METRICS of an nsys export into one row per sample time (llmprof/gpu_metrics.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/text.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

enum class Metric { sm_active, tensor_active, dram_read, dram_write, other };

constexpr std::array<std::pair<const char*, Metric>, 4> kReadMetrics = {{{"SMs Active", Metric::sm_active},
                                                                        {"Tensor Active", Metric::tensor_active},
                                                                        {"DRAM Read Bandwidth", Metric::dram_read},
                                                                        {"DRAM Write Bandwidth", Metric::dram_write}}};
constexpr std::string_view kPercentUnit = "[Throughput %]";

// By the name's start and its unit: nsys 2025.3.1's gh100 set names them "SMs Active [Throughput %]"; other sets may
// add to the name ("Tensor Active / FP16 Active [Throughput %]" on older chips). A name with another unit ("[%]",
// "[GB/s]") is no percentage of peak, and is not read as one.
Metric metric_of(std::string_view name) {
  if (!name.ends_with(kPercentUnit)) return Metric::other;
  for (const auto& [start, metric] : kReadMetrics)
    if (name.starts_with(start)) return metric;
  return Metric::other;
}

const char* name_of(Metric metric) {
  for (const auto& [start, known] : kReadMetrics)
    if (known == metric) return start;
  return "";
}

Error withheld(const std::filesystem::path& file, const std::string& what, const std::string& hint) {
  return make_error(ErrorCode::parse_error, "the GPU-metrics samples of " + file.string() + " " + what, hint,
                    file.string());
}

Error unreadable(const std::filesystem::path& file, const std::string& what) {
  return withheld(file, what, "export the report again with `nsys export --type sqlite`, or set nsys.gpu_metrics=off");
}

std::vector<double>& column_of(GpuMetricSamples& samples, Metric metric) {
  switch (metric) {
    case Metric::sm_active: return samples.sm_active;
    case Metric::tensor_active: return samples.tensor_active;
    case Metric::dram_read: return samples.dram_read;
    default: return samples.dram_write;
  }
}

struct GpuRow {
  std::string name;
  std::string bus;
  std::optional<double> peak;
};

std::vector<GpuRow> listed_gpus(const detail::SqliteDatabase& database) {
  std::vector<GpuRow> gpus;
  const auto columns = database.columns("TARGET_INFO_GPU");
  if (!columns.contains("name") || !columns.contains("memoryBandwidth")) return gpus;
  const bool has_bus = columns.contains("busLocation");
  auto statement = database.prepare(has_bus ? "SELECT name, memoryBandwidth, busLocation FROM TARGET_INFO_GPU ORDER BY id"
                                            : "SELECT name, memoryBandwidth FROM TARGET_INFO_GPU ORDER BY id");
  if (!statement) return gpus;
  for (auto row = statement->step(); row && *row; row = statement->step()) {
    GpuRow gpu{std::string(statement->text(0)), has_bus ? std::string(statement->text(2)) : "", std::nullopt};
    if (const double peak = statement->real(1); std::isfinite(peak) && peak > 0) gpu.peak = peak;
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

// The metric of each metricId, and the names of those the reader knows none of (for the message that says so).
struct MetricNames {
  std::map<std::int64_t, Metric> of_id;
  std::vector<std::string> unknown;
  bool any_read() const {
    return std::any_of(of_id.begin(), of_id.end(), [](const auto& entry) { return entry.second != Metric::other; });
  }
};

Result<MetricNames> metric_names(const detail::SqliteDatabase& database) {
  MetricNames names;
  auto rows = database.prepare("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY metricId");
  if (!rows) return rows.error();
  for (auto row = rows->step(); row && *row; row = rows->step()) {
    const std::string name(rows->text(1));
    const Metric metric = metric_of(name);
    names.of_id.emplace(rows->integer(0), metric);
    if (metric == Metric::other && std::find(names.unknown.begin(), names.unknown.end(), name) == names.unknown.end())
      names.unknown.push_back(name);
  }
  return names;
}

Error no_metric_known(const std::filesystem::path& file, const MetricNames& names) {
  std::vector<std::string> quoted;
  for (const auto& name : names.unknown) quoted.push_back("\"" + name + "\"");
  const std::string listed = detail::join(quoted, ", ", 6);
  return withheld(file,
                  "name none of the metrics read (SMs Active, Tensor Active, DRAM Read Bandwidth and DRAM Write "
                  "Bandwidth, each \"[Throughput %]\"): the export names " +
                      (listed.empty() ? std::string("no metric") : listed) +
                      ", as another nsys version or another GPU's metric set may",
                  "sample with a metric set that has them (nsys.gpu_metrics_set; `nsys profile --gpu-metrics-set=help` "
                  "lists the sets), or set nsys.gpu_metrics=off");
}

// The typeIds that sampled, each one GPU; an Error when the export cannot be read.
Result<std::vector<std::int64_t>> sampled_types(const detail::SqliteDatabase& database) {
  std::vector<std::int64_t> types;
  auto rows = database.prepare("SELECT DISTINCT typeId FROM GPU_METRICS ORDER BY typeId");
  if (!rows) return rows.error();
  for (auto row = rows->step();; row = rows->step()) {
    if (!row) return row.error();
    if (!*row) break;
    types.push_back(rows->integer(0));
  }
  return types;
}

Error several_gpus(const std::filesystem::path& file, std::size_t sampled, const std::vector<GpuRow>& gpus) {
  std::string listed;
  for (const auto& gpu : gpus)
    listed += (listed.empty() ? "" : ", ") + gpu.name + (gpu.bus.empty() ? std::string() : " at " + gpu.bus);
  return make_error(ErrorCode::unsupported,
                    "the GPU-metrics samples of " + file.string() + " come from " + std::to_string(sampled) +
                        " GPUs (GPU_METRICS holds " + std::to_string(sampled) +
                        " typeIds), and nsys's export does not say which samples are which GPU's" +
                        (listed.empty() ? std::string() : " (it lists " + listed + ")") +
                        ": figures from another GPU than the one the kernels ran on would be wrong, so none is given",
                    "sample only the workload's GPU: run it with CUDA_VISIBLE_DEVICES naming that one GPU, or pass "
                    "nsys.extra_args = [\"--gpu-metrics-devices=<its nsys GPU id>\"] (`nsys profile "
                    "--gpu-metrics-devices=help` lists the ids)",
                    file.string());
}

// Values read per metric and left out per metric, to tell one bad value from a metric that is not what it seems.
struct MetricTally {
  std::map<Metric, std::int64_t> read, left_out;
};

// Reads the kept GPU's rows into `samples`, leaving out (and counting) what no percentage of peak can be.
Result<void> read_rows(const detail::SqliteDatabase& database, std::int64_t type, const MetricNames& names,
                       GpuMetricSamples& samples, MetricTally& tally) {
  auto rows = database.prepare(
      "SELECT timestamp, typeof(timestamp), metricId, value, typeof(value) FROM GPU_METRICS WHERE typeId = ? "
      "ORDER BY timestamp, rowid");
  if (!rows) return rows.error();
  rows->bind_integer(1, type);
  const double missing = std::numeric_limits<double>::quiet_NaN();
  for (auto row = rows->step();; row = rows->step()) {
    if (!row) return row.error();
    if (!*row) break;
    const auto metric = names.of_id.find(rows->integer(2));
    if (metric == names.of_id.end() || metric->second == Metric::other) continue;
    ++samples.left_out.read;
    ++tally.read[metric->second];
    const std::string_view value_type = rows->text(4);
    if (rows->text(1) != "integer" || (value_type != "integer" && value_type != "real")) {
      ++samples.left_out.not_numbers;
      ++tally.left_out[metric->second];
      continue;
    }
    const double value = rows->real(3);
    if (!(value >= 0 && value <= 100)) {
      ++samples.left_out.out_of_range;
      ++tally.left_out[metric->second];
      continue;
    }
    const std::int64_t time = rows->integer(0);
    if (samples.timestamps_ns.empty() || samples.timestamps_ns.back() != time) {
      samples.timestamps_ns.push_back(time);
      for (auto* column : {&samples.sm_active, &samples.tensor_active, &samples.dram_read, &samples.dram_write})
        column->push_back(missing);
    }
    double& slot = column_of(samples, metric->second).back();
    if (!std::isnan(slot)) {
      ++samples.left_out.repeated;
      ++tally.left_out[metric->second];
      continue;
    }
    slot = value;
  }
  return {};
}

std::optional<Error> too_many_left_out(const std::filesystem::path& file, const MetricTally& tally) {
  for (const auto& [metric, lost] : tally.left_out) {
    const std::int64_t read = tally.read.at(metric);
    if (double(lost) <= kMostGpuMetricValuesLeftOut * double(read)) continue;
    return withheld(file,
                    "have " + std::to_string(lost) + " of their " + std::to_string(read) + " \"" + name_of(metric) +
                        "\" values outside 0..100, not numbers, or repeated at one time: more than " +
                        std::to_string(int(kMostGpuMetricValuesLeftOut * 100)) +
                        "%, so the metric is not the percentage of peak the reader takes it for (another unit or "
                        "meaning, or several GPUs' samples under one typeId)",
                    "check the export with `nsys export --type sqlite` again; if a newer nsys changed the metric, set "
                    "nsys.gpu_metrics=off until it is supported");
  }
  return std::nullopt;
}

// The median gap, or an Error when the gaps are not one GPU's steady sampling at the requested frequency.
Result<std::int64_t> sampling_period(const std::filesystem::path& file, const std::vector<std::int64_t>& times,
                                     const GpuMetricsExpectation& expectation) {
  std::vector<std::int64_t> gaps;
  gaps.reserve(times.size() - 1);
  for (std::size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
  std::vector<std::int64_t> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(sorted.size() / 2), sorted.end());
  const std::int64_t period = sorted[sorted.size() / 2];
  const auto regular = std::count_if(gaps.begin(), gaps.end(), [period](std::int64_t gap) {
    return 4 * std::abs(double(gap) - double(period)) <= double(period);
  });
  if (double(regular) < kLeastRegularSampleGaps * double(gaps.size()))
    return withheld(file,
                    "come at irregular times: " + std::to_string(regular) + " of " + std::to_string(gaps.size()) +
                        " gaps lie within a quarter of the median " + std::to_string(period) +
                        " ns, where one GPU's samples come at a steady period (several GPUs' samples under one "
                        "typeId, or a damaged export)",
                    "sample one GPU (CUDA_VISIBLE_DEVICES naming the workload's GPU) and export the report again");
  if (expectation.requested_hz && *expectation.requested_hz > 0) {
    const double asked = 1e9 / double(*expectation.requested_hz);
    if (double(period) < 0.75 * asked)
      return withheld(file,
                      "come every " + std::to_string(period) + " ns, " + detail::format_number(asked / double(period)) +
                          "x as often as the " + std::to_string(*expectation.requested_hz) +
                          " Hz asked for (nsys.gpu_metrics): several GPUs' samples under one typeId, whose figures "
                          "would read as one GPU sampled faster and, averaged with another, as a different load",
                      "sample one GPU (CUDA_VISIBLE_DEVICES naming the workload's GPU) and export the report again");
  }
  return period;
}

}  // namespace

Result<std::optional<GpuMetricSamples>> read_gpu_metric_samples(const std::filesystem::path& sqlite_file,
                                                                const GpuMetricsExpectation& expectation) {
  auto database = detail::SqliteDatabase::open_read_only(sqlite_file);
  if (!database) return database.error();
  if (!database->has_table("GPU_METRICS")) return std::optional<GpuMetricSamples>();
  for (const char* column : {"timestamp", "typeId", "metricId", "value"})
    if (!database->columns("GPU_METRICS").contains(column))
      return unreadable(sqlite_file, std::string("lack the column GPU_METRICS.") + column);
  auto types = sampled_types(database.value());
  if (!types) return types.error();
  if (types->empty()) return std::optional<GpuMetricSamples>();
  const auto name_columns = database->columns("TARGET_INFO_GPU_METRICS");
  if (!name_columns.contains("metricId") || !name_columns.contains("metricName"))
    return unreadable(sqlite_file, "have no metric names (TARGET_INFO_GPU_METRICS.metricId, metricName)");
  auto names = metric_names(database.value());
  if (!names) return names.error();
  if (!names->any_read()) return no_metric_known(sqlite_file, *names);
  const std::vector<GpuRow> gpus = listed_gpus(database.value());
  if (types->size() > 1) return several_gpus(sqlite_file, types->size(), gpus);

  GpuMetricSamples samples;
  if (!gpus.empty()) {
    samples.gpu_name = gpus.front().name;
    samples.peak_dram_bytes_per_s = gpus.front().peak;
    if (gpus.size() == 1) samples.gpu_bus = gpus.front().bus;
  }
  MetricTally tally;
  if (auto read = read_rows(database.value(), types->front(), *names, samples, tally); !read) return read.error();
  if (auto lost = too_many_left_out(sqlite_file, tally)) return *lost;
  if (samples.timestamps_ns.size() < 2) {
    if (samples.left_out.read == 0)
      return unreadable(sqlite_file, "hold no value of the metrics read: TARGET_INFO_GPU_METRICS names them, GPU_METRICS "
                                     "has no row of them");
    return unreadable(sqlite_file, "hold " + std::to_string(samples.timestamps_ns.size()) +
                                       " sample time(s) with a value: no sampling period can be told");
  }
  auto period = sampling_period(sqlite_file, samples.timestamps_ns, expectation);
  if (!period) return period.error();
  samples.period_ns = *period;
  return std::optional<GpuMetricSamples>(std::move(samples));
}

}  // namespace llmprof
