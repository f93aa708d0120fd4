// deep-profile analyze MAIN [--stage decode] [--top N] [--name-base demangled|function] [--gated] [--json]:
// re-runs the analysis of an existing run directory into MAIN/analysis/ and prints a short summary.
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/run_layout.hpp"

namespace deep_profile {
namespace po = boost::program_options;
namespace {

const char* usage_text =
    "usage: deep-profile analyze MAIN [--stage decode] [--top N] [--name-base demangled|function] [--gated] [--json]\n\n"
    "Reads MAIN/nsys/summary_<report>.csv, MAIN/ncu/raw.csv and MAIN/stage1/metrics.json (any of them may be\n"
    "missing) and writes MAIN/analysis/{kernels.csv,stages.csv,report.json}. --json prints report.json instead\n"
    "of the summary.\n\n"
    "exit codes: 0 written; 2 bad command line; 4 MAIN missing, empty or holding an unparsable input;\n"
    "3 the analysis directory cannot be written.\n";

std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%%", *fraction * 100.0);
  return text;
}

void print_summary(std::ostream& out, const llmprof::AnalysisReport& report, const std::filesystem::path& directory) {
  out << "device: " << (report.device.name.empty() ? "unknown" : report.device.name) << "\n";
  out << "stages:\n";
  for (const auto& stage : report.stages) {
    out << "  " << std::string(static_cast<std::size_t>(stage.level) * 2, ' ') << stage.qualified_name()
        << ": GPU busy " << percent(stage.gpu_busy_fraction) << ", " << stage.kernel_instances << " kernels, MFU "
        << percent(stage.mfu) << " (workload: " << percent(stage.mfu_workload) << ")\n"
        << "  " << std::string(static_cast<std::size_t>(stage.level) * 2, ' ') << "  " << stage.verdict << "\n";
  }
  out << "top kernels:\n";
  for (std::size_t i = 0; i < report.kernels.size() && i < 5; ++i) {
    const auto& kernel = report.kernels[i];
    out << "  " << percent(kernel.share_of_total) << "  x" << kernel.instances << "  "
        << (kernel.bound ? llmprof::to_string(*kernel.bound) : "-") << "  " << kernel.name.substr(0, 100) << "\n";
  }
  if (report.top_kernel_selection) {
    out << "ncu selection for " << report.top_kernel_selection->stage << ": coverage "
        << percent(report.top_kernel_selection->coverage) << ", --launch-count "
        << report.top_kernel_selection->launch_count << "\n";
  }
  for (const auto& warning : report.warnings) out << "warning: " << warning << "\n";
  for (const auto& skipped : report.skipped) out << "skipped: " << skipped << "\n";
  out << "wrote " << (directory / llmprof::RunLayout::analysis_kernels().filename()).string() << ", "
      << llmprof::RunLayout::analysis_stages().filename().string() << ", "
      << llmprof::RunLayout::analysis_report().filename().string() << "\n";
}

int run_analyze(const std::vector<std::string>& args) {
  std::string main;
  std::string name_base = "demangled";
  llmprof::AnalysisOptions options;
  CommandSyntax syntax("analyze", usage_text);
  syntax.options.add_options()(
      "stage", po::value(&options.selection_stage)->default_value("decode"), "stage for the top-kernel selection")(
      "top", po::value(&options.top_n)->default_value(5), "kernels in the top-kernel selection")(
      "name-base", po::value(&name_base)->default_value("demangled"), "demangled or function (ncu --kernel-name-base)")(
      "gated", po::bool_switch(&options.capture_gated_on_stage), "the nsys capture was gated on --stage")(
      "json", "print report.json instead of the summary");
  syntax.hidden.add_options()("main", po::value(&main));
  syntax.positional.add("main", 1);
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  if (main.empty()) return usage_error(syntax, "MAIN is required");
  const auto parsed_name_base = llmprof::parse_choice<llmprof::KernelNameBase>(name_base);
  if (!parsed_name_base || options.top_n == 0) return usage_error(syntax, "bad --name-base or --top");
  options.name_base = *parsed_name_base;

  auto report = llmprof::analyze_run_directory(main, options);
  if (!report) {
    std::cerr << "deep-profile analyze: " << report.error().describe() << "\n";
    return exit_code_for(report.error());
  }
  const auto directory = llmprof::RunLayout(main).resolve(llmprof::RunLayout::analysis_directory());
  if (auto written = llmprof::write_analysis(*report, directory); !written) {
    std::cerr << "deep-profile analyze: " << written.error().describe() << "\n";
    return exit_code_for(written.error());
  }
  if (line.values.count("json") != 0) {
    std::cout << llmprof::analysis_report_json(*report);
  } else {
    print_summary(std::cout, *report, directory);
  }
  return exit_ok;
}

const CommandRegistrar registrar{{"analyze", "analyse an existing run directory into MAIN/analysis/", run_analyze}};

}  // namespace
}  // namespace deep_profile
