// deep-profile compare A B [--json] [--md FILE] [--html FILE] [--threshold PCT] [--fail-if-slower PCT]:
// two run directories side by side; exit 5 when --fail-if-slower finds a regression (CI gate), 6 when it
// cannot compare (a time A measured is missing in B), 7 when the change cannot be told from the noise of the
// repeats.
#include <cmath>
#include <fstream>
#include <iostream>

#include "command.hpp"
#include "llmprof/run_comparison.hpp"

namespace deep_profile {
namespace po = boost::program_options;
namespace {

const char* usage_text =
    "usage: deep-profile compare A B [--json] [--md FILE] [--html FILE] [--threshold PCT] [--fail-if-slower PCT]\n\n"
    "Compares run directory B against A: stage times and MFU (deltas and ratios), kernels matched by name (new,\n"
    "gone, faster, slower beyond --threshold percent of average launch time), environment and config differences.\n"
    "Prints Markdown (or JSON with --json) to stdout; --md/--html also write files.\n\n"
    "With --fail-if-slower and stage-1 repeats in both runs (run.repeats >= 2), the gate judges the repeated\n"
    "times with Welch t-tests (one-sided level 0.05): a regression only when the slowdown exceeds PCT beyond the\n"
    "noise. Single runs fall back to the stage times and say that they cannot tell noise from change.\n\n"
    "exit codes: 0 compared (no regression); 5 regression (repeats: slower than PCT beyond the noise; single runs:\n"
    "a stage's wall or kernel time grew by more than PCT); 6 --fail-if-slower could not compare (a time A measured\n"
    "is missing in B, e.g. B ran without nsys); 7 inconclusive: the change is within the noise of the repeats;\n"
    "2 bad command line (a threshold that is negative or not finite); 4 A or B is not a readable run directory.\n";

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::cerr << "deep-profile compare: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

int run_compare(const std::vector<std::string>& args) {
  std::vector<std::string> runs;
  std::string markdown_file, html_file;
  bool as_json = false;
  llmprof::ComparisonOptions options;
  CommandSyntax syntax("compare", usage_text);
  syntax.options.add_options()("json", po::bool_switch(&as_json), "print JSON (llmprof.compare/2)")(
      "md", po::value(&markdown_file), "also write the Markdown comparison to FILE")(
      "html", po::value(&html_file), "also write the HTML comparison to FILE")(
      "threshold", po::value(&options.kernel_threshold_pct)->default_value(5.0),
      "kernel faster/slower threshold, percent")("fail-if-slower", po::value<double>(),
                                                 "exit 5 when a stage got slower by more than PCT percent");
  syntax.hidden.add_options()("run", po::value(&runs));
  syntax.positional.add("run", 2);
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  if (runs.size() != 2) return usage_error(syntax, "give two run directories A and B");
  if (line.values.count("fail-if-slower") != 0) options.fail_if_slower_pct = line.values["fail-if-slower"].as<double>();
  // nan never compares greater than anything, so a nan limit would be a gate that never fires.
  if (options.fail_if_slower_pct && (!std::isfinite(*options.fail_if_slower_pct) || *options.fail_if_slower_pct < 0)) {
    return usage_error(syntax, "--fail-if-slower must be a finite percentage >= 0");
  }
  if (!std::isfinite(options.kernel_threshold_pct) || options.kernel_threshold_pct < 0) {
    return usage_error(syntax, "--threshold must be a finite percentage >= 0");
  }
  auto comparison = llmprof::compare_run_directories(runs[0], runs[1], options);
  if (!comparison) {
    std::cerr << "deep-profile compare: " << comparison.error().describe() << "\n";
    return exit_code_for(comparison.error());
  }
  std::cout << (as_json ? llmprof::comparison_to_json(*comparison) : llmprof::render_comparison_markdown(*comparison));
  if (!markdown_file.empty() && !write_file(markdown_file, llmprof::render_comparison_markdown(*comparison)))
    return exit_not_ready;
  if (!html_file.empty() && !write_file(html_file, llmprof::render_comparison_html(*comparison))) return exit_not_ready;
  const llmprof::GateVerdict verdict = llmprof::decide_gate(*comparison);
  for (const auto& message : llmprof::gate_messages(verdict)) std::cerr << "deep-profile compare: " << message << "\n";
  return llmprof::exit_code_for(verdict.outcome);
}

const CommandRegistrar registrar{
    {"compare", "compare two run directories (CI gate with --fail-if-slower)", run_compare}};

}  // namespace
}  // namespace deep_profile
