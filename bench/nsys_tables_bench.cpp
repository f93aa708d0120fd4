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
#include "nsys_stats_baseline.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/process.hpp"

namespace {

namespace fs = std::filesystem;
using llmprof::bench::seconds_since;
using llmprof::bench::summarize;
using llmprof::bench::Timings;

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
  const auto theirs = llmprof::bench::time_nsys_stats(options.sqlite_export, nsys, options.repeat, options.directory);
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
