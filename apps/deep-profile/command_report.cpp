// deep-profile report MAIN [--format md|html|all]: re-renders MAIN/report.md and/or MAIN/report.html
// from the run directory alone (analysis/report.json, run.json, env.json, config.toml).
#include <boost/program_options.hpp>
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

int exit_for(const llmprof::Error& error) {
  switch (error.code) {
    case llmprof::ErrorCode::not_found:
    case llmprof::ErrorCode::parse_error: return exit_input;
    case llmprof::ErrorCode::invalid_argument: return exit_usage;
    default: return exit_environment;
  }
}

int write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "deep-profile report: cannot write " << path.string() << "\n";
    return exit_environment;
  }
  std::cout << "wrote " << path.string() << "\n";
  return exit_ok;
}

int run_report(const std::vector<std::string>& args) {
  std::string format = "all";
  std::string main;
  po::options_description description("options");
  description.add_options()("help,h", "this help")("format", po::value(&format)->default_value("all"), "md, html or all");
  po::options_description hidden;
  hidden.add_options()("main", po::value(&main));
  po::options_description all;
  all.add(description).add(hidden);
  po::positional_options_description positional;
  positional.add("main", 1);
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    std::cerr << "deep-profile report: " << error.what() << "\n\n" << usage_text << description;
    return exit_usage;
  }
  if (values.count("help")) {
    std::cout << usage_text << "\n" << description;
    return exit_ok;
  }
  if (main.empty() || (format != "md" && format != "html" && format != "all")) {
    std::cerr << "deep-profile report: " << (main.empty() ? "missing run directory MAIN" : "--format must be md, html or all")
              << "\n\n" << usage_text << description;
    return exit_usage;
  }
  auto model = llmprof::load_run_report(main);
  if (!model) {
    std::cerr << "deep-profile report: " << model.error().describe() << "\n";
    return exit_for(model.error());
  }
  const llmprof::RunLayout layout{std::filesystem::path(main)};
  const auto markdown = layout.resolve(llmprof::RunLayout::report_markdown());
  const auto html = layout.resolve(llmprof::RunLayout::report_html());
  if (format == "all") {
    if (auto written = llmprof::write_reports(layout.main_directory()); !written) {
      std::cerr << "deep-profile report: " << written.error().describe() << "\n";
      return exit_for(written.error());
    }
    std::cout << "wrote " << markdown.string() << "\nwrote " << html.string() << "\n";
    return exit_ok;
  }
  return format == "md" ? write_text(markdown, llmprof::render_markdown(*model)) : write_text(html, llmprof::render_html(*model));
}

const CommandRegistrar registrar{{"report", "render report.md / report.html of a run directory", run_report}};

}  // namespace
}  // namespace deep_profile
