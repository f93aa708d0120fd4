// Derived views for the report renderers (see report_view.hpp).
#include "report/report_view.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "report/report_capture_scope.hpp"

namespace llmprof::detail {

std::string stage_label(const ReportStage& stage) {
  std::string label = stage.domain.empty() ? stage.name : stage.domain + ":" + stage.name;
  if (stage.parent && !stage.parent->empty()) label += " (in " + *stage.parent + ")";
  if (!stage.library.empty()) label += " [library range: " + stage.library + "]";
  return label;
}

std::string device_line(const RunReportModel& model) {
  std::string line;
  if (!model.environment.gpus.empty()) {
    for (const auto& gpu : model.environment.gpus) {
      if (!line.empty()) line += "; ";
      line += "GPU " + std::to_string(gpu.index) + ": " + gpu.name;
      if (!gpu.driver.empty()) line += " · driver " + gpu.driver;
    }
  } else if (!model.device.name.empty()) {
    line = model.device.name;
  } else {
    line = "not recorded";
  }
  if (!model.environment.host.empty()) line += " · host " + model.environment.host;
  return line;
}

std::string peaks_line(const ReportDevice& device) {
  std::string line = device.name.empty() ? "" : device.name + ": ";
  bool first = true;
  for (const auto& [precision, peak] : device.peak_flop_per_s) {
    line += (first ? "" : " · ") + precision + " " + format_si(peak, "FLOP/s");
    first = false;
  }
  if (device.peak_dram_bytes_per_s)
    line += std::string(first ? "" : " · ") + "DRAM " + format_si(device.peak_dram_bytes_per_s, "B/s");
  if (device.peak_flop_per_s.empty() && !device.peak_dram_bytes_per_s) line += "not computed (no ncu data)";
  return line;
}

std::string tools_line(const RunReportModel& model) {
  std::string line;
  for (const auto& [tool, version] : model.environment.tool_versions) {
    if (!line.empty()) line += " · ";
    line += tool + " " + version;
  }
  return line.empty() ? "not recorded" : line;
}

std::string kernel_precision(const ReportKernel& kernel, const ReportDevice& device) {
  if (kernel.precision && !kernel.precision->empty()) return *kernel.precision;
  if (!kernel.achieved_flop_per_s || !kernel.pct_peak_compute || *kernel.pct_peak_compute <= 0 ||
      *kernel.achieved_flop_per_s <= 0) {
    return {};
  }
  const double implied_peak = *kernel.achieved_flop_per_s / (*kernel.pct_peak_compute / 100);
  std::string best;
  double best_distance = 0.05;  // within ~12%: further than that, we would be guessing
  for (const auto& [precision, peak] : device.peak_flop_per_s) {
    const double distance = std::fabs(std::log10(implied_peak / peak));
    if (distance < best_distance) {
      best_distance = distance;
      best = precision;
    }
  }
  return best;
}

std::vector<RooflineGroup> roofline_groups(const RunReportModel& model) {
  std::vector<RooflineGroup> groups;
  for (std::size_t i = 0; i < model.kernels.size(); ++i) {
    const auto& kernel = model.kernels[i];
    if (!kernel.arithmetic_intensity || !kernel.achieved_flop_per_s || *kernel.arithmetic_intensity <= 0 ||
        *kernel.achieved_flop_per_s <= 0) {
      continue;
    }
    const std::string precision = kernel_precision(kernel, model.device);
    auto found =
        std::find_if(groups.begin(), groups.end(), [&](const auto& group) { return group.precision == precision; });
    if (found == groups.end()) {
      groups.push_back({precision, {}});
      found = groups.end() - 1;
    }
    found->kernel_indices.push_back(i);
  }
  // Charts in the device's precision order; unknown precision last.
  auto rank = [&](const std::string& precision) {
    for (std::size_t i = 0; i < model.device.peak_flop_per_s.size(); ++i) {
      if (model.device.peak_flop_per_s[i].first == precision) return i;
    }
    return model.device.peak_flop_per_s.size();
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const auto& a, const auto& b) { return rank(a.precision) < rank(b.precision); });
  return groups;
}

std::vector<const ReportStage*> leaf_stages(const RunReportModel& model) {
  std::vector<const ReportStage*> leaves;
  for (const auto& stage : model.stages) {
    const bool has_child = std::any_of(model.stages.begin(), model.stages.end(), [&](const ReportStage& other) {
      return other.parent && *other.parent == stage.name && other.domain == stage.domain;
    });
    if (!has_child) leaves.push_back(&stage);
  }
  return leaves;
}

}  // namespace llmprof::detail

namespace llmprof {

std::string describe_kernel_selection(const KernelSelection& selection, const SelectionCoverageNotes& notes) {
  using detail::format_fraction_percent;
  std::string text = "Kernels profiled with ncu: ";
  const std::string count = std::to_string(selection.n);
  if (notes.figures_withheld) {
    // A figure broke its bound on reading: the kernels are known, the coverage is not.
    return text + count + " of stage " + selection.stage + "; their coverage of its kernel time is withheld (see the "
           "warnings).";
  }
  if (const auto target = selection.coverage_target) {
    text += count + " of stage " + selection.stage + " (target " + format_fraction_percent(target) +
            (selection.capped ? ", stopped by the kernel cap" : "") + "), covering " +
            format_fraction_percent(selection.coverage) + " of its kernel time";
  } else {
    text += "the top " + count + " of stage " + selection.stage + ", covering " +
            format_fraction_percent(selection.coverage) + " of its kernel time";
  }
  if (notes.ncu_measured && notes.ncu_extrapolated)
    text += "; with ncu data: measured " + format_fraction_percent(notes.ncu_measured) + ", extrapolated " +
            format_fraction_percent(notes.ncu_extrapolated) + " (configurations ncu did not profile, from the "
            "same kernel's profiled ones)";
  if (notes.listed_share_of_gpu_time) {
    // A graph-traced capture lists only kernels launched outside CUDA graphs: the coverage is of those.
    text += " (the kernels the capture lists, which are " + detail::share_text(*notes.listed_share_of_gpu_time) +
            " of its recorded GPU time: the rest ran inside CUDA graph executions whose kernels are not listed)";
  }
  std::string more;
  for (const auto& step : selection.more_coverage) {
    if (!more.empty()) more += ", ";
    if (!step.reachable) {
      more += format_fraction_percent(step.target) + " out of reach";
    } else {
      more += std::to_string(step.more_kernels) +
              (more.empty() ? (step.more_kernels == 1 ? " more kernel" : " more kernels") : " more") + " for " +
              format_fraction_percent(step.target);
    }
  }
  if (!more.empty()) text += "; " + more;
  text += ".";
  if (const std::size_t collectives = selection.collective_count(); collectives > 0) {
    text += " " + std::to_string(collectives) + (collectives == 1 ? " collective kernel" : " collective kernels") +
            " (" + format_fraction_percent(selection.collective_share) +
            " of the stage's kernel time) left out: ncu replays kernels serially and a collective would wait for its "
            "peers.";
  }
  return text;
}

}  // namespace llmprof
