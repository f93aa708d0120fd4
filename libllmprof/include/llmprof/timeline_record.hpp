// The timeline's records: per NVTX range instance and per stage, what the CPU did and what the GPU
// work it launched did. The timeline engine (llmprof/timeline.hpp) fills them from the nsys SQLite
// export; analysis/report.json holds them under "timeline" through one field table per record, and the
// report reads them back as these same records (llmprof/report_model.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"

namespace llmprof {

// Count, total, mean and nearest-rank percentiles of per-instance values, in ns.
struct LLMPROF_API DurationSummary {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  double mean_ns = 0;
  std::int64_t p50_ns = 0;
  std::int64_t p90_ns = 0;
  std::int64_t p99_ns = 0;
  std::int64_t max_ns = 0;
};

// GPU idle time inside a window, by what the launching host thread was doing meanwhile.
struct LLMPROF_API IdleAttribution {
  std::int64_t host_launching_ns = 0;    // in the call that launched the next work, or that work queued
  std::int64_t host_in_sync_ns = 0;      // in a synchronise call (stream/device/event) or synchronous copy
  std::int64_t nothing_launched_ns = 0;  // host elsewhere (Python, scheduling, sampling): nothing submitted
  std::int64_t total_ns() const { return host_launching_ns + host_in_sync_ns + nothing_launched_ns; }
};

// Launches made inside a range and whether the GPU work they started was recorded.
struct LLMPROF_API CaptureLoss {
  std::int64_t launches = 0;  // kernel, copy, set and graph launch calls
  std::int64_t launches_without_record = 0;
  std::int64_t graph_launches = 0;
  std::int64_t graph_launches_without_record = 0;
};

struct LLMPROF_API TimelineInstance {
  std::int64_t cpu_start_ns = 0;
  std::int64_t cpu_end_ns = 0;
  std::int64_t thread = 0;
  std::optional<std::int64_t> gpu_start_ns;  // first GPU activity it launched
  std::optional<std::int64_t> gpu_end_ns;    // last end of that work
  std::int64_t gpu_busy_ns = 0;              // union of its GPU activity intervals
  std::int64_t gpu_activities = 0;
  std::int64_t graph_executions = 0;  // graph executions recorded (one per graph launch)
  std::int64_t graph_time_ns = 0;     // summed duration of graph executions and graph nodes
  std::int64_t gpu_time_ns = 0;       // summed duration of every activity
  std::int64_t launch_api_ns = 0;     // inside launch calls on its thread
  std::int64_t sync_api_ns = 0;       // inside synchronise calls on its thread
  IdleAttribution idle;               // over its window
  CaptureLoss loss;

