// measure_sampled_stage: a stage's figures from the GPU-metrics samples; attach_sampled_utilisation: every report
// stage's sampled_* fields from them (llmprof/sampled_utilisation.hpp).
#include "llmprof/sampled_utilisation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "core/figure_checks.hpp"
#include "analysis/time_intervals.hpp"
#include "core/text.hpp"
#include "rundir/report_model_json.hpp"
#include "llmprof/percent.hpp"

namespace llmprof {
namespace {

// Where a stage's samples are taken: each instance's GPU-active time (its first GPU start to its last GPU end) where
// the capture traced CUDA; where it did not (TimelineReport::cuda_untraced: the sampled preset, whose nsys stage took
// 6.7 s on the H200 against 13.6 s with CUDA traced), its range's CPU time. That holds a range's GPU work only where
// the range waits for it: for the eager 1b decode, whose steps do, the two windows gave the same bytes per step
// within 0.1% (tests/data/oracles/gpu_metrics.txt). Where the work runs after the range (asynchronous launches, graph
// replays), the samples tell: see AfterRanges.
struct SampleWindows {
  bool cpu = false;
  const char* label() const { return cpu ? "the ranges' CPU time" : "the GPU-active time"; }
  std::optional<std::pair<std::int64_t, std::int64_t>> of(const TimelineInstance& instance) const {
    return sampled_window(instance, cpu);
  }
};

struct StageSamples {
  std::vector<double> sm_active, tensor_active, dram_read, dram_write;
  double dram_share_periods = 0;  // sum over samples of (read + write) / 100, both known
  std::int64_t dram_samples = 0;
  std::int64_t samples = 0;
};

// The samples whose period's middle (timestamp - period / 2; a sample reports the period that ends at it)
// lies in [start, end]: each moment of GPU work is counted once, however short the instances. Callers pass windows
// that do not overlap (merge_intervals).
void gather(const GpuMetricSamples& samples, std::int64_t start_ns, std::int64_t end_ns, StageSamples& into) {
  const std::int64_t half = samples.period_ns / 2;
  const auto& times = samples.timestamps_ns;
  auto first = std::lower_bound(times.begin(), times.end(), start_ns + half);
  for (auto it = first; it != times.end() && *it - half <= end_ns; ++it) {
    const auto i = std::size_t(it - times.begin());
    ++into.samples;
    const auto keep = [i](const std::vector<double>& from, std::vector<double>& to) {
      if (!std::isnan(from[i])) to.push_back(from[i] / 100.0);
    };
    keep(samples.sm_active, into.sm_active);
    keep(samples.tensor_active, into.tensor_active);
    keep(samples.dram_read, into.dram_read);
    keep(samples.dram_write, into.dram_write);
    if (!std::isnan(samples.dram_read[i]) && !std::isnan(samples.dram_write[i])) {
      into.dram_share_periods += (samples.dram_read[i] + samples.dram_write[i]) / 100.0;
      ++into.dram_samples;
    }
  }
}

// "12.3 ms" on the capture's clock, for notes that place samples and instances.
std::string capture_time(std::int64_t time_ns) { return detail::format_number(double(time_ns) / 1e6) + " ms"; }

// The GPU's activity at sample i: SM active, or DRAM read + write where the set has no SM activity; NaN when neither.
double activity(const GpuMetricSamples& samples, std::size_t i) {
  if (!std::isnan(samples.sm_active[i])) return samples.sm_active[i];
  return samples.dram_read[i] + samples.dram_write[i];
}

// Summed activity (and count) of the samples whose period's middle lies in (after_ns, through_ns].
std::pair<double, std::int64_t> activity_between(const GpuMetricSamples& samples, std::int64_t after_ns,
                                                 std::int64_t through_ns) {
  const std::int64_t half = samples.period_ns / 2;
  const auto& times = samples.timestamps_ns;
  double total = 0;
  std::int64_t count = 0;
  for (auto it = std::upper_bound(times.begin(), times.end(), after_ns + half);
       it != times.end() && *it - half <= through_ns; ++it) {
    const double value = activity(samples, std::size_t(it - times.begin()));
    if (std::isnan(value)) continue;
    total += value;
    ++count;
  }
  return {total, count};
}

// Every range start of each thread, sorted: where the time after an instance ends. The end of an enclosing range
// is no bound: it starts no work, and back-to-back steps that only launch end just before their parent does, so
// a bound there would leave the last step nothing after it (the 48 async graph steps of
// tests/data/zoo/many_steps_graph_async_sampled.sqlite read 0% after with it, 77% without).
class RangeBoundaries {
 public:
  explicit RangeBoundaries(const TimelineReport& timeline) {
    for (const auto& stage : timeline.stages)
      for (const auto& instance : stage.instances) by_thread_[instance.thread].push_back(instance.cpu_start_ns);
    for (auto& [thread, bounds] : by_thread_) std::sort(bounds.begin(), bounds.end());
  }
  // The first boundary on `thread` after `time_ns`; nullopt where none follows.
  std::optional<std::int64_t> next(std::int64_t thread, std::int64_t time_ns) const {
    const auto found = by_thread_.find(thread);
    if (found == by_thread_.end()) return std::nullopt;
    const auto next = std::upper_bound(found->second.begin(), found->second.end(), time_ns);
    if (next == found->second.end()) return std::nullopt;
    return *next;
  }

