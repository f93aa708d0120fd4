// deep-profile report MAIN [--format md|html|all]: re-renders MAIN/report.md and/or MAIN/report.html
// from the run directory alone (analysis/report.json, run.json, env.json, config.toml).
#include <fstream>
#include <iostream>

#include "command.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_layout.hpp"

namespace deep_profile {
namespace po = boost::program_options;
namespace {

const char* usage_text =
    "usage: deep-profile report MAIN [--format md|html|all]\n\n"
    "Renders MAIN/report.md and MAIN/report.html from MAIN/analysis/report.json (run `deep-profile analyze MAIN`\n"
    "first when it is missing), run.json, env.json and config.toml. Nothing else is read, so any run directory\n"
    "can be re-rendered, on any machine.\n\n"
    "exit codes: 0 written; 2 bad command line; 4 MAIN or its report.json is missing or unreadable; 3 cannot write.\n";

int write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "deep-profile report: cannot write " << path.string() << "\n";
    return exit_not_ready;
  }
  std::cout << "wrote " << path.string() << "\n";
  return exit_ok;
}

int run_report(const std::vector<std::string>& args) {
  std::string format = "all";
  std::string main;
  CommandSyntax syntax("report", usage_text);
  syntax.options.add_options()("format", po::value(&format)->default_value("all"), "md, html or all");
  syntax.hidden.add_options()("main", po::value(&main));
  syntax.positional.add("main", 1);
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  if (main.empty()) return usage_error(syntax, "missing run directory MAIN");
  if (format != "md" && format != "html" && format != "all")
    return usage_error(syntax, "--format must be md, html or all");
  auto model = llmprof::load_run_report(main);
  if (!model) {
    std::cerr << "deep-profile report: " << model.error().describe() << "\n";
    return exit_code_for(model.error());
  }
  const llmprof::RunLayout layout{std::filesystem::path(main)};
  const auto markdown = layout.resolve(llmprof::RunLayout::report_markdown());
  const auto html = layout.resolve(llmprof::RunLayout::report_html());
  if (format == "all") {
    if (auto written = llmprof::write_reports(layout.main_directory()); !written) {
      std::cerr << "deep-profile report: " << written.error().describe() << "\n";
      return exit_code_for(written.error());
    }
    std::cout << "wrote " << markdown.string() << "\nwrote " << html.string() << "\n";
    return exit_ok;
  }
  return format == "md" ? write_text(markdown, llmprof::render_markdown(*model))
                        : write_text(html, llmprof::render_html(*model));
}

const CommandRegistrar registrar{{"report", "render report.md / report.html of a run directory", run_report}};

}  // namespace
}  // namespace deep_profile
