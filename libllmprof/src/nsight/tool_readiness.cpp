// Readiness verdict over a probe, and the probe as JSON for env.json's "tools".
#include <boost/json.hpp>

#include "core/json_pretty.hpp"
#include "core/text.hpp"
#include "llmprof/choice.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof {
namespace json = boost::json;
namespace {

using detail::join;

std::string searched_summary(const std::vector<std::filesystem::path>& searched) {
  if (searched.empty()) return "nowhere (no PATH and no install locations)";
  std::vector<std::string> places;
  for (std::size_t i = 0; i < searched.size() && i < 6; ++i) places.push_back(searched[i].string());
  std::string text = join(places, ", ");
  if (searched.size() > 6) text += " and " + std::to_string(searched.size() - 6) + " more";
  return text;
}

// The stats reports the pipeline reads must be listed by `nsys stats --help-reports` under one of their
// two spellings; a tool without one fails here, before anything runs.
bool check_stats_reports(const NsysInfo& nsys, ProbeVerdict& verdict) {
  const std::string version = nsys.version->to_string();
  if (nsys.stats_reports.empty()) {
    verdict.reasons.push_back("nsys " + version +
                              " listed no stats reports (`nsys stats --help-reports`), so the "
                              "reports the pipeline reads cannot be checked");
    verdict.fixes.push_back("run `" + nsys.path.string() + " stats --help-reports` by hand to see why");
    return false;
  }
  const NsysStatsReportChoice choice = choose_nsys_stats_reports(nsys.stats_reports);
  for (const auto& missing : choice.missing) {
    std::string legacy;
    for (const auto& spelling : nsys_stats_report_spellings()) {
      if (spelling.current == missing) legacy = spelling.legacy;
    }
    verdict.reasons.push_back("nsys " + version + " has no report " + missing + " (nor its older name " + legacy +
                              "); need Nsight Systems 2022.4 or newer");
    verdict.fixes.push_back(
        "install Nsight Systems 2022.4 or newer (scripts/install-nsight.sh unpacks Debian's 2022.4.2), "
        "or point nsys.path at one");
  }
  return choice.missing.empty();
}

// A tool as a reader knows it, and how to get it when the probe did not find it.
struct ToolNamed {
  std::string_view described;
  std::string_view install;
};
constexpr ToolNamed kNsysNamed{"nsys (Nsight Systems)",
                               "install Nsight Systems (or Nsight Compute, which bundles nsys) and put nsys on PATH, "
                               "or pass --nsys /path/to/nsys"};
constexpr ToolNamed kNcuNamed{"ncu (Nsight Compute)",
                              "install Nsight Compute (the CUDA toolkit ships it as /usr/local/cuda/bin/ncu) "
                              "or pass --ncu /path/to/ncu"};

// The checks nsys and ncu share (Tool: NsysInfo or NcuInfo). Adds the reason and fix when the tool was not found;
// returns whether it was.
template <class Tool>
bool check_found(const Tool& tool, const ToolNamed& named, ProbeVerdict& verdict) {
  if (tool.found) return true;
  verdict.reasons.push_back(tool.problems.empty() ? std::string(named.described) + " was not found; looked in " +
                                                        searched_summary(tool.searched)
                                                  : tool.problems.front());
  verdict.fixes.emplace_back(named.install);
  return false;
}

// Adds the reason and fix when the version of a found tool could not be read; returns whether it was.
template <class Tool>
bool check_version_read(const Tool& tool, ProbeVerdict& verdict) {
  if (tool.version) return true;
  verdict.reasons.push_back("the version of " + tool.path.string() + " could not be read" +
                            (tool.problems.empty() ? "" : ": " + tool.problems.front()));
  verdict.fixes.push_back("run `" + tool.path.string() + " --version` by hand; the tool may not start on this machine");
  return false;
}

// Adds reasons for nsys; returns whether nsys can produce a report on this machine.
bool assess_nsys(const NsysInfo& nsys, ProbeVerdict& verdict) {
  if (!check_found(nsys, kNsysNamed, verdict)) return false;
  bool usable = check_version_read(nsys, verdict);
  if (!nsys.importer.loads) {
    std::string why = "the QdstrmImporter next to nsys does not work";
    if (!nsys.importer.missing_libraries.empty()) {
      why = "the QdstrmImporter " + nsys.importer.path.string() + " cannot load " +
            join(nsys.importer.missing_libraries, ", ");
    } else if (!nsys.importer.detail.empty()) {
      why += " (" + nsys.importer.detail + ")";
    }
    verdict.reasons.push_back(why + ", so nsys profile will leave only a .qdstrm file and no report");
    verdict.fixes.push_back(nsys.importer.fix);
    usable = false;
  }
  if (nsys.importer.loads && !nsys.importer.found_by_nsys) {
    verdict.notes.push_back("nsys will not find its QdstrmImporter " + nsys.importer.path.string() +
                            " (split install, e.g. Debian's) and will leave a .qdstrm; deep-profile imports it");
  }
  if (nsys.version && !check_stats_reports(nsys, verdict)) usable = false;
  for (const auto& check : nsys.environment) {
    if (!check.ok) verdict.notes.push_back("nsys status --environment: " + check.name + ": " + check.value);
  }
  return usable;
}

bool assess_ncu(const NcuInfo& ncu, ProbeVerdict& verdict) {
  if (!check_found(ncu, kNcuNamed, verdict)) return false;
  if (!check_version_read(ncu, verdict)) return false;
  if (ncu.sections.empty()) {
    verdict.notes.push_back("ncu listed no sections, so --section values cannot be checked before a run");
  }
  return true;
}

json::array strings(const std::vector<std::string>& items) {
  json::array array;
  for (const auto& item : items) array.emplace_back(item);
  return array;
}

json::array paths(const std::vector<std::filesystem::path>& items) {
  json::array array;
  for (const auto& item : items) array.emplace_back(item.string());
  return array;
}

json::value version_json(const std::optional<ToolVersion>& version) {
  if (!version) return nullptr;
  return json::object{{"number", version->to_string()}, {"text", version->text}};
}

json::object nsys_json(const NsysInfo& nsys) {
  json::array environment;
  for (const auto& check : nsys.environment) {
    environment.emplace_back(json::object{{"name", check.name}, {"value", check.value}, {"ok", check.ok}});
  }
  const auto& importer = nsys.importer;
  return json::object{
      {"found", nsys.found},
      {"path", nsys.path.string()},
      {"searched", paths(nsys.searched)},
      {"version", version_json(nsys.version)},
      {"report_extension", nsys.report_extension},
      {"export_sqlite_arguments", strings(nsys.export_sqlite_arguments)},
      {"environment", std::move(environment)},
      {"importer", json::object{{"path", importer.path.string()},
                                {"loads", importer.loads},
                                {"missing_libraries", strings(importer.missing_libraries)},
                                {"detail", importer.detail},
                                {"fix", importer.fix},
                                {"found_by_nsys", importer.found_by_nsys}}},
      {"stats_reports", strings(nsys.stats_reports)},
      {"problems", strings(nsys.problems)},
  };
}

json::object ncu_json(const NcuInfo& ncu) {
  json::array sections;
  for (const auto& section : ncu.sections) sections.emplace_back(section.identifier);
  json::array sets;
  for (const auto& set : ncu.sets) {
    sets.emplace_back(json::object{{"identifier", set.identifier},
                                   {"sections", strings(set.sections)},
                                   {"enabled_by_default", set.enabled_by_default}});
  }
  return json::object{
      {"found", ncu.found},
      {"path", ncu.path.string()},
      {"searched", paths(ncu.searched)},
      {"version", version_json(ncu.version)},
      {"sections", std::move(sections)},
      {"sets", std::move(sets)},
      {"sections_directory", ncu.sections_directory.string()},
      {"sections_note", ncu.sections_note},
      {"section_metric_count", ncu.section_metrics.size()},
      {"problems", strings(ncu.problems)},
  };
}

}  // namespace

