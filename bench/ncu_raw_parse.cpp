// Benchmark (not a test): parse speed and memory of the ncu raw-page parser on a large file.
//
//   bench_ncu_raw_parse [--size-mb N] [--file PATH] [--fixture PATH] [--phase NAME] [--keep-file]
//
// Builds PATH (default: a temporary file) of at least N MB (default 256) by writing the header and
// units row of the fixture (tests/data/h100-nsight-2025.3/ncu/nc1_raw.csv) once and repeating its
// launch rows, unless --file names an existing file to read as is. Then times, each on one core:
//   csv        CsvReader alone (every record split into fields)
//   narrow     for_each_ncu_launch keeping 7 roofline metrics (duration, clock, FLOP, DRAM)
//   all        for_each_ncu_launch keeping every metric
// and prints MB/s, launches counted and peak RSS (getrusage ru_maxrss; the peak is for the process
// so far, so run one --phase per process for a clean per-phase figure).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench_options.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/csv.hpp"
#include "llmprof/ncu_metrics.hpp"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::uintmax_t size_mb = 256;
  fs::path file;
  fs::path fixture = LLMPROF_BENCH_FIXTURE;
  std::string phase;  // empty: all phases
  bool keep_file = false;
};

const llmprof::bench::Usage kUsage{
    "bench_ncu_raw_parse", "[--size-mb N] [--file PATH] [--fixture PATH] [--phase csv|narrow|all] [--keep-file]"};

[[noreturn]] void usage(const std::string& problem) { kUsage.fail(problem); }

Options parse_options(int argc, char** argv) {
  Options options;
  llmprof::bench::parse_flags(argc, argv, kUsage,
                              {{"--size-mb",
                                [&](const std::string& v) {
                                  options.size_mb = llmprof::bench::count_value<std::uintmax_t>(kUsage, "--size-mb", v);
                                }},
                               {"--file", [&](const std::string& v) { options.file = v; }},
                               {"--fixture", [&](const std::string& v) { options.fixture = v; }},
                               {"--phase", [&](const std::string& v) { options.phase = v; }},
                               llmprof::bench::switch_flag("--keep-file", [&] { options.keep_file = true; })});
  if (!options.phase.empty() && options.phase != "csv" && options.phase != "narrow" && options.phase != "all")
    usage("unknown phase " + options.phase);
  return options;
}

using llmprof::bench::peak_rss_mb;

// Header and units row once, then the fixture's launch rows repeated until `bytes` are written.
void build_file(const fs::path& fixture, const fs::path& out, std::uintmax_t bytes) {
  std::ifstream in(fixture, std::ios::binary);
  if (!in) usage("cannot read fixture " + fixture.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  if (lines.size() < 3) usage(fixture.string() + " has no launch rows");
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  if (!file) usage("cannot write " + out.string());
  std::uintmax_t written = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    file << lines[i];
    written += lines[i].size();
  }
  while (written < bytes) {
    for (std::size_t i = 2; i < lines.size(); ++i) {
      file << lines[i];
      written += lines[i].size();
    }
  }
  if (!file.flush()) usage("writing " + out.string() + " failed (disk full?)");
}

struct Timing {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system of this process: the figure on a shared, busy machine
  std::size_t records = 0;
};

double cpu_seconds_used() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

template <typename Work>
Timing timed(const llmprof::Clock& clock, Work work) {
  const auto start = clock.now();
  const double cpu_start = cpu_seconds_used();
  const std::size_t records = work();
  return {std::chrono::duration<double>(clock.now() - start).count(), cpu_seconds_used() - cpu_start, records};
}

std::size_t read_csv_only(const fs::path& file) {
  llmprof::CsvReaderOptions options;
  options.is_header = llmprof::csv_header_with({"ID"});
  auto reader = llmprof::CsvReader::open(file, options);
  if (!reader) usage(reader.error().describe());
  if (auto header = reader->read_header(); !header) usage(header.error().describe());
  std::size_t records = 0, fields = 0;
  for (;;) {
    auto more = reader->next();
    if (!more) usage(more.error().describe());
    if (!*more) break;
    ++records;
    fields += reader->fields().size();
  }
  if (fields == 0) usage("no fields read");
  return records;
}

std::size_t parse_launches(const fs::path& file, const llmprof::NcuParseOptions& options) {
  double duration_ns = 0;
  auto info = llmprof::for_each_ncu_launch(file, options, [&](const llmprof::NcuKernelLaunch& launch) {
    duration_ns += launch.metric("gpu__time_duration.sum").value_or(0);
    return true;
  });
  if (!info) usage(info.error().describe());
  if (duration_ns <= 0) usage("no gpu__time_duration.sum values were parsed");
  return info->launch_count;
}

void report(const char* phase, const Timing& timing, std::uintmax_t bytes, const char* unit) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%-7s %7.2f s  %7.1f MB/s wall  %7.1f MB/s cpu  %8zu %-9s  peak RSS %6.1f MB\n", phase, timing.seconds,
              mb / timing.seconds, mb / timing.cpu_seconds, timing.records, unit, peak_rss_mb());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const llmprof::SystemClock clock;
  fs::path file = options.file;
  const bool generated = file.empty();
  if (generated) {
    file = fs::temp_directory_path() / "llmprof-bench-ncu-raw.csv";
    const auto build = timed(clock, [&] {
      build_file(options.fixture, file, options.size_mb * 1000 * 1000);
      return std::size_t{0};
    });
    std::printf("built %s from %s in %.1f s\n", file.string().c_str(), options.fixture.string().c_str(), build.seconds);
  }
  std::error_code ec;
  const auto bytes = fs::file_size(file, ec);
  if (ec) usage("cannot stat " + file.string() + ": " + ec.message());
  std::printf("file: %.1f MB; one core; MB = 10^6 bytes\n", static_cast<double>(bytes) / 1e6);

  const auto run = [&](const std::string& phase) { return options.phase.empty() || options.phase == phase; };
  if (run("csv")) report("csv", timed(clock, [&] { return read_csv_only(file); }), bytes, "records");
  if (run("narrow")) {
    // What a roofline needs of each launch: duration, clock, tensor and FMA work, DRAM traffic.
    static const std::set<std::string, std::less<>> kept{"gpu__time_duration.sum",
                                                         "sm__cycles_elapsed.avg.per_second",
                                                         "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                                                         "sm__ops_path_tensor_src_fp16.sum",
                                                         "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
                                                         "dram__bytes.sum.per_second",
                                                         "dram__bytes.sum.peak_sustained"};
    llmprof::NcuParseOptions narrow;
    narrow.keep_metric = [](std::string_view name) { return kept.find(name) != kept.end(); };
    report("narrow", timed(clock, [&] { return parse_launches(file, narrow); }), bytes, "launches");
  }
  if (run("all")) report("all", timed(clock, [&] { return parse_launches(file, {}); }), bytes, "launches");

  if (generated && !options.keep_file) fs::remove(file, ec);
  return 0;
}
