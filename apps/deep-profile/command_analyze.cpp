// deep-profile analyze MAIN [--stage S] [--top N] [--name-base demangled|function] [--gated] [--json]:
// re-runs the analysis of an existing run directory, as it was profiled, into MAIN/analysis/.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/percent.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/rank_analysis.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/run_layout.hpp"

namespace deep_profile {
namespace po = boost::program_options;
namespace {

const char* usage_text =
    "usage: deep-profile analyze MAIN [--stage S] [--top N] [--name-base demangled|function] [--gated] [--json]\n\n"
    "Re-analyses MAIN as it was profiled (its config.toml and nsys capture); an option given here overrides\n"
    "that, and the report says so. Reads MAIN/nsys/summary_<report>.csv, MAIN/ncu/raw.csv and\n"
    "MAIN/stage1/metrics.json (any of them may be missing) and writes MAIN/analysis/{kernels.csv,stages.csv,\n"
    "report.json}; report.json holds the verdict (the headline and ranked levers) the report opens with.\n"
    "--json prints report.json instead of the summary. A run made under a launcher (MAIN/ranks/)\n"
    "also gets MAIN/analysis/ranks.{csv,md} from every rank's files, and the single-rank figures come from\n"
    "the rank ncu profiled (MAIN/ranks/r<k>/).\n\n"
    "exit codes: 0 written; 2 bad command line; 4 MAIN missing, empty or holding an unparsable input;\n"
    "3 the analysis directory cannot be written.\n";

// Three significant digits: the summary is read against thresholds (coverage targets); "n/a" where missing.
std::string percent(const std::optional<double>& fraction) {
  return fraction ? llmprof::format_fraction_percent(fraction, llmprof::PercentDigits::three_significant) : "n/a";
}

void print_summary(std::ostream& out, const llmprof::AnalysisReport& report, const std::filesystem::path& directory) {
  out << "device: " << (report.device.name.empty() ? "unknown" : report.device.name) << "\n";
  out << "stages:\n";
  for (const auto& stage : report.stages) {
    out << "  " << std::string(static_cast<std::size_t>(stage.level) * 2, ' ') << stage.qualified_name()
        << ": GPU busy " << percent(stage.gpu_busy_fraction) << ", "
        << (stage.kernel_instances ? std::to_string(*stage.kernel_instances) : std::string("unmeasured"))
        << " kernels, MFU " << percent(stage.mfu) << " (workload: " << percent(stage.mfu_workload) << ")\n"
        << "  " << std::string(static_cast<std::size_t>(stage.level) * 2, ' ') << "  " << stage.verdict << "\n";
  }
  out << "top kernels:\n";
  for (std::size_t i = 0; i < report.kernels.size() && i < 5; ++i) {
    const auto& kernel = report.kernels[i];
    out << "  " << percent(kernel.share_of_total) << "  x" << kernel.instances.value_or(0) << "  "
        << kernel.bound.value_or("-") << "  " << kernel.name.substr(0, 100) << "\n";
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

// The largest --top that means something: more kernels than any stage of a real run launches.
constexpr long long kMaxTopKernels = 10000;

// What the command line asked for; an unset field keeps what the run itself measured.
struct AnalyzeOverrides {
  std::optional<std::string> stage;
  std::optional<long long> top;
  std::optional<std::string> name_base;
  bool gated = false;
};

// Starts from the run's own settings (config.toml, the nsys capture), applies what was given on the
// command line and says so in the report's warnings.
llmprof::Result<llmprof::AnalysisOptions> resolve_options(const std::string& main, const AnalyzeOverrides& given,
                                                          std::vector<std::string>& notes) {
  auto measured = llmprof::analysis_options_of_run(main);
  if (!measured && measured.error().code != llmprof::ErrorCode::not_found) return measured.error();
  llmprof::AnalysisOptions options = measured ? measured.value() : llmprof::AnalysisOptions{};
  if (!measured) notes.push_back(measured.error().message + "; using analyze's defaults (--stage decode --top 5)");
  // Only a value that differs from what the run used is an override worth a line in the report.
  const auto tell = [&](bool differs, const std::string& option, const std::string& before) {
    if (measured && differs) notes.push_back("analyze " + option + " overrides what the run used (" + before + ")");
  };
  if (given.stage) {
    tell(*given.stage != options.selection_stage, "--stage " + *given.stage, "run.stage = " + options.selection_stage);
    options.selection_stage = *given.stage;
  }
  if (given.top) {
    const auto top = static_cast<std::size_t>(*given.top);
    std::ostringstream before;
    if (options.kernel_coverage)
      before << "run.kernel_coverage = " << *options.kernel_coverage;
    else
      before << "run.top_n_kernels = " << options.top_n;
    tell(top != options.top_n || options.kernel_coverage, "--top " + std::to_string(top), before.str());
    options.top_n = top;
    options.kernel_coverage.reset();  // --top asks for a count, as run.top_n_kernels set later does
  }
  if (given.name_base) {
    const auto base = llmprof::parse_choice<llmprof::KernelNameBase>(*given.name_base);
    tell(base != options.name_base, "--name-base " + *given.name_base,
         "ncu.kernel_name_base = " +
             (options.name_base ? std::string(llmprof::choice_name(*options.name_base)) : std::string("mangled")));
    options.name_base = base;
  }
  if (given.gated) {
    tell(!options.capture_gated_on_stage, "--gated", "its nsys capture was not gated on the stage");
    options.capture_gated_on_stage = true;
  }
  return options;
}

// The directory whose files the single-rank analysis reads: MAIN itself, or, for a run made under a
// launcher, the rank ncu profiled, after the cross-rank view is rewritten from every rank's files (as
// the pipeline's analyze stage does).
llmprof::Result<std::filesystem::path> single_rank_inputs(const std::string& main, std::vector<std::string>& notes) {
  if (!llmprof::is_ranked_run(main)) return std::filesystem::path(main);
  auto run = llmprof::RunDirectory::open(main);
  if (!run) return run.error();
  std::vector<std::string> warnings;
  const auto ranks = llmprof::analyze_ranks_of_run(main, run->manifest(), warnings);
  if (auto written = llmprof::write_cross_rank_files(ranks, main); !written) return written.error();
  const int primary = llmprof::primary_rank_of_run(run->manifest());
  notes.push_back("single-rank figures are rank " + std::to_string(primary) +
                  "'s; the cross-rank view is in analysis/ranks.md");
  notes.insert(notes.end(), warnings.begin(), warnings.end());
  return std::filesystem::path(main) / llmprof::RunLayout::rank_directory(primary);
}

// The engine steps as the analyze stage writes them, from the step window the run used (nsys.capture_skip and
// capture_count) and the workload's step tokens as they are now; what could not be read joins the warnings.
void write_engine_steps_of_run(const std::string& main, llmprof::AnalysisReport& report) {
  llmprof::StepWindow bounds;
  llmprof::StepSource source = llmprof::StepSource::automatic;
  if (auto config = llmprof::load_recorded_config(main)) {
    bounds = {config->nsys.capture_skip, config->nsys.capture_count};
    source = config->run.step_source;
  }
  llmprof::write_engine_steps(main, report, bounds, report.warnings, source);
}

int run_analyze(const std::vector<std::string>& args) {
  std::string main;
  AnalyzeOverrides given;
  CommandSyntax syntax("analyze", usage_text);
  syntax.options.add_options()("stage", po::value<std::string>(),
                               "stage for the top-kernel selection (default: the run's run.stage)")(
      "top", po::value<long long>(), "kernels in the top-kernel selection, 1 to 10000 (default: run.top_n_kernels)")(
      "name-base", po::value<std::string>(), "demangled or function (default: ncu.kernel_name_base)")(
      "gated", po::bool_switch(&given.gated),
      "the nsys capture was gated on --stage (default: read from nsys/cmd.txt)")(
      "json", "print report.json instead of the summary");
  syntax.hidden.add_options()("main", po::value(&main));
  syntax.positional.add("main", 1);
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  if (main.empty()) return usage_error(syntax, "MAIN is required");
  if (line.values.count("stage") != 0) given.stage = line.values["stage"].as<std::string>();
  if (line.values.count("top") != 0) given.top = line.values["top"].as<long long>();
  if (line.values.count("name-base") != 0) given.name_base = line.values["name-base"].as<std::string>();
  if (given.top && (*given.top < 1 || *given.top > kMaxTopKernels)) {
    return usage_error(syntax, "--top must be 1 to 10000, got " + std::to_string(*given.top));
  }
  if (given.name_base && !llmprof::parse_choice<llmprof::KernelNameBase>(*given.name_base)) {
    return usage_error(syntax, "--name-base must be demangled or function");
  }
  if (given.stage && given.stage->empty()) return usage_error(syntax, "--stage must not be empty");
  std::vector<std::string> notes;
  auto options = resolve_options(main, given, notes);
  if (!options) {
    std::cerr << "deep-profile analyze: " << options.error().describe() << "\n";
    return exit_code_for(options.error());
  }

  auto inputs = single_rank_inputs(main, notes);
  if (!inputs) {
    std::cerr << "deep-profile analyze: " << inputs.error().describe() << "\n";
    return exit_code_for(inputs.error());
  }
  auto report = llmprof::analyze_run_directory(inputs.value(), options.value());
  if (report) report->warnings.insert(report->warnings.begin(), notes.begin(), notes.end());
  if (!report) {
    std::cerr << "deep-profile analyze: " << report.error().describe() << "\n";
    return exit_code_for(report.error());
  }
  const auto directory = llmprof::RunLayout(main).resolve(llmprof::RunLayout::analysis_directory());
  write_engine_steps_of_run(main, *report);
  if (auto written = llmprof::write_analysis(*report, directory); !written) {
    std::cerr << "deep-profile analyze: " << written.error().describe() << "\n";
    return exit_code_for(written.error());
  }
  // Last: the verdict reads report.json, step_kinds.json and ranks.csv as written above.
  const auto stored = llmprof::write_run_verdict(main);
  if (!stored)
    std::cerr << "deep-profile analyze: warning: the verdict (headline and levers) was not stored: "
              << stored.error().describe() << "\n";
  if (line.values.count("json") != 0) {
    std::cout << (stored ? stored.value() : llmprof::analysis_report_json(*report));
  } else {
    print_summary(std::cout, *report, directory);
  }
  return exit_ok;
}

const CommandRegistrar registrar{{"analyze", "analyse an existing run directory into MAIN/analysis/", run_analyze}};

}  // namespace
}  // namespace deep_profile