// Readiness's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(Readiness) noexcept {
  static constexpr std::string_view names[] = {"ready", "degraded", "not ready"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(Readiness readiness) noexcept { return choice_name(readiness).data(); }

ProbeVerdict assess_readiness(const NsysInfo& nsys, const NcuInfo& ncu, const NvidiaDriver& driver) {
  ProbeVerdict verdict;
  const bool nsys_usable = assess_nsys(nsys, verdict);
  const bool ncu_usable = assess_ncu(ncu, verdict);
  if (!nsys_usable) verdict.skipped.push_back("nsys timeline (stage 2) and the kernel selection that needs it");
  if (!ncu_usable) verdict.skipped.push_back("ncu kernel metrics (stage 3)");
  if (!driver.present) {
    // ncu 2022.3 and 2025.3.1 both end with "failed to connect to the CUDA driver" without one, and nsys
    // records NVTX and the CUDA API but no kernel.
    verdict.reasons.push_back("no NVIDIA GPU driver: " + driver.evidence +
                              "; nsys can trace only the host side (NVTX ranges, CUDA API calls) and ncu cannot "
                              "profile kernels");
    verdict.fixes.push_back("run on a machine with an NVIDIA GPU and its driver loaded (`nvidia-smi` must work)");
    if (nsys_usable) verdict.skipped.push_back("kernel selection (no kernels in a GPU-less timeline)");
    if (ncu_usable) verdict.skipped.push_back("ncu kernel metrics (stage 3): no GPU to profile");
  }
  if (!nsys_usable && !ncu_usable) {
    verdict.readiness = Readiness::not_ready;
  } else if (!nsys_usable || !ncu_usable || !verdict.reasons.empty()) {
    verdict.readiness = Readiness::degraded;
  } else {
    verdict.readiness = Readiness::ready;
  }
  return verdict;
}

std::string probe_to_json(const NsysInfo& nsys, const NcuInfo& ncu, const NvidiaDriver& driver) {
  const ProbeVerdict verdict = assess_readiness(nsys, ncu, driver);
  json::array abilities;
  for (const auto& ability : describe_abilities(nsys, ncu)) {
    abilities.emplace_back(json::object{{"what", ability.what}, {"able", ability.able}, {"detail", ability.detail}});
  }
  const json::object root = {
      {"nvidia_driver", json::object{{"present", driver.present}, {"evidence", driver.evidence}}},
      {"abilities", std::move(abilities)},
      {"nsys", nsys_json(nsys)},
      {"ncu", ncu_json(ncu)},
      {"verdict", json::object{{"readiness", to_string(verdict.readiness)},
                               {"reasons", strings(verdict.reasons)},
                               {"fixes", strings(verdict.fixes)},
                               {"skipped", strings(verdict.skipped)},
                               {"notes", strings(verdict.notes)}}},
  };
  return detail::pretty_json(root);
}

}  // namespace llmprof
