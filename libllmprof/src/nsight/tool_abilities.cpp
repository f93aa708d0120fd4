// What the pipeline can do with the probed tools: the nsys stats reports it needs (under either of their
// spellings), the importer, and the metrics ncu's sections collect. Feeds `deep-profile probe` and the
// readiness verdict.
#include <algorithm>

#include "core/text.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof {
namespace {

bool has_metric_with_prefix(const NcuInfo& ncu, const std::string& prefix) {
  return std::any_of(ncu.section_metrics.begin(), ncu.section_metrics.end(),
                     [&](const std::string& metric) { return metric.rfind(prefix, 0) == 0; });
}

ToolAbility nsys_reports_ability(const NsysInfo& nsys) {
  const NsysStatsReportChoice choice = choose_nsys_stats_reports(nsys.stats_reports);
  if (nsys.stats_reports.empty()) return {"nsys stats tables", false, "`nsys stats --help-reports` listed nothing"};
  if (!choice.missing.empty()) {
    return {"nsys stats tables", false,
            "this nsys has no report " + detail::join(choice.missing, ", ") + " (under either spelling)"};
  }
  return {"nsys stats tables", true,
          detail::join(choice.names, ", ") + (choice.legacy ? " (the 2022.4 names; read into the same tables)" : "")};
}

ToolAbility importer_ability(const NsysInfo& nsys) {
  const ImporterHealth& importer = nsys.importer;
  if (importer.path.empty()) return {"import a .qdstrm into a report", false, importer.detail};
  if (!importer.loads)
    return {"import a .qdstrm into a report", false, importer.path.string() + " does not load: " + importer.fix};
  if (!importer.found_by_nsys) {
    return {"import a .qdstrm into a report", true,
            "nsys will not find " + importer.path.string() +
                " (split install) and will leave a .qdstrm; "
                "deep-profile imports it with that importer and records the command in nsys/cmd.txt"};
  }
  return {"import a .qdstrm into a report", true, "nsys finds " + importer.path.string() + " itself"};
}

}  // namespace

std::vector<ToolAbility> describe_abilities(const NsysInfo& nsys, const NcuInfo& ncu) {
  std::vector<ToolAbility> abilities;
  if (nsys.found) {
    abilities.push_back({"NVTX-gated timeline (nsys profile --capture-range=nvtx)", nsys.version.has_value(),
                         nsys.version ? "nsys " + nsys.version->to_string() : "the version could not be read"});
    abilities.push_back(nsys_reports_ability(nsys));
    abilities.push_back(importer_ability(nsys));
  } else {
    abilities.push_back({"timeline, NVTX stage table, kernel selection", false, "no nsys"});
  }
  const NvidiaDriver driver = detect_nvidia_driver();
  abilities.push_back({"CUDA kernels in the timeline and in ncu", driver.present, driver.evidence});
  if (!ncu.found) {
    abilities.push_back({"per-kernel metrics (ncu)", false, "no ncu"});
    return abilities;
  }
  const bool roofline_set = ncu.has_set("roofline");
  // The default ncu.set, "llmprof", is libllmprof's own section file; roofline is the ncu set it stands in for.
  abilities.push_back({"ncu set \"roofline\" (ncu.set = \"roofline\", the GUI's sections)", roofline_set,
                       roofline_set ? "listed by ncu --list-sets"
                                    : "ncu --list-sets has no roofline set; keep ncu.set = \"llmprof\" or set one it lists"});
  if (ncu.section_metrics.empty()) {
    abilities.push_back({"roofline metrics in the sections", false,
                         ncu.sections_note.empty() ? "no section files were read"
                                                   : "no section files were read: " + ncu.sections_note});
    return abilities;
  }
  const bool memory = has_metric_with_prefix(ncu, "dram__bytes");
  const bool scalar_flop = has_metric_with_prefix(ncu, "sm__sass_thread_inst_executed_op_") ||
                           has_metric_with_prefix(ncu, "smsp__sass_thread_inst_executed_op_");
  abilities.push_back({"roofline: DRAM bytes and FP16/FP32/FP64 FLOP per kernel", memory && scalar_flop,
                       std::string(memory ? "" : "no dram__bytes metric; ") +
                           (scalar_flop ? "" : "no sm__sass_thread_inst_executed_op_* metric; ") + "from " +
                           ncu.sections_directory.string()});
  const bool tensor = has_metric_with_prefix(ncu, "sm__ops_path_tensor_");
  abilities.push_back({"tensor-core FLOP per kernel (profiled MFU)", tensor,
                       tensor ? "sm__ops_path_tensor_* metrics are collected"
                              : "no section collects sm__ops_path_tensor_* (ncu 2022.3 counts tensor instructions, not "
                                "FLOP); MFU (workload) from the model's own FLOP still works"});
  return abilities;
}

}  // namespace llmprof
