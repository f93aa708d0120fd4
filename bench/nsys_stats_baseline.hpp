// What the benchmarks of our nsys tables measure against: `nsys stats` on the same SQLite export, as a child process
// (nsys_tables_bench, pipeline_replay). nsys is found by the caller; the report names are chosen from
// `nsys stats --help-reports` (nsys 2022.4 knows them by their legacy names).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/nsys_stats.hpp"
#include "llmprof/process.hpp"

namespace llmprof::bench {

struct Timings {
  double best_s = 0;
  double median_s = 0;
};

inline Timings summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `argv` to completion; its stdout lines go to `lines` when given. False (with a message and the
// tool's stderr) on failure, unless `any_status`: nsys 2022.4 exits 1 after listing --help-reports.
inline bool run_tool(llmprof::ProcessRunner& runner, const std::vector<std::string>& argv, std::vector<std::string>* lines,
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
inline std::string report_names(llmprof::ProcessRunner& runner, const std::string& nsys) {
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

inline std::optional<Timings> time_nsys_stats(const std::filesystem::path& sqlite_export,
                                             const std::filesystem::path& nsys, std::uint64_t repeat,
                                             const std::filesystem::path& directory) {
  auto runner = llmprof::make_system_process_runner();
  const std::string reports = report_names(*runner, nsys.string());
  if (reports.empty()) {
    std::cerr << nsys.string() << " stats --help-reports listed none of the reports\n";
    return std::nullopt;
  }
  std::filesystem::create_directories(directory);
  std::vector<double> seconds;
  for (std::uint64_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!run_tool(*runner,
                  {nsys.string(), "stats", "--report", reports, "--format", "csv", "--force-overwrite", "true", "-o",
                   (directory / "stats").string(), sqlite_export.string()},
                  nullptr))
      return std::nullopt;
    seconds.push_back(seconds_since(start));
  }
  return summarize(seconds);
}

}  // namespace llmprof::bench
