// `deep-profile probe`: what Nsight tools this machine has, what they can do, and whether a run can go ahead.
#include <fstream>
#include <iostream>

#include "command.hpp"
#include "llmprof/process.hpp"
#include "llmprof/tool_probe.hpp"

namespace deep_profile {
namespace {

namespace po = boost::program_options;
using namespace llmprof;

const char* const probe_usage =
    "usage: deep-profile probe [--json] [--sections-out FILE] [--nsys PATH] [--ncu PATH] [--no-default-locations]\n\n"
    "Looks for nsys and ncu (the given path only, when --nsys/--ncu is set; otherwise PATH, then\n"
    "/usr/local/cuda/bin, /opt/nvidia/nsight-systems/*/bin, /opt/nvidia/nsight-compute/*, the nsys bundled\n"
    "in Nsight Compute at <ncu-root>/host/target-linux-x64/nsys, Debian's /usr/lib/nsight-systems and\n"
    "/usr/lib/nsight-compute, and the unpacked packages of scripts/install-nsight.sh in $LLMPROF_NSIGHT_DIR/root,\n"
    "default /opt/llmprof/nsight/root), runs their --version, nsys stats --help-reports, nsys status --environment,\n"
    "ncu --list-sections and --list-sets, reads ncu's section files, and checks that the QdstrmImporter loads.\n"
    "\n"
    "Exit status: 0 ready (both tools usable) or degraded (something is missing, the verdict says what will be\n"
    "skipped); 3 not ready (neither nsys nor ncu can be used) or --sections-out cannot be written; 2 bad\n"
    "command line.\n";

void print_searched(std::ostream& out, const std::vector<std::filesystem::path>& searched) {
  out << "    looked in (" << searched.size() << "):";
  if (searched.empty()) out << " nothing (empty PATH and no install locations)";
  out << "\n";
  for (const auto& place : searched) out << "      " << place.string() << "\n";
}

void print_version(std::ostream& out, const std::optional<ToolVersion>& version) {
  out << "    version: " << (version ? version->text : std::string("unknown")) << "\n";
}

void print_problems(std::ostream& out, const std::vector<std::string>& problems) {
  for (const auto& problem : problems) out << "    problem: " << problem << "\n";
}

void print_nsys(std::ostream& out, const NsysInfo& nsys) {
  out << "nsys (Nsight Systems): " << (nsys.found ? nsys.path.string() : std::string("not found")) << "\n";
  if (!nsys.found) {
    print_searched(out, nsys.searched);
    print_problems(out, nsys.problems);
    out << "    skipped: version, capabilities, environment checks and importer check\n";
    return;
  }
  print_version(out, nsys.version);
  out << "    report extension: " << (nsys.report_extension.empty() ? "unknown" : nsys.report_extension) << "\n";
  out << "    sqlite export: nsys export";
  for (const auto& argument : nsys.export_sqlite_arguments) out << " " << argument;
  out << "\n";
  out << "    importer: ";
  if (nsys.importer.path.empty()) {
    out << "not found (" << nsys.importer.detail << ")\n";
  } else {
    out << nsys.importer.path.string() << (nsys.importer.loads ? " (loads)" : " (DOES NOT LOAD)")
        << (nsys.importer.found_by_nsys ? "" : " (not where nsys looks: deep-profile imports .qdstrm files itself)")
        << "\n";
  }
  out << "    GPU-metrics sampling: ";
  if (nsys.gpu_metrics.available)
    out << "available (" << nsys.gpu_metrics.devices_option << "=" << nsys.gpu_metrics.devices << ", metric set "
        << (nsys.gpu_metrics.metric_set.empty() ? "nsys's default" : nsys.gpu_metrics.metric_set) << ")\n";
  else
    out << "not available: " << nsys.gpu_metrics.reason << "\n";
  for (const auto& device : nsys.gpu_metrics.listed) out << "      " << device << "\n";
  out << "    stats reports (" << nsys.stats_reports.size() << "):";
  for (const auto& report : nsys.stats_reports) out << " " << report;
  out << "\n";
  if (!nsys.importer.loads) {
    for (const auto& library : nsys.importer.missing_libraries) out << "      missing library: " << library << "\n";
    if (!nsys.importer.fix.empty()) out << "      fix: " << nsys.importer.fix << "\n";
  }
  if (!nsys.environment.empty()) out << "    environment (nsys status --environment):\n";
  for (const auto& check : nsys.environment) {
    out << "      [" << (check.ok ? "ok" : "!!") << "] " << check.name << ": " << check.value << "\n";
  }
  print_problems(out, nsys.problems);
}

void print_ncu(std::ostream& out, const NcuInfo& ncu) {
  out << "ncu (Nsight Compute): " << (ncu.found ? ncu.path.string() : std::string("not found")) << "\n";
  if (!ncu.found) {
    print_searched(out, ncu.searched);
    print_problems(out, ncu.problems);
    out << "    skipped: version, section and set listings\n";
    return;
  }
  print_version(out, ncu.version);
  out << "    sections (" << ncu.sections.size() << "):";
  for (const auto& section : ncu.sections) out << " " << section.identifier;
  out << "\n    sets (" << ncu.sets.size() << "):";
  for (const auto& set : ncu.sets) out << " " << set.identifier << "[" << set.sections.size() << "]";
  out << "\n    section files: "
      << (ncu.sections_directory.empty()
              ? "not found" + (ncu.sections_note.empty() ? std::string() : " (" + ncu.sections_note + ")")
              : ncu.sections_directory.string() + " (" + std::to_string(ncu.section_metrics.size()) + " metrics)")
      << "\n";
  print_problems(out, ncu.problems);
}

void print_abilities(std::ostream& out, const std::vector<ToolAbility>& abilities) {
  out << "what the pipeline can do here:\n";
  for (const auto& ability : abilities) {
    out << "  [" << (ability.able ? "yes" : "no ") << "] " << ability.what
        << (ability.detail.empty() ? "" : ": " + ability.detail) << "\n";
  }
}

void print_verdict(std::ostream& out, const ProbeVerdict& verdict) {
  out << "verdict: " << to_string(verdict.readiness) << "\n";
  for (const auto& reason : verdict.reasons) out << "  - " << reason << "\n";
  for (const auto& fix : verdict.fixes) out << "  fix: " << fix << "\n";
  for (const auto& stage : verdict.skipped) out << "  will skip: " << stage << "\n";
  for (const auto& note : verdict.notes) out << "  note: " << note << "\n";
}

int run_probe(const std::vector<std::string>& args) {
  std::string nsys_path, ncu_path, sections_out;
  CommandSyntax syntax("probe", probe_usage);
  syntax.options.add_options()("nsys", po::value(&nsys_path), "use this nsys (path or name on PATH)")(
      "ncu", po::value(&ncu_path), "use this ncu (path or name on PATH)")(
      "json", "print the probe as JSON (env.json's \"tools\")")(
      "sections-out", po::value(&sections_out), "write `ncu --list-sections` verbatim to FILE (sections.txt)")(
      "no-default-locations", "search only --nsys/--ncu and PATH, not the usual install directories");
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  const auto& values = line.values;
  auto runner = make_system_process_runner();
  ProbeOptions probe_options;
  probe_options.nsys_path = nsys_path;
  probe_options.ncu_path = ncu_path;
  probe_options.use_default_locations = values.count("no-default-locations") == 0;
  const ProbedTools tools = probe_tools(*runner, probe_options);
  const NsysInfo& nsys = tools.nsys;
  const NcuInfo& ncu = tools.ncu;
  const NvidiaDriver driver = detect_nvidia_driver();
  const ProbeVerdict verdict = assess_readiness(nsys, ncu, driver);
  if (!sections_out.empty()) {
    std::ofstream file(sections_out, std::ios::binary);
    file << ncu.sections_listing;
    if (!file) {
      std::cerr << "deep-profile probe: cannot write " << sections_out << "\n";
      return exit_not_ready;  // like every "cannot write": README exit codes
    }
    if (ncu.sections_listing.empty())
      std::cerr << "deep-profile probe: no ncu section listing; wrote an empty " << sections_out << "\n";
  }
  if (values.count("json")) {
    std::cout << probe_to_json(nsys, ncu, driver);
  } else {
    print_nsys(std::cout, nsys);
    print_ncu(std::cout, ncu);
    print_abilities(std::cout, describe_abilities(nsys, ncu));
    print_verdict(std::cout, verdict);
  }
  return verdict.readiness == Readiness::not_ready ? exit_not_ready : exit_ok;
}

const CommandRegistrar registrar{
    Command{"probe", "find nsys/ncu, their versions and capabilities; say whether this machine is ready", run_probe}};

}  // namespace
}  // namespace deep_profile
