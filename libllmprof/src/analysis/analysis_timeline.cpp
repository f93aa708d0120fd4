// The timeline's place in the analysis: where both know a stage, the timeline's verdict wins, because
// the nsys summaries behind the other one cannot see graph executions (--cuda-graph-trace=graph) and
// measure busy over the GPU projection instead of the time the stage took (nsys 2025.3, the H100 CUDA-graph
// decodes of examples/graphs-h100).
#include "analysis/analysis_model.hpp"

namespace llmprof::detail {

void apply_timeline(const TimelineReport& timeline, AnalysisReport& report) {
  report.timeline = timeline;
  for (auto& stage : report.stages) {
    const TimelineStage* timed = timeline.find_stage(stage.qualified_name());
    if (timed == nullptr) continue;
    // Without CUDA trace no kernel was recorded, which says nothing about whether any ran: not "no GPU kernels ran".
    if (timeline.cuda_untraced && timed->gpu_time_ns == 0) {
      stage.verdict = timed->verdict;
      continue;
    }
    if (timed->gpu_time_ns == 0 && timed->loss.launches == 0) continue;
    stage.gpu_busy_fraction = timed->gpu_busy_fraction;  // withheld (null) for a partial capture
    stage.verdict = timed->verdict;
    // The GPU-active time (per instance: CPU start to the later of CPU end and last GPU end) encloses the
    // GPU work the stage launched, which its CPU range time does not under CUDA graphs; a partial capture
    // lost some of that work, so its time is no better than the wall's.
    const bool outlasts_wall = !stage.wall_ns || timed->active_ns > *stage.wall_ns;
    if (!timed->partial() && timed->active_ns >= stage.kernel_time_ns.value_or(0) && outlasts_wall && timed->active_ns > 0) {
      stage.rate_time_ns = timed->active_ns;
      stage.rate_time_source = "GPU-active time (nsys/profile.sqlite: per instance, CPU start to the later of CPU end "
                               "and the end of the GPU work it launched)";
      stage.rate_time_note.clear();
    }
  }
  for (auto& range : report.nvtx_ranges) {
    const TimelineStage* timed =
        timeline.find_stage(range.domain.empty() ? range.name : range.domain + ":" + range.name);
    if (timed == nullptr || timed->cpu_duration.count != range.instances) continue;
    range.p99_ns = static_cast<double>(timed->cpu_duration.p99_ns);
    range.source = "nsys nvtx_sum; p99 from the SQLite export's instances";
  }
  for (const auto& loss : timeline.validity.capture_losses) report.warnings.push_back(loss);
  if (timeline.validity.graph_hidden && report.node_capture) {
    // The kernels are no longer hidden: the node-traced capture lists them, so this is a note, not a warning.
    std::int64_t executions = 0;
    for (const auto& stage : timeline.stages)
      if (stage.level == 0) executions += stage.graph_executions;
    report.timeline->validity.graph_hidden.reset();
    report.timeline->validity.notes.push_back(
        std::to_string(executions) +
        " CUDA graph executions were recorded whole in this capture (--cuda-graph-trace=graph) and count as GPU "
        "work in its busy figures; their kernels are listed from the node-traced capture (" +
        report.node_capture->kernel_tables + ")");
  } else if (timeline.validity.graph_hidden) {
    report.warnings.push_back(*timeline.validity.graph_hidden);
  }
  // Profiler slowdown: the profiled decode range against the bare stage-1 decode of the same workload.
  if (report.workload && report.workload->decode_s > 0) {
    if (const TimelineStage* decode = timeline.find_stage("decode")) {
      if (auto note = profiler_slowdown_note(*decode, report.workload->decode_s, 1))
        report.timeline->validity.notes.push_back(*note);
    }
  }
}

}  // namespace llmprof::detail