 private:
  std::map<std::int64_t, std::vector<std::int64_t>> by_thread_;
};

// Whether a range's CPU time holds the GPU work launched in it, read from the samples alone (a capture without CUDA
// trace has nothing else): the GPU activity sampled inside its instances against the activity sampled after each
// one ends, up to the next start of any range on its thread (the last sample where none follows). A range
// that waits for its work leaves little after it: on the eager 1b decode under the sampled preset
// (tests/data/gpu-metrics/nvtx_1b_h200_6steps.sqlite) at most 2.6% (lm_head; decode_step, attention and mlp 0.2% or
// less), after a graph decode's steps that copy their token to the host (tests/data/zoo/many_steps_graph_sampled.
// sqlite, H100) 0.6%. A range that only launches leaves nearly all of it after: the 1b --cuda-graphs decode's 15 us
// decode_step ranges held 15.5 MB per step against the 2.17 GB of their decode range; the graph decode's steps cut
// to their first 15 us, 94% after (39 MB per step read inside against 612 MB); the same decode recorded with steps
// that only launch (many_steps.py --async-steps), 77% after its steps and its `decode` (60 MB per step read inside
// against the 604 MB a step reads). Past kMostActivityAfterRanges the
// figures understate the range's work by as much, and are withheld.
struct ActivityAfterRanges {
  double inside = 0, after = 0;
  std::int64_t after_samples = 0;

