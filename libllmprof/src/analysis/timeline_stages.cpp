// Stage figures from range instances: percentiles, warm-up and steady state, busy over the stage's
// span, verdicts that know about CUDA graphs and partial captures, headroom, measurement validity.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/timeline_model.hpp"
#include "core/format.hpp"
#include "core/saturating.hpp"
#include "core/text.hpp"
#include "llmprof/kernel_name.hpp"

namespace llmprof::detail {

DurationSummary summarize_durations(std::vector<std::int64_t> values) {
  DurationSummary summary;
  if (values.empty()) return summary;
  std::sort(values.begin(), values.end());
  summary.count = static_cast<std::int64_t>(values.size());
  summary.total_ns = std::accumulate(values.begin(), values.end(), std::int64_t{0});
  summary.mean_ns = static_cast<double>(summary.total_ns) / static_cast<double>(values.size());
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const auto rank = [&](double percent) {
    const auto index = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(index, 1) - 1];
  };
  summary.p50_ns = rank(50);
  summary.p90_ns = rank(90);
  summary.p99_ns = rank(99);
  summary.max_ns = values.back();
  return summary;
}

namespace {

std::string code(const std::string& name) { return "`" + name + "`"; }

// Leading instances much longer than the median (first call, graph capture, autotuning), at most half.
void mark_warmup(TimelineStage& stage, const TimelineOptions& options) {
  std::vector<std::int64_t> durations;
  for (const auto& instance : stage.instances) durations.push_back(instance.cpu_duration_ns());
  if (durations.size() < 3) {
    stage.steady_state_note = "all " + std::to_string(durations.size()) + " instances (too few to set warm-up aside)";
    return;
  }
  auto sorted = durations;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = static_cast<double>(sorted[sorted.size() / 2]);
  for (std::size_t i = 0; i < durations.size() / 2; ++i) {
    if (static_cast<double>(durations[i]) <= options.warmup_outlier_factor * median) break;
    stage.warmup_instances.push_back(i);
  }
  const std::size_t first_steady = stage.warmup_instances.size() + 1;
  stage.steady_state_note =
      stage.warmup_instances.empty()
          ? "all " + std::to_string(durations.size()) + " instances (no warm-up outlier)"
          : "instances " + std::to_string(first_steady) + "-" + std::to_string(durations.size()) + " of " +
                std::to_string(durations.size()) + "; warm-up set aside: instance" +
                (stage.warmup_instances.size() > 1 ? "s 1-" + std::to_string(stage.warmup_instances.size()) : " 1") +
                " (" + format_duration_ns(static_cast<double>(durations[0])) + " vs median " +
                format_duration_ns(median) + ")";
}

void summarize_stage(TimelineStage& stage, const TimelineOptions& options) {
  mark_warmup(stage, options);
  std::vector<std::int64_t> all, steady, steady_busy;
  std::vector<const TimelineInstance*> steady_recorded;
  for (std::size_t i = 0; i < stage.instances.size(); ++i) {
    const auto& instance = stage.instances[i];
    all.push_back(instance.cpu_duration_ns());
    add_saturating(stage.launch_api_ns, instance.launch_api_ns);
    add_saturating(stage.sync_api_ns, instance.sync_api_ns);
    add_saturating(stage.gpu_time_ns, instance.gpu_time_ns);
    add_saturating(stage.graph_time_ns, instance.graph_time_ns);
    add_saturating(stage.graph_executions, instance.graph_executions);
    add_saturating(stage.idle.host_launching_ns, instance.idle.host_launching_ns);
    add_saturating(stage.idle.host_in_sync_ns, instance.idle.host_in_sync_ns);
    add_saturating(stage.idle.nothing_launched_ns, instance.idle.nothing_launched_ns);
    add_saturating(stage.loss.launches, instance.loss.launches);
    add_saturating(stage.loss.launches_without_record, instance.loss.launches_without_record);
    add_saturating(stage.loss.graph_launches, instance.loss.graph_launches);
    add_saturating(stage.loss.graph_launches_without_record, instance.loss.graph_launches_without_record);
    if (i < stage.warmup_instances.size()) continue;
    steady.push_back(instance.cpu_duration_ns());
    if (!instance.partial()) {
      steady_busy.push_back(instance.gpu_busy_ns);
      steady_recorded.push_back(&instance);
    }
  }
  stage.cpu_duration = summarize_durations(std::move(all));
  stage.steady_cpu_duration = summarize_durations(std::move(steady));
  if (stage.gpu_time_ns > 0) stage.steady_gpu_busy = summarize_durations(std::move(steady_busy));
  if (stage.steady_gpu_busy.count > 0) {
    Headroom headroom;
    for (const auto* instance : steady_recorded) headroom.current_step_ns += static_cast<double>(instance->window_ns());
    headroom.current_step_ns /= static_cast<double>(steady_recorded.size());
    headroom.predicted_step_ns = stage.steady_gpu_busy.mean_ns;
    if (headroom.predicted_step_ns > 0) {
      headroom.speedup = headroom.current_step_ns / headroom.predicted_step_ns;
      headroom.predicted_steps_per_s = 1e9 / headroom.predicted_step_ns;
      stage.headroom = headroom;  // kept only for host-bound stages (set_verdict)
    }
  }
}

// The shares are of the GPU idle time, not of the stage (the busy fraction already says how much of the stage
// is idle); the sentence says so, because "GPU idle 63% while the host launched" read as 63% of the stage.
std::string idle_text(const IdleAttribution& idle) {
  const double total = static_cast<double>(idle.total_ns());
  if (total <= 0) return "no GPU idle time";
  return "of its GPU idle time, " + format_fraction_percent(idle.host_launching_ns / total) + " while the host launched, " +
         format_fraction_percent(idle.host_in_sync_ns / total) + " while it waited in a synchronise, " +
         format_fraction_percent(idle.nothing_launched_ns / total) + " with nothing launched";
}

// Graph replays: the GPU idles between one replay's end and the next's start while the host does the step's
// own work (sampling, bookkeeping, the replay call). Idle = active time less the union of GPU work, per replay;
// the per-instance attribution is added only where it accounts for that idle time (one range around the
// loop), not where overlapping instance windows count the same gap several times.
std::string graph_gap_text(const TimelineStage& stage) {
  const std::int64_t idle_ns = stage.active_ns - stage.gpu_busy_ns;
  if (idle_ns <= 0 || stage.graph_executions <= 0 || stage.active_ns <= 0) return "";
  std::string text = "GPU idle " + format_fraction_percent(static_cast<double>(idle_ns) / static_cast<double>(stage.active_ns)) +
                     " of the stage, " +
                     format_duration_ns(static_cast<double>(idle_ns) / static_cast<double>(stage.graph_executions)) +
                     " per graph replay between replays";
  const std::int64_t attributed = stage.idle.total_ns();
  if (attributed > 0 && attributed <= idle_ns + idle_ns / 100) text += " (" + idle_text(stage.idle) + ")";
  return text;
}

void set_verdict(TimelineStage& stage, const TimelineOptions& options, bool cuda_untraced) {
  const bool has_gpu = stage.gpu_time_ns > 0;
  if (!has_gpu && stage.loss.launches == 0) {
    stage.verdict = cuda_untraced ? "GPU work not traced: the capture recorded no CUDA call (nsys.trace without "
                                    "\"cuda\"); the sampled GPU counters measure it"
                                  : "CPU only: no GPU work launched inside this range";
    stage.headroom.reset();
    return;
  }
  if (stage.partial()) {
    stage.verdict = "partial capture: " + std::to_string(stage.loss.launches_without_record) + " of " +
                    std::to_string(stage.loss.launches) + " GPU launches inside " + code(stage.name) +
                    " have no GPU record (the capture ended before the GPU finished); GPU busy not computed";
    if (stage.mostly_graphs() || stage.loss.graph_launches * 2 >= stage.loss.launches)
      stage.verdict += "; its GPU work is CUDA graph executions, so launch overhead is not what limits it";
    // Pairs of replays are consecutive recorded ones only, so their gaps stand where the capture lost others.
    if (stage.graph_replays && stage.mostly_graphs())
      stage.verdict += "; of the recorded replays: " + graph_replay_sentence(*stage.graph_replays);
    stage.headroom.reset();
    return;
  }
  const double busy =
      stage.active_ns > 0 ? static_cast<double>(stage.gpu_busy_ns) / static_cast<double>(stage.active_ns) : 0;
  stage.gpu_busy_fraction = busy;
  if (stage.mostly_graphs()) {
    stage.verdict = "runs as CUDA graphs: GPU busy " + format_fraction_percent(busy) + " of the stage";
    if (const std::string gap = graph_gap_text(stage); !gap.empty()) stage.verdict += "; " + gap;
    if (stage.graph_replays) stage.verdict += "; " + graph_replay_sentence(*stage.graph_replays);
    if (busy < options.host_bound_busy_fraction)
      stage.verdict += "; the GPU waits between graph replays on host work between steps, not on kernel launches";
    stage.headroom.reset();
    return;
  }
  if (busy < options.host_bound_busy_fraction) {
    stage.verdict = "host/launch-bound: GPU busy " + format_fraction_percent(busy) + " of the stage; " +
                    idle_text(stage.idle) +
                    "; cut launch overhead (CUDA graphs, fused kernels) or host work between launches";
    return;
  }
  // Measured on two H200s (tensor-parallel decode): 84% of decode's GPU time was NCCL kernels
  // spinning until the other rank's launches arrived; "GPU-bound" would have sent people to its GEMMs.
  const double collective =
      stage.gpu_busy_ns > 0
          ? std::min(1.0, static_cast<double>(stage.collective_time_ns) / static_cast<double>(stage.gpu_busy_ns))
          : 0;
  if (collective >= 0.5) {
    stage.verdict = "waiting on collectives: GPU busy " + format_fraction_percent(busy) + " of the stage, " +
                    format_fraction_percent(collective) +
                    " of it in collective (NCCL) kernels, which include waiting for the other ranks; compare the "
                    "ranks (Across ranks) before tuning this rank's kernels";
    stage.headroom.reset();
    return;
  }
  stage.verdict = "GPU-bound: GPU busy " + format_fraction_percent(busy) + " of the stage";
  stage.headroom.reset();
}

}  // namespace

