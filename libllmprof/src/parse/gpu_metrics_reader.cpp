// read_gpu_metric_samples: GPU_METRICS of an nsys export into one row per sample time (llmprof/gpu_metrics.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "llmprof/gpu_metrics.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

enum class Metric { sm_active, tensor_active, dram_read, dram_write, other };

// By the name's start: nsys 2025.3.1's gh100 set names them so; other sets may add a suffix after the name
// ("Tensor Active / FP16 Active" on older chips), never change the start.
Metric metric_of(const std::string& name) {
  const auto starts = [&name](const char* prefix) { return name.rfind(prefix, 0) == 0; };
  if (starts("SMs Active")) return Metric::sm_active;
  if (starts("Tensor Active")) return Metric::tensor_active;
  if (starts("DRAM Read Bandwidth")) return Metric::dram_read;
  if (starts("DRAM Write Bandwidth")) return Metric::dram_write;
  return Metric::other;
}

Error unreadable(const std::filesystem::path& file, const std::string& what) {
  return make_error(ErrorCode::parse_error, "the GPU-metrics samples of " + file.string() + " " + what,
                    "export the report again with `nsys export --type sqlite`, or set nsys.gpu_metrics=off",
                    file.string());
}

std::vector<double>& column_of(GpuMetricSamples& samples, Metric metric) {
  switch (metric) {
    case Metric::sm_active: return samples.sm_active;
    case Metric::tensor_active: return samples.tensor_active;
    case Metric::dram_read: return samples.dram_read;
    default: return samples.dram_write;
  }
}

void read_gpu_info(const detail::SqliteDatabase& database, GpuMetricSamples& samples) {
  const auto columns = database.columns("TARGET_INFO_GPU");
  if (!columns.contains("name") || !columns.contains("memoryBandwidth")) return;
  const bool has_bus = columns.contains("busLocation");
  auto statement = database.prepare(has_bus ? "SELECT name, memoryBandwidth, busLocation FROM TARGET_INFO_GPU ORDER BY id"
                                            : "SELECT name, memoryBandwidth FROM TARGET_INFO_GPU ORDER BY id");
  if (!statement) return;
  int gpus = 0;
  for (auto row = statement->step(); row && *row; row = statement->step()) {
    if (++gpus > 1) {
      samples.gpu_bus.clear();
      continue;
    }
    samples.gpu_name = std::string(statement->text(0));
    if (const double peak = double(statement->integer(1)); peak > 0) samples.peak_dram_bytes_per_s = peak;
    if (has_bus) samples.gpu_bus = std::string(statement->text(2));
  }
}

}  // namespace

Result<std::optional<GpuMetricSamples>> read_gpu_metric_samples(const std::filesystem::path& sqlite_file) {
  auto database = detail::SqliteDatabase::open_read_only(sqlite_file);
  if (!database) return database.error();
  if (!database->has_table("GPU_METRICS")) return std::optional<GpuMetricSamples>();
  for (const char* column : {"timestamp", "typeId", "metricId", "value"})
    if (!database->columns("GPU_METRICS").contains(column))
      return unreadable(sqlite_file, std::string("lack the column GPU_METRICS.") + column);
  const auto name_columns = database->columns("TARGET_INFO_GPU_METRICS");
  if (!name_columns.contains("metricId") || !name_columns.contains("metricName"))
    return unreadable(sqlite_file, "have no metric names (TARGET_INFO_GPU_METRICS.metricId, metricName)");
  std::map<std::int64_t, Metric> metrics;
  auto names = database->prepare("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS");
  if (!names) return names.error();
  for (auto row = names->step(); row && *row; row = names->step())
    metrics[names->integer(0)] = metric_of(std::string(names->text(1)));

  GpuMetricSamples samples;
  read_gpu_info(database.value(), samples);
  // The first GPU's samples (its typeId); another GPU's are counted and left out.
  auto types = database->prepare("SELECT typeId, count(*) FROM GPU_METRICS GROUP BY typeId ORDER BY typeId");
  if (!types) return types.error();
  std::optional<std::int64_t> kept_type;
  for (auto row = types->step(); row && *row; row = types->step()) {
    if (!kept_type)
      kept_type = types->integer(0);
    else
      ++samples.other_gpus;
  }
  if (!kept_type) return std::optional<GpuMetricSamples>();
  if (samples.other_gpus > 0) samples.gpu_bus.clear();
  auto rows = database->prepare("SELECT timestamp, metricId, value FROM GPU_METRICS WHERE typeId = ? ORDER BY timestamp");
  if (!rows) return rows.error();
  rows->bind_integer(1, *kept_type);
  const double missing = std::numeric_limits<double>::quiet_NaN();
  for (auto row = rows->step();; row = rows->step()) {
    if (!row) return row.error();
    if (!*row) break;
    const auto metric = metrics.find(rows->integer(1));
    if (metric == metrics.end() || metric->second == Metric::other) continue;
    const std::int64_t time = rows->integer(0);
    if (samples.timestamps_ns.empty() || samples.timestamps_ns.back() != time) {
      samples.timestamps_ns.push_back(time);
      for (auto* column : {&samples.sm_active, &samples.tensor_active, &samples.dram_read, &samples.dram_write})
        column->push_back(missing);
    }
    const double value = rows->real(2);
    if (!(value >= 0 && value <= 100))
      return unreadable(sqlite_file, "hold a percentage outside 0..100 (" + std::to_string(value) + " at " +
                                         std::to_string(time) + " ns)");
    column_of(samples, metric->second).back() = value;
  }
  if (samples.timestamps_ns.size() < 2) {
    if (samples.timestamps_ns.empty()) return std::optional<GpuMetricSamples>();
    return unreadable(sqlite_file, "hold one sample time: no sampling period can be told");
  }
  std::vector<std::int64_t> gaps;
  gaps.reserve(samples.timestamps_ns.size() - 1);
  for (std::size_t i = 1; i < samples.timestamps_ns.size(); ++i)
    gaps.push_back(samples.timestamps_ns[i] - samples.timestamps_ns[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(gaps.size() / 2), gaps.end());
  samples.period_ns = gaps[gaps.size() / 2];
  return std::optional<GpuMetricSamples>(std::move(samples));
}

}  // namespace llmprof
