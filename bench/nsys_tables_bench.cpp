// Benchmark (not a test): the six nsys stats tables from the SQLite export by nsys_stats_from_sqlite, against
// `nsys stats` on the same export as a child process, side by side.
//
//   bench_nsys_tables_bench --export FILE.sqlite [--repeat N] [--nsys PATH] [--dir PATH]
//
// `nsys` is looked up on PATH unless --nsys names it; without one only our side is timed. nsys 2022.4 knows
// the reports by their legacy names (nsys_stats_report_spellings()); the names are chosen from
// `nsys stats --help-reports`. Prints the best and the median of N runs (default 3) and their ratio.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_options.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/process.hpp"

namespace {

namespace fs = std::filesystem;

struct Options {
  fs::path sqlite_export;
  std::uint64_t repeat = 3;
  std::string nsys = "nsys";
  fs::path directory = fs::temp_directory_path() / "llmprof-bench-nsys-tables";
};

const llmprof::bench::Usage kUsage{"bench_nsys_tables_bench",
                                   "--export FILE.sqlite [--repeat N] [--nsys PATH] [--dir PATH]"};

Options parse_options(int argc, char** argv) {
  Options options;
  llmprof::bench::parse_flags(argc, argv, kUsage,
                              {{"--export", [&](const std::string& v) { options.sqlite_export = v; }},
                               {"--repeat",
                                [&](const std::string& v) {
                                  options.repeat = llmprof::bench::count_value<std::uint64_t>(kUsage, "--repeat", v);
                                }},
                               {"--nsys", [&](const std::string& v) { options.nsys = v; }},
                               {"--dir", [&](const std::string& v) { options.directory = v; }}});
  if (options.sqlite_export.empty()) kUsage.fail("--export is required");
  if (options.repeat == 0) kUsage.fail("--repeat must be at least 1");
  return options;
}

struct Timings {
  double best_s = 0;
  double median_s = 0;
};

Timings summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `argv` to completion; its stdout lines go to `lines` when given. False (with a message and the
// tool's stderr) on failure, unless `any_status`: nsys 2022.4 exits 1 after listing --help-reports.
bool run_tool(llmprof::ProcessRunner& runner, const std::vector<std::string>& argv, std::vector<std::string>* lines,
              bool any_status = false) {
  llmprof::ProcessSpec spec;
  spec.argv = argv;
  spec.on_stdout_line = [lines](const std::string& line) {
    if (lines != nullptr) lines->push_back(line);  // else dropped: nsys prints a "Processing [...]" line a report
  };
  std::string errors;
  spec.on_stderr_line = [&errors](const std::string& line) { errors += line + "\n"; };
  auto outcome = runner.run(spec);
  if (!outcome) {
    std::cerr << "cannot run " << argv.front() << ": " << outcome.error().describe() << "\n";
    return false;
  }
  if (outcome->exit_code != 0 && !any_status) {
    std::cerr << errors << argv.front() << " exited with status " << outcome->exit_code << "\n";
    return false;
  }
  return true;
}

// The report names this nsys knows (`nsys stats --help-reports` lists one per line, name first).
std::string report_names(llmprof::ProcessRunner& runner, const std::string& nsys) {
  std::vector<std::string> lines;
  if (!run_tool(runner, {nsys, "stats", "--help-reports"}, &lines, true)) return {};
  std::vector<std::string> available;
  for (const auto& line : lines) {
    std::istringstream words(line);
    std::string first;
    // "gpukernsum[:base|:mangled] -- ...": the name stops at its options.
    if (words >> first) available.push_back(first.substr(0, first.find('[')));
  }
  const auto choice = llmprof::choose_nsys_stats_reports(available);
  std::string joined;
  for (const auto& name : choice.names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

Timings time_ours(const Options& options) {
  std::vector<double> seconds;
  for (std::uint64_t i = 0; i < options.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto stats = llmprof::nsys_stats_from_sqlite(options.sqlite_export);
    seconds.push_back(seconds_since(start));
    if (!stats) {
      std::cerr << stats.error().describe() << "\n";
      std::exit(1);
    }
  }
  return summarize(seconds);
}

std::optional<Timings> time_nsys(const Options& options, const fs::path& nsys) {
  auto runner = llmprof::make_system_process_runner();
  const std::string reports = report_names(*runner, nsys.string());
  if (reports.empty()) {
    std::cerr << nsys.string() << " stats --help-reports listed none of the reports\n";
    return std::nullopt;
  }
  fs::create_directories(options.directory);
  std::vector<double> seconds;
  for (std::uint64_t i = 0; i < options.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!run_tool(*runner,
                  {nsys.string(), "stats", "--report", reports, "--format", "csv", "--force-overwrite", "true", "-o",
                   (options.directory / "stats").string(), options.sqlite_export.string()},
                  nullptr))
      return std::nullopt;
    seconds.push_back(seconds_since(start));
  }
  return summarize(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::cout << std::fixed << std::setprecision(3);
  const Timings ours = time_ours(options);
  std::cout << "nsys_stats_from_sqlite  best " << ours.best_s << " s  median " << ours.median_s << " s  ("
            << options.repeat << " runs, " << options.sqlite_export.string() << ")\n";
  const fs::path nsys = llmprof::find_executable(options.nsys);
  if (nsys.empty()) {
    std::cout << "nsys stats              not timed: no '" << options.nsys << "' on PATH\n";
    return 0;
  }
  const auto theirs = time_nsys(options, nsys);
  if (!theirs) {
    std::cout << "nsys stats              failed (see above)\n";
    return 1;
  }
  std::cout << "nsys stats              best " << theirs->best_s << " s  median " << theirs->median_s << " s  ("
            << nsys.string() << ")\n";
  std::cout << std::setprecision(1) << "ratio (nsys stats / ours, medians): " << theirs->median_s / ours.median_s
            << "x\n";
  return 0;
}