  std::int64_t cpu_duration_ns() const { return cpu_end_ns - cpu_start_ns; }
  // From its CPU start to the later of its CPU end and its last GPU end.
  std::int64_t window_ns() const {
    return (gpu_end_ns && *gpu_end_ns > cpu_end_ns ? *gpu_end_ns : cpu_end_ns) - cpu_start_ns;
  }
  bool partial() const { return loss.launches_without_record > 0; }
};

struct LLMPROF_API TimelineKernel {
  std::string name;
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  bool from_graph = false;  // launched as a graph node (traced with --cuda-graph-trace=node)
};

// Predicted step time if the launch overhead were gone: the steady-state GPU busy per instance.
struct LLMPROF_API Headroom {
  double current_step_ns = 0;        // mean window of the steady-state instances
  double predicted_step_ns = 0;      // mean GPU busy of the same instances
  double speedup = 0;                // current / predicted
  double predicted_steps_per_s = 0;  // tokens/s at one token per step (batch 1)
};

// Consecutive CUDA graph replays of a stage and the gaps between them. A replay is one graph execution (traced
// whole) or the nodes of one graph launch call (traced per node). A pair is two consecutive graph launches of one
// thread whose GPU work was both recorded, so a replay the capture lost never makes its neighbours look adjacent.
struct LLMPROF_API GraphReplayGaps {
  std::int64_t replays = 0;  // replays recorded
  DurationSummary gap;       // per pair: the next replay's GPU start - the previous one's GPU end (0 if they overlap)
  // Summed over pairs: the part of each gap before the host called the next replay (the GPU waited on host work
  // between steps); the rest lies between that call and the replay's GPU start (launch latency).
  std::int64_t gap_before_launch_ns = 0;
  DurationSummary host_between_launches;  // per pair: the next launch call's start - the previous call's end
  DurationSummary replay_gpu;             // per replay: its first GPU start to its last GPU end
};

struct LLMPROF_API TimelineStage {
  std::string name;
  std::string domain;                 // empty for the default domain
  std::optional<std::string> parent;  // qualified name of the enclosing stage (first instance)
  int level = 0;
  // The library that emits this range (CCCL, PyTorch, ...: llmprof/library_ranges.hpp), empty for a range of the
  // workload's own. A library range is listed but never the main stage, a gate, a step kind or discovery's choice.
  std::string library;
  std::vector<TimelineInstance> instances;    // in CPU start order
  // Instances report.json leaves out (the last ones; analysis/instances.csv has every one): set when a
  // stage is read back from report.json, whose `instances` then holds only those kept.
  std::int64_t instances_omitted = 0;
  DurationSummary cpu_duration;               // per instance, all instances
  DurationSummary steady_cpu_duration;        // per instance, steady state
  DurationSummary steady_gpu_busy;            // per instance, steady state and recorded only
  std::vector<std::size_t> warmup_instances;  // 0-based indices set aside as warm-up
  std::string steady_state_note;              // which instances the steady-state figures use, and why
  std::int64_t span_ns = 0;                   // first CPU start -> later of last CPU end and last GPU end
  // The part of the span covered by some instance's window (CPU start -> later of CPU end and GPU end):
  // the span less the gaps between instances, which for a stage like `sample` (short instances spread
  // over the whole decode) is most of it. The busy fraction's denominator.
  std::int64_t active_ns = 0;
  std::int64_t gpu_busy_ns = 0;  // union of every instance's GPU work
  std::int64_t gpu_span_ns = 0;  // first GPU start -> last GPU end (0 without GPU work)
  std::int64_t gpu_time_ns = 0;
  std::int64_t graph_time_ns = 0;
  // Summed duration of the collective (NCCL) kernels launched inside it: time that includes waiting
  // for other ranks, so a stage busy mostly with them is not GPU-bound in the sense of its own kernels.
  std::int64_t collective_time_ns = 0;
  std::int64_t graph_executions = 0;
  std::int64_t launch_api_ns = 0;
  std::int64_t sync_api_ns = 0;
  std::optional<double> gpu_busy_fraction;  // gpu_busy_ns / active_ns; withheld for a partial capture
  // Summed over instances; windows of consecutive instances overlap when GPU work lags behind the host,
  // so read it as shares of idle time, not as a part of the span.
  IdleAttribution idle;
  CaptureLoss loss;
  std::optional<Headroom> headroom;     // host-bound stages with recorded steady-state work
  std::optional<GraphReplayGaps> graph_replays;  // stages with at least one pair of consecutive graph replays
  std::vector<TimelineKernel> kernels;  // by total time, descending
  std::string verdict;

  std::string qualified_name() const { return domain.empty() ? name : domain + ":" + name; }
  bool is_library() const { return !library.empty(); }
  bool partial() const { return loss.launches_without_record > 0; }
  bool mostly_graphs() const { return gpu_time_ns > 0 && 2 * graph_time_ns >= gpu_time_ns; }
};

// What a reader should know before trusting the figures: work the capture lost or could not see.
struct LLMPROF_API MeasurementValidity {
  std::vector<std::string> capture_losses;  // one sentence per stage with unrecorded GPU work, with what to do
  std::optional<std::string> graph_hidden;  // graph executions whose kernels the capture does not list
  bool empty_capture = false;               // no GPU activity recorded at all
  bool partial_capture = false;
  std::vector<std::string> notes;  // e.g. profiler slowdown vs the bare run
};

struct LLMPROF_API TimelineReport {
  std::string source;        // the SQLite file
  std::string nsys_version;  // from the export's metadata
  std::string schema_version;
  std::string graph_trace;            // "graph" (one row per execution), "node" (graph kernels), "none seen"
  // CUDA was not traced (nsys.trace without "cuda", as the sampled preset captures; or an export with a GPU's
  // sampled counters and no CUDA call): a stage without GPU work is unmeasured, not CPU-only, and the sampled
  // counters are attributed over the ranges' CPU time.
  bool cuda_untraced = false;
  std::vector<TimelineStage> stages;  // outermost first, then by first start
  std::int64_t gpu_activities = 0;
  // Summed duration of every GPU activity the capture recorded (every process and thread, in a range or not): the
  // window's GPU time that a step kind's share is of (llmprof/step_kinds.hpp).
  std::int64_t gpu_time_ns = 0;
  std::int64_t unattributed_gpu_activities = 0;  // launched outside every range, or no launch call recorded
  std::int64_t unclosed_ranges = 0;
  // Which ranges never closed, by name: "`decode` x1" (the workload left it open at exit, or the capture ended
  // inside it). nsys stats ends such a range at the export's last NVTX timestamp; the timeline leaves it out.
  std::vector<std::string> unclosed_range_names;
  MeasurementValidity validity;
  std::vector<std::string> warnings;

  const TimelineStage* find_stage(std::string_view qualified_name) const {
    for (const auto& stage : stages)
      if (stage.qualified_name() == qualified_name) return &stage;
    return nullptr;
  }
};

}  // namespace llmprof
