// The GPU-metrics reader (read_gpu_metric_samples) and the per-stage sampled figures (attach_sampled_utilisation) on
// exports built from the input: mutating a whole SQLite file rarely reaches GPU_METRICS's values, so the input here
// is a program that writes the tables: metric names (the four read, others, and the four under another unit), the
// GPUs listed, and rows of (time step, typeId, metric, value as an integer, a real, text, a blob or NULL, timestamp as
// an integer or text), then the windows of a stage's instances.
//
// Invariants: no crash / leak / UB; every error names the file. On success: a positive period; sample times strictly
// ascending; a value per metric and time; no value outside [0, 100] survives; the values kept and those left out add
// up to the rows of the metrics read, and each reason's count is the one this fuzzer counts itself (not a number,
// outside 0..100, repeated at one time); several typeIds are never read as one GPU; fewer than nine in ten gaps within
// a quarter of the median, or a period below three quarters of the asked one, is never accepted. The stage's sampled
// figures: no more samples than sample times, however its instances overlap; shares within [0, 1] with ordered
// percentiles; bytes per step not negative.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_support.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "parse/sqlite_database.hpp"

namespace {

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::int64_t signed16() { return std::int16_t(std::uint16_t(byte()) << 8 | byte()); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// The names a metricId may get: the four the reader reads, then names it must not read as them.
const char* const kNames[] = {"SMs Active [Throughput %]",  "Tensor Active [Throughput %]",
                              "DRAM Read Bandwidth [Throughput %]", "DRAM Write Bandwidth [Throughput %]",
                              "SMs Active [%]",             "DRAM Read Bandwidth [GB/s]",
                              "GPC Clock Frequency [MHz]",  "Tensor Active / FP16 Active [Throughput %]"};
constexpr int kReadNames = 4;  // plus the last one, which the reader reads as tensor active
bool read_name(int name) { return name < kReadNames || name == 7; }
int column_of_name(int name) { return name == 7 ? 1 : name; }

// What this fuzzer expects the reader to count, kept per typeId (the reader reads one).
struct Expected {
  std::int64_t read = 0, out_of_range = 0, not_numbers = 0, repeated = 0;
  std::set<std::pair<std::int64_t, int>> seen;  // (time, column) with a value kept
};

class InputFile {
 public:
  InputFile()
      : directory_(std::filesystem::temp_directory_path() / ("llmprof-fuzz-gpu-metrics-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(directory_);
  }
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::filesystem::path fresh() const {
    const auto file = directory_ / llmprof::fuzz::kSourceName;
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    return file;
  }

 private:
  std::filesystem::path directory_;
};

void run(const llmprof::detail::SqliteDatabase& database, const std::string& sql) {
  if (!database.execute(sql)) std::abort();  // the fuzzer's own SQL: a failure is a bug here, not a finding
}

// Writes the export; returns what the reader should count for each typeId written.
std::map<std::int64_t, Expected> write_export(const std::filesystem::path& file, Bytes& in, std::set<std::int64_t>& types) {
  auto opened = llmprof::detail::SqliteDatabase::open_writable(file);
  if (!opened) std::abort();
  const auto& database = *opened;
  // One transaction, no journal: thousands of autocommitted inserts would cost a sync each.
  run(database, "PRAGMA journal_mode = OFF");
  run(database, "PRAGMA synchronous = OFF");
  run(database, "BEGIN");
  // Untyped columns: SQLite keeps each value as written (nsys's INTEGER columns would turn the text "12" into 12).
  run(database, "CREATE TABLE GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value)");
  run(database, "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, metricId, metricName)");
  run(database, "CREATE TABLE TARGET_INFO_GPU (id, name, busLocation, memoryBandwidth)");
  const int gpus = in.byte() % 3;
  for (int gpu = 0; gpu < gpus; ++gpu)
    run(database, "INSERT INTO TARGET_INFO_GPU VALUES (" + std::to_string(gpu) + ", 'GPU', '0000:00:0" +
                      std::to_string(gpu) + ".0', 4814304000000)");
  std::map<int, int> name_of_metric;  // metricId -> index into kNames
  const int metrics = 1 + in.byte() % 6;
  for (int metric = 0; metric < metrics; ++metric) {
    const int name = in.byte() % int(std::size(kNames));
    name_of_metric[metric] = name;
    run(database, "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (1, 1, '', " + std::to_string(metric) + ", '" +
                      kNames[name] + "')");
  }
  std::map<std::int64_t, Expected> expected;
  std::int64_t time = 0;
  for (int row = 0; row < 2048 && !in.empty(); ++row) {
    const std::uint8_t control = in.byte();
    time += (control & 0x80) ? in.signed16() : 50000 + in.byte() % 8;  // mostly steady, sometimes anywhere
    const std::int64_t type = (control >> 5) & 1;
    const int metric = in.byte() % (metrics + 1);  // metrics: no name
    const bool text_time = (control & 0x10) && (in.byte() % 8 == 0);
    types.insert(type);
    std::string sql = "INSERT INTO GPU_METRICS VALUES (0, " + (text_time ? std::string("'t'") : std::to_string(time)) +
                      ", " + std::to_string(type) + ", " + std::to_string(metric) + ", ";
    const int kind = control & 0x7;
    double numeric = 0;
    bool number = true;
    switch (kind) {
      case 0: numeric = in.byte() % 101; sql += std::to_string(std::int64_t(numeric)); break;   // in range
      case 1: numeric = double(in.signed16()); sql += std::to_string(std::int64_t(numeric)); break;  // anywhere
      case 2: numeric = double(in.byte()) / 2.0; sql += std::to_string(numeric); break;  // real, some past 100
      case 3: number = false; sql += "'n/a'"; break;
      case 4: number = false; sql += "NULL"; break;
      case 5: number = false; sql += "x'00ff'"; break;
      case 6: numeric = 1e308 * 10; sql += "1e999"; break;  // +inf
      default: numeric = 100; sql += "100"; break;
    }
    run(database, sql + ")");
    const auto name = name_of_metric.find(metric);
    if (name == name_of_metric.end() || !read_name(name->second)) continue;
    Expected& counted = expected[type];
    ++counted.read;
    if (!number || text_time) ++counted.not_numbers;
    else if (!(numeric >= 0 && numeric <= 100)) ++counted.out_of_range;
    else if (!counted.seen.insert({time, column_of_name(name->second)}).second) ++counted.repeated;
  }
  run(database, "COMMIT");
  return expected;
}

void check_samples(const llmprof::GpuMetricSamples& samples, const Expected& expected, std::optional<int> hz) {
  LLMPROF_FUZZ_CHECK(samples.period_ns > 0, "period " + std::to_string(samples.period_ns));
  const auto& times = samples.timestamps_ns;
  LLMPROF_FUZZ_CHECK(std::adjacent_find(times.begin(), times.end(), std::greater_equal<>()) == times.end(),
                     "sample times not strictly ascending");
  std::int64_t kept = 0;
  for (const auto* column : {&samples.sm_active, &samples.tensor_active, &samples.dram_read, &samples.dram_write}) {
    LLMPROF_FUZZ_CHECK(column->size() == times.size(), "a metric without a value per sample time");
    for (const double value : *column) {
      LLMPROF_FUZZ_CHECK(std::isnan(value) || (value >= 0 && value <= 100), "a value outside [0, 100] survived");
      kept += !std::isnan(value);
    }
  }
  const auto& left = samples.left_out;
  LLMPROF_FUZZ_CHECK(kept + left.total() == left.read, "kept + left out != read: " + std::to_string(kept) + " + " +
                                                           std::to_string(left.total()) + " != " + std::to_string(left.read));
  LLMPROF_FUZZ_CHECK(left.read == expected.read && left.not_numbers == expected.not_numbers &&
                         left.out_of_range == expected.out_of_range && left.repeated == expected.repeated,
                     "counts differ from the fuzzer's: read " + std::to_string(left.read) + "/" +
                         std::to_string(expected.read) + ", not numbers " + std::to_string(left.not_numbers) + "/" +
                         std::to_string(expected.not_numbers) + ", out of range " + std::to_string(left.out_of_range) +
                         "/" + std::to_string(expected.out_of_range) + ", repeated " + std::to_string(left.repeated) +
                         "/" + std::to_string(expected.repeated));
  std::int64_t regular = 0;
  for (std::size_t i = 1; i < times.size(); ++i)
    regular += 4 * std::abs(double(times[i] - times[i - 1]) - double(samples.period_ns)) <= double(samples.period_ns);
  LLMPROF_FUZZ_CHECK(double(regular) >= llmprof::kLeastRegularSampleGaps * double(times.size() - 1),
                     "irregular sampling accepted");
  if (hz) LLMPROF_FUZZ_CHECK(double(samples.period_ns) >= 0.75 * 1e9 / *hz, "a period below the asked one accepted");
}

// One stage whose instances' CPU windows come from the rest of the input (the capture traced no CUDA work).
void check_stage_figures(const llmprof::GpuMetricSamples& samples, Bytes& in) {
  llmprof::TimelineReport timeline;
  timeline.cuda_untraced = in.byte() & 1;
  llmprof::TimelineStage stage;
  stage.name = "step";
  const std::int64_t first = samples.timestamps_ns.front();
  for (int i = 0; i < 64 && !in.empty(); ++i) {
    llmprof::TimelineInstance instance;
    instance.thread = in.byte() % 2;
    instance.cpu_start_ns = first + in.signed16() * 1000;
    instance.cpu_end_ns = instance.cpu_start_ns + (in.byte() * 10000);
    instance.gpu_start_ns = instance.cpu_start_ns;
    instance.gpu_end_ns = instance.cpu_end_ns;
    stage.instances.push_back(instance);
  }
  if (stage.instances.empty()) return;
  timeline.stages.push_back(stage);
  llmprof::AnalysisReport report;
  report.stages.push_back(llmprof::ReportStage{.name = "step", .steps = double(stage.instances.size())});
  llmprof::attach_sampled_utilisation(timeline, samples, report);
  const auto& figures = report.stages.front();
  LLMPROF_FUZZ_CHECK(!figures.sampled_note.empty(), "a stage without a sampled note");
  if (figures.sampled_samples)
    LLMPROF_FUZZ_CHECK(*figures.sampled_samples >= 0 &&
                           std::size_t(*figures.sampled_samples) <= samples.timestamps_ns.size(),
                       "more samples than sample times: " + std::to_string(*figures.sampled_samples));
  for (const llmprof::SampledFigure* share : {&figures.sampled_sm_active, &figures.sampled_tensor_active,
                                               &figures.sampled_dram_read, &figures.sampled_dram_write}) {
    if (!share->mean) continue;
    LLMPROF_FUZZ_CHECK(share->p10 && share->p50 && share->p90, "a sampled mean without its percentiles");
    LLMPROF_FUZZ_CHECK(*share->mean >= 0 && *share->mean <= 1 && *share->p10 <= *share->p50 &&
                           *share->p50 <= *share->p90 && *share->p90 <= 1,
                       "sampled shares out of [0, 1] or unordered");
  }
  if (figures.sampled_mbu) LLMPROF_FUZZ_CHECK(*figures.sampled_mbu >= 0 && *figures.sampled_mbu <= 2, "sampled MBU");
  if (figures.sampled_dram_bytes_per_step)
    LLMPROF_FUZZ_CHECK(*figures.sampled_dram_bytes_per_step >= 0, "negative sampled bytes per step");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const InputFile input;
  Bytes in(data, size);
  const auto file = input.fresh();
  const std::optional<int> hz = (in.byte() & 1) ? std::optional<int>(20000) : std::nullopt;
  std::set<std::int64_t> types;
  const auto expected = write_export(file, in, types);
  const auto samples = llmprof::read_gpu_metric_samples(file, llmprof::GpuMetricsExpectation{hz});
  LLMPROF_FUZZ_CHECK_ERROR(samples);
  if (!samples || !*samples) return 0;
  LLMPROF_FUZZ_CHECK(types.size() == 1, "several typeIds read as one GPU");
  const auto found = expected.find(*types.begin());
  check_samples(**samples, found != expected.end() ? found->second : Expected{}, hz);
  check_stage_figures(**samples, in);
  return 0;
}