  void add(const GpuMetricSamples& samples, const RangeBoundaries& boundaries, const TimelineInstance& instance) {
    const auto [in, unused] = activity_between(samples, instance.cpu_start_ns - 1, instance.cpu_end_ns);
    const std::int64_t until =
        boundaries.next(instance.thread, instance.cpu_end_ns).value_or(samples.timestamps_ns.back());
    const auto [later, later_samples] = activity_between(samples, instance.cpu_end_ns, until);
    inside += in;
    after += later;
    after_samples += later_samples;
  }
  // The share of the activity that came after the ranges; nullopt where the GPU was idle throughout.
  std::optional<double> share_after() const {
    if (inside + after <= 0) return std::nullopt;
    return after / (inside + after);
  }
  // Whether the ranges cannot hold their work: past kMostActivityAfterRanges, with at least kMinimumStageSamples
  // samples (the figures' own minimum) after them.
  bool outlasted() const {
    const auto share = share_after();
    return share && *share > kMostActivityAfterRanges && after_samples >= kMinimumStageSamples;
  }
};

// Nearest rank, as DurationSummary's percentiles (timeline_stages.cpp).
double percentile(const std::vector<double>& sorted, double fraction) {
  const auto rank = std::size_t(std::ceil(fraction * double(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void summarize(std::vector<double> values, SampledFigure& figure) {
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const double value : values) total += value;
  figure.mean = total / double(values.size());
  figure.p10 = percentile(values, 0.10);
  figure.p50 = percentile(values, 0.50);
  figure.p90 = percentile(values, 0.90);
}

// `covered_share`: the share of the stage's instances inside the samples' span, over which its steps are counted.
// `share_after`: over the ranges' CPU time, the share of the activity sampled after them (ActivityAfterRanges).
void fill(SampledStage& stage, const StageSamples& gathered, const GpuMetricSamples& samples,
          std::optional<double> peak, std::optional<double> steps, const SampleWindows& windows, double covered_share,
          std::optional<double> share_after) {
  stage.samples = gathered.samples;
  const std::string rate = detail::format_number(1e9 / double(samples.period_ns)) + " Hz";
  if (gathered.samples < kMinimumStageSamples) {
    stage.note = std::to_string(gathered.samples) + " sample(s) at " + rate + " fell in " + windows.label() +
                 ", fewer than " + std::to_string(kMinimumStageSamples) +
                 ": withheld (raise nsys.gpu_metrics to sample more often)";
    return;
  }
  summarize(gathered.sm_active, stage.sm_active);
  summarize(gathered.tensor_active, stage.tensor_active);
  summarize(gathered.dram_read, stage.dram_read);
  summarize(gathered.dram_write, stage.dram_write);
  stage.note = std::to_string(gathered.samples) + " samples at " + rate + " over " + windows.label();
  if (windows.cpu)
    stage.note += std::string(" (the capture traced no CUDA work: idle time inside a range counts; ") +
                  (share_after ? format_fraction_percent(*share_after) +
                                     " of the GPU activity sampled in and after them came after them"
                               : std::string("the GPU was idle in and after them")) +
                  ")";
  if (gathered.dram_samples == 0) {
    stage.note += "; DRAM bytes withheld: the metric set has no DRAM read/write bandwidth";
    return;
  }
  stage.mbu = gathered.dram_share_periods / double(gathered.dram_samples);
  if (!peak) {
    stage.note += "; DRAM bytes withheld: the GPU's peak DRAM bandwidth is unknown";
    return;
  }
  if (!steps || *steps <= 0) {
    stage.note += "; DRAM bytes per step withheld: the stage's steps are unknown";
    return;
  }
  const double bytes = gathered.dram_share_periods * *peak * double(samples.period_ns) * 1e-9;
  stage.dram_bytes_per_step = bytes / (*steps * covered_share);
}

// The samples of the instance whose GPU-active window is the median one, consecutive samples averaged so that
// at most kSampledSeriesPoints remain (a long step keeps its shape, the report stays small).
std::vector<ReportSampledPoint> median_step_series(const TimelineStage& stage, const GpuMetricSamples& samples,
                                                   const SampleWindows& sample_windows) {
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;
  for (const auto& instance : stage.instances)
    if (auto window = sample_windows.of(instance); window && samples_cover(samples, window->first, window->second))
      windows.push_back(*window);
  if (windows.size() < 3) return {};
  const auto length = [](const auto& window) { return window.second - window.first; };
  std::nth_element(windows.begin(), windows.begin() + std::ptrdiff_t(windows.size() / 2), windows.end(),
                   [&](const auto& a, const auto& b) { return length(a) < length(b); });
  const auto [median_start, median_end] = windows[windows.size() / 2];
  const std::int64_t half = samples.period_ns / 2;
  const auto& times = samples.timestamps_ns;
  const auto first = std::size_t(std::lower_bound(times.begin(), times.end(), median_start + half) - times.begin());
  std::size_t last = first;
  while (last < times.size() && times[last] - half <= median_end) ++last;
  if (last == first) return {};
  const std::size_t group = (last - first + kSampledSeriesPoints - 1) / kSampledSeriesPoints;
  std::vector<ReportSampledPoint> series;
  for (std::size_t begin = first; begin < last; begin += group) {
    const std::size_t end = std::min(begin + group, last);
    const auto mean = [&](const std::vector<double>& values) -> std::optional<double> {
      double total = 0;
      std::size_t count = 0;
      for (std::size_t i = begin; i < end; ++i)
        if (!std::isnan(values[i])) total += values[i], ++count;
      if (count == 0) return std::nullopt;
      return total / double(count) / 100.0;
    };
    ReportSampledPoint point;
    point.offset_ns = (times[begin] + times[end - 1]) / 2 - half - median_start;
    point.sm_active = mean(samples.sm_active);
    point.tensor_active = mean(samples.tensor_active);
    const auto read = mean(samples.dram_read), write = mean(samples.dram_write);
    if (read && write) point.dram = *read + *write;
    series.push_back(point);
  }
  return series;
}

}  // namespace

std::optional<std::pair<std::int64_t, std::int64_t>> sampled_window(const TimelineInstance& instance,
                                                                    bool cuda_untraced) {
  if (cuda_untraced) return std::pair{instance.cpu_start_ns, instance.cpu_end_ns};
  if (instance.gpu_start_ns && instance.gpu_end_ns) return std::pair{*instance.gpu_start_ns, *instance.gpu_end_ns};
  return std::nullopt;
}

bool samples_cover(const GpuMetricSamples& samples, std::int64_t start_ns, std::int64_t end_ns) {
  return !samples.timestamps_ns.empty() && start_ns >= samples.timestamps_ns.front() - 2 * samples.period_ns &&
         end_ns <= samples.timestamps_ns.back() + samples.period_ns;
}

namespace {

// "; 3 of 7,548 sampled values left out (2 outside 0..100, 1 not a number)", or "" when none was.
std::string values_left_out_note(const GpuMetricSamples& samples) {
  const GpuMetricValuesLeftOut& left = samples.left_out;
  if (left.total() == 0) return "";
  std::vector<std::string> why;
  if (left.out_of_range > 0) why.push_back(std::to_string(left.out_of_range) + " outside 0..100");
  if (left.not_numbers > 0) why.push_back(std::to_string(left.not_numbers) + " not a number");
  if (left.repeated > 0) why.push_back(std::to_string(left.repeated) + " repeated at one time");
  return "; " + std::to_string(left.total()) + " of " + std::to_string(left.read) + " sampled values left out (" +
         detail::join(why, ", ") + ")";
}

// The stage's instances that the samples cover (samples_cover), their windows merged, and how many the samples miss.
struct CoveredInstances {
  std::vector<const TimelineInstance*> instances;
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  std::size_t outside = 0;
  std::int64_t first_ns = 0, last_ns = 0;  // the span of the windows the samples miss, for the note
};

CoveredInstances covered_instances(const TimelineStage& stage, const GpuMetricSamples& samples,
                                   const SampleWindows& windows) {
  CoveredInstances covered;
  std::vector<std::pair<std::int64_t, std::int64_t>> kept;
  for (const auto& instance : stage.instances) {
    const auto window = windows.of(instance);
    if (!window) continue;
    if (!samples_cover(samples, window->first, window->second)) {
      covered.first_ns = covered.outside == 0 ? window->first : std::min(covered.first_ns, window->first);
      covered.last_ns = covered.outside == 0 ? window->second : std::max(covered.last_ns, window->second);
      ++covered.outside;
      continue;
    }
    covered.instances.push_back(&instance);
    kept.push_back(*window);
  }
  covered.merged = detail::merge_intervals(std::move(kept));
  return covered;
}

std::string none_covered_note(const CoveredInstances& covered, const GpuMetricSamples& samples, bool other_capture) {
  return "withheld: none of its " + std::to_string(covered.outside) +
         " instances lies inside the sampling window (samples from " +
         capture_time(samples.timestamps_ns.front() - samples.period_ns) + " to " +
         capture_time(samples.timestamps_ns.back()) + ", its instances from " + capture_time(covered.first_ns) + " to " +
         capture_time(covered.last_ns) + " on the capture's clock)" +
         (other_capture ? std::string()
                        : ": the samples were taken at another time than the stage ran, or on another clock; export "
                          "the report again (nsys export --type sqlite), and if that does not help set "
                          "nsys.gpu_metrics=off");
}

// The measured figures in the report stage's sampled_* fields, and beside ncu's measured bytes where both exist.
void place(const SampledStage& measured, ReportStage& stage) {
  // Field by field: report.json keeps these as flat sampled_* members of the stage
  // (copies between two types look alike to the duplicates tool by shape only).
  stage.sampled_samples = measured.samples;
  stage.sampled_sm_active = measured.sm_active;
  stage.sampled_tensor_active = measured.tensor_active;
  stage.sampled_dram_read = measured.dram_read;
  stage.sampled_dram_write = measured.dram_write;
  stage.sampled_dram_bytes_per_step = measured.dram_bytes_per_step;
  stage.sampled_mbu = measured.mbu;
  stage.sampled_note = measured.note;
  if (stage.sampled_dram_bytes_per_step && stage.dram_bytes_per_step && *stage.dram_bytes_per_step > 0)
    stage.sampled_to_measured_bytes = *stage.sampled_dram_bytes_per_step / *stage.dram_bytes_per_step;
}

}  // namespace

SampledStage measure_sampled_stage(const TimelineReport& timeline, const TimelineStage& stage,
                                   const GpuMetricSamples& samples, const SampledStageInputs& inputs) {
  const std::optional<double> peak =
      samples.peak_dram_bytes_per_s ? samples.peak_dram_bytes_per_s : inputs.device_peak_dram_bytes_per_s;
  const SampleWindows windows{timeline.cuda_untraced};
  const CoveredInstances covered = covered_instances(stage, samples, windows);
  StageSamples gathered;
  for (const auto& [start, end] : covered.merged) gather(samples, start, end, gathered);
  ActivityAfterRanges after;
  if (windows.cpu) {
    const RangeBoundaries boundaries(timeline);  // the whole timeline's: any range on the thread bounds "after"
    for (const TimelineInstance* instance : covered.instances) after.add(samples, boundaries, *instance);
  }
  const std::size_t counted = covered.instances.size(), outside = covered.outside;
  const auto share_after = after.share_after();
  SampledStage measured;
  if (after.outlasted()) {
    measured.samples = gathered.samples;
    measured.note =
        "withheld: " + format_fraction_percent(*share_after) + " of the GPU activity sampled in and after its " +
        std::to_string(counted) + " ranges came after they ended (" + std::to_string(after.after_samples) +
        " samples before the thread's next range start): their CPU time cannot hold their GPU work, which runs "
        "after them (asynchronous launches or CUDA graph replays; the capture traced no CUDA work to follow it)" +
        (stage.parent ? "; the enclosing `" + *stage.parent + "` is measured with it where its own ranges hold it"
                      : std::string());
  } else if (counted == 0 && outside > 0) {
    measured.note = none_covered_note(covered, samples, inputs.other_capture);
  } else {
    fill(measured, gathered, samples, peak, inputs.steps, windows,
         double(counted) / double(std::max<std::size_t>(1, counted + outside)), share_after);
    if (outside > 0)
      measured.note += "; left out " + std::to_string(outside) + " of " + std::to_string(counted + outside) +
                       " instances, outside the sampling window (its steps counted as the " + std::to_string(counted) +
                       " inside)";
  }
  measured.note += values_left_out_note(samples);
  if (!inputs.origin.empty()) measured.note += "; " + inputs.origin;
  return measured;
}

void attach_sampled_utilisation(const TimelineReport& timeline, const std::optional<GpuMetricSamples>& samples,
                                AnalysisReport& report, const std::string& origin, bool other_capture) {
  if (!samples) {
    for (auto& stage : report.stages)
      if (timeline.find_stage(stage.qualified_name()))
        stage.sampled_note = origin.empty()
                                 ? "no GPU-metrics samples in the capture (nsys.gpu_metrics off, or not available here)"
                                 : origin;
    return;
  }
  const SampleWindows windows{timeline.cuda_untraced};
  for (auto& stage : report.stages) {
    const TimelineStage* recorded = timeline.find_stage(stage.qualified_name());
    if (!recorded) continue;
    place(measure_sampled_stage(timeline, *recorded, *samples,
                                {stage.steps, report.device.peak_dram_bytes_per_s, origin, other_capture}),
          stage);
    // Every bound of the stage's table rows, the sampled figures' among them (the others were checked where they
    // were made and pass again), as the report applies them when it reads them back; the median step is charted only
    // where a figure stood.
    detail::FigureChecker check(report.warnings, "stage '" + stage.qualified_name() + "'");
    detail::withhold_impossible_figures(stage, check);
    if (stage.sampled_sm_active.mean || stage.sampled_dram_read.mean)
      stage.sampled_median_step = median_step_series(*recorded, *samples, windows);
  }
  if (samples->other_gpus > 0)
    report.warnings.push_back("GPU-metrics samples of " + std::to_string(samples->other_gpus) +
                              " other GPU(s) left out: the figures are the first sampled GPU's (" + samples->gpu_name +
                              ")");
  if (samples->left_out.total() > 0)
    report.warnings.push_back("GPU-metrics samples: " + values_left_out_note(*samples).substr(2) +
                              "; the figures use the rest");
}

}  // namespace llmprof