namespace {

std::string activity_name(std::int64_t id, const std::map<std::int64_t, std::string>& names) {
  if (id == kMemcpyNameId) return "[CUDA memcpy]";
  if (id == kMemsetNameId) return "[CUDA memset]";
  if (id == kGraphNameId) return "[CUDA graph execution]";
  auto found = names.find(id);
  return found != names.end() && !found->second.empty() ? found->second : "[kernel name " + std::to_string(id) + "]";
}

std::vector<TimelineKernel> stage_kernel_table(const std::map<std::int64_t, KernelTotals>& totals,
                                               const std::map<std::int64_t, std::string>& names, std::size_t limit) {
  std::vector<TimelineKernel> kernels;
  for (const auto& [id, kernel] : totals)
    kernels.push_back({activity_name(id, names), kernel.count, kernel.total_ns, kernel.from_graph});
  std::sort(kernels.begin(), kernels.end(), [](const TimelineKernel& a, const TimelineKernel& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (kernels.size() > limit) kernels.resize(limit);
  return kernels;
}

std::string capture_loss_sentence(const TimelineStage& stage) {
  const bool graphs = stage.loss.graph_launches_without_record > 0;
  const auto lost = graphs ? stage.loss.graph_launches_without_record : stage.loss.launches_without_record;
  const auto launched = graphs ? stage.loss.graph_launches : stage.loss.launches;
  return std::to_string(lost) + " of " + std::to_string(launched) + (graphs ? " graph launches" : " GPU launches") +
         " inside " + code(stage.qualified_name()) +
         " have no GPU record: the range closed before the GPU finished. Synchronise the device before closing the "
         "range, gate the capture on a range that ends after a synchronise, or let the capture outlive the range "
         "(--capture-range-end=none or repeat); the figures of " +
         code(stage.qualified_name()) + " are partial";
}

// Union of the instances' windows (instances are in CPU start order, so one merge pass).
std::int64_t active_time_ns(const std::vector<TimelineInstance>& instances) {
  std::int64_t total = 0;
  std::int64_t merged_end = std::numeric_limits<std::int64_t>::min();
  for (const auto& instance : instances) {
    const std::int64_t end = instance.cpu_start_ns + instance.window_ns();
    if (end <= merged_end) continue;
    add_saturating(total, end - std::max(instance.cpu_start_ns, merged_end));
    merged_end = end;
  }
  return total;
}

void fill_validity(TimelineReport& report) {
  auto& validity = report.validity;
  validity.empty_capture = report.gpu_activities == 0;
  for (const auto& stage : report.stages) {
    if (!stage.partial()) continue;
    validity.partial_capture = true;
    const TimelineStage* parent = stage.parent ? report.find_stage(*stage.parent) : nullptr;
    if (parent == nullptr || !parent->partial()) validity.capture_losses.push_back(capture_loss_sentence(stage));
  }
  if (report.graph_trace == "graph") {
    std::int64_t executions = 0;
    for (const auto& stage : report.stages)
      if (stage.level == 0) add_saturating(executions, stage.graph_executions);
    validity.graph_hidden = std::to_string(executions) +
                            " CUDA graph executions were recorded whole (--cuda-graph-trace=graph, the default): "
                            "they count as GPU work here, but their kernels are not listed; capture with "
                            "--cuda-graph-trace=node to list them (it slows the host side)";
  }
  if (validity.empty_capture)
    validity.notes.push_back(report.cuda_untraced
                                 ? "CUDA was not traced (nsys.trace without \"cuda\"): kernel figures are absent; the "
                                   "GPU's sampled counters and the CPU range figures stand"
                                 : "no GPU activity was recorded: GPU figures are absent, CPU range figures stand");
  if (report.unclosed_ranges > 0)
    validity.notes.push_back(std::to_string(report.unclosed_ranges) +
                             " NVTX ranges never closed inside the capture and are left out of the timeline: " +
                             detail::join(report.unclosed_range_names, ", ") +
                             " (left open at the workload's exit, or the capture ended inside them; nsys stats, and the "
                             "stage tables made like it, end them at the export's last NVTX timestamp)");
}

}  // namespace

void build_stages(TimelineGathered& gathered, const TimelineOptions& options, TimelineReport& report) {
  const auto& ranges = gathered.index.ranges();
  std::vector<TimelineStage> stages(gathered.stage_keys.size());
  for (std::size_t id = 0; id < stages.size(); ++id) {
    stages[id].domain = gathered.stage_keys[id].first;
    stages[id].name = gathered.stage_keys[id].second;
  }
  std::vector<std::int64_t> first_start(stages.size(), std::numeric_limits<std::int64_t>::max());
  std::vector<std::int64_t> span_end(stages.size(), std::numeric_limits<std::int64_t>::min());
  std::vector<std::int64_t> gpu_end(stages.size(), std::numeric_limits<std::int64_t>::min());
  for (std::size_t range = 0; range < ranges.size(); ++range) {
    const std::size_t id = gathered.stage_of[range];
    auto& stage = stages[id];
    const auto& instance = gathered.instances[range];
    if (stage.instances.empty()) {  // the first instance decides parent and level
      for (std::size_t up = gathered.index.parent(range); up != kNoRange; up = gathered.index.parent(up)) ++stage.level;
      if (const auto up = gathered.index.parent(range); up != kNoRange) {
        const auto& key = gathered.stage_keys[gathered.stage_of[up]];
        stage.parent = key.first.empty() ? key.second : key.first + ":" + key.second;
      }
    }
    first_start[id] = std::min(first_start[id], instance.cpu_start_ns);
    span_end[id] = std::max(span_end[id], instance.cpu_start_ns + instance.window_ns());
    if (instance.gpu_end_ns) gpu_end[id] = std::max(gpu_end[id], *instance.gpu_end_ns);
    stage.instances.push_back(instance);
  }
  for (std::size_t id = 0; id < stages.size(); ++id) {
    auto& stage = stages[id];
    stage.span_ns = span_end[id] - first_start[id];
    stage.active_ns = active_time_ns(stage.instances);
    stage.gpu_busy_ns = gathered.stage_busy[id].busy_ns;
    if (gpu_end[id] > std::numeric_limits<std::int64_t>::min())
      stage.gpu_span_ns = gpu_end[id] - gathered.stage_gpu_start[id];
    stage.kernels = stage_kernel_table(gathered.stage_kernels[id], gathered.names, options.kernels_per_stage);
    for (const auto& [name_id, totals] : gathered.stage_kernels[id]) {
      if (name_id >= 0 && is_collective_kernel(activity_name(name_id, gathered.names)))
        add_saturating(stage.collective_time_ns, totals.total_ns);
    }
    stage.graph_replays = gathered.stage_replays[id].finish();
    summarize_stage(stage, options);
    set_verdict(stage, options, report.cuda_untraced);
  }
  std::vector<std::size_t> order(stages.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return stages[a].level != stages[b].level ? stages[a].level < stages[b].level : first_start[a] < first_start[b];
  });
  for (std::size_t id : order) report.stages.push_back(std::move(stages[id]));
  fill_validity(report);
}

}  // namespace llmprof::detail

namespace llmprof {

std::optional<std::string> profiler_slowdown_note(const TimelineStage& stage, double bare_stage_s,
                                                  std::int64_t bare_instances) {
  if (bare_stage_s <= 0 || bare_instances <= 0 || stage.cpu_duration.count == 0) return std::nullopt;
  const double bare_ns = bare_stage_s * 1e9 / static_cast<double>(bare_instances);
  const double profiled_ns = stage.cpu_duration.mean_ns;
  return detail::code(stage.qualified_name()) + " took " + detail::format_duration_ns(profiled_ns) +
         " per instance under the profiler vs " + detail::format_duration_ns(bare_ns) + " in the bare run (" +
         detail::format_number(profiled_ns / bare_ns) + "x): time figures carry the profiler's overhead";
}

}  // namespace llmprof
