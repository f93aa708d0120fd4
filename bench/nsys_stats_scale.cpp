// Benchmark (not a test): time and peak memory of reading a very large `nsys stats` nvtx_kern_sum
// table, the old way (every row into a vector) against the streaming fold load_nsys_stats does now
// (one row per range and kernel), and of the whole analysis over it.
//
//   bench_nsys_stats_scale [--rows N] [--kernels K] [--dir PATH] [--phase vector|stream|analyze] [--keep]
//
// Writes PATH/nsys/summary_{cuda_gpu_kern_sum,nvtx_kern_sum,nvtx_sum,nvtx_gpu_proj_sum}.csv (unless
// they exist): N nvtx_kern_sum rows (default 1,000,000) of K kernels (default 1,000) over 4 ranges and
// as many threads as it takes, the shape of a capture of many threads or ranks. Prints seconds, rows
// kept and peak RSS (getrusage ru_maxrss, for the process so far: run one --phase per process).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "bench_options.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/nsys_stats.hpp"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::uint64_t rows = 1'000'000;
  std::uint64_t kernels = 1'000;
  fs::path directory = fs::temp_directory_path() / "llmprof-bench-nsys-stats";
  std::string phase;  // empty: all three, in one process (RSS then is the largest of them)
  bool keep = false;
};

const llmprof::bench::Usage kUsage{"bench_nsys_stats_scale",
                                   "[--rows N] [--kernels K] [--dir PATH] [--phase vector|stream|analyze] [--keep]"};

Options parse_options(int argc, char** argv) {
  Options options;
  llmprof::bench::parse_flags(
      argc, argv, kUsage,
      {{"--rows",
        [&](const std::string& v) { options.rows = llmprof::bench::count_value<std::uint64_t>(kUsage, "--rows", v); }},
       {"--kernels",
        [&](const std::string& v) {
          options.kernels = llmprof::bench::count_value<std::uint64_t>(kUsage, "--kernels", v);
        }},
       {"--dir", [&](const std::string& v) { options.directory = v; }},
       {"--phase", [&](const std::string& v) { options.phase = v; }},
       llmprof::bench::switch_flag("--keep", [&] { options.keep = true; })});
  if (options.rows == 0 || options.kernels == 0 || options.kernels > options.rows)
    kUsage.fail("need 1 <= --kernels <= --rows");
  return options;
}

std::string kernel_name(std::uint64_t k) {
  return "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_" + std::to_string(k) +
         "x64_32x1_nn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_nn_align8::Params)";
}

constexpr const char* kRanges[] = {":decode", ":prefill", ":decode_step", ":attention"};

void write_tables(const Options& options) {
  const fs::path nsys = options.directory / "nsys";
  fs::create_directories(nsys);
  const fs::path kern_sum = nsys / "summary_nvtx_kern_sum.csv";
  if (fs::exists(kern_sum)) return;
  std::ofstream kernels(nsys / "summary_cuda_gpu_kern_sum.csv");
  kernels << "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
  const std::uint64_t per_kernel = options.rows / options.kernels;
  for (std::uint64_t k = 0; k < options.kernels; ++k) {
    const std::uint64_t time = 1000 + k % 977;
    kernels << "0.0," << time * 3 * per_kernel << "," << 3 * per_kernel << "," << time << ".0," << time << ".0," << time
            << "," << time << ",0.0,\"" << kernel_name(k) << "\"\n";
  }
  std::ofstream table(kern_sum);
  table << "NVTX Range,Style,PID,TID,NVTX Inst,Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),StdDev "
           "(ns),Kernel Name\n";
  for (std::uint64_t row = 0; row < options.rows; ++row) {
    const std::uint64_t k = row % options.kernels;
    const std::uint64_t time = 1000 + k % 977;
    table << kRanges[(row / options.kernels) % 4] << ",PushPop,837," << 837 + row / (4 * options.kernels) << ",1,3,"
          << time * 3 << "," << time << ".0," << time << ".0," << time << "," << time << ",0.0,\"" << kernel_name(k)
          << "\"\n";
  }
  std::ofstream ranges(nsys / "summary_nvtx_sum.csv");
  ranges << "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n";
  std::ofstream projection(nsys / "summary_nvtx_gpu_proj_sum.csv");
  projection << "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),"
                "Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child\n";
  for (const char* range : kRanges) {
    ranges << "25.0,90000000000,1,90000000000.0,90000000000.0,90000000000,90000000000,0.0,PushPop," << range << "\n";
    projection
        << range
        << ",PushPop,80000000000,90000000000,1,8e10,8e10,80000000000,80000000000,0.0,3000000,3000000.0,0.0,0.0\n";
  }
}

using llmprof::bench::peak_rss_mb;

template <typename Work>
void measure(const std::string& phase, Work work) {
  const auto start = std::chrono::steady_clock::now();
  const std::string kept = work();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << phase << ": " << seconds << " s, " << kept << ", peak RSS " << peak_rss_mb() << " MB\n";
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  write_tables(options);
  const fs::path table = options.directory / "nsys" / "summary_nvtx_kern_sum.csv";
  std::cout << "nvtx_kern_sum: " << options.rows << " rows, " << options.kernels << " kernels, "
            << fs::file_size(table) / 1'000'000 << " MB\n";
  const auto wanted = [&](const char* phase) { return options.phase.empty() || options.phase == phase; };
  int status = 0;
  if (wanted("vector")) {  // the approach before streaming: every row held
    measure("vector (every row held)", [&] {
      auto rows = llmprof::parse_nsys_nvtx_kernel_summary(table);
      if (!rows) status = 1;
      return rows ? std::to_string(rows->size()) + " rows kept" : rows.error().describe();
    });
  }
  if (wanted("stream")) {
    measure("stream (load_nsys_stats, folded)", [&] {
      auto stats = llmprof::load_nsys_stats(options.directory / "nsys" / "summary");
      if (!stats) status = 1;
      return stats ? std::to_string(stats->range_kernels->size()) + " rows kept" : stats.error().describe();
    });
  }
  if (wanted("analyze")) {
    measure("analyze (analyze_run_directory)", [&] {
      llmprof::AnalysisOptions analysis;
      auto report = llmprof::analyze_run_directory(options.directory, analysis);
      if (!report) status = 1;
      return report ? std::to_string(report->kernels.size()) + " kernels" : report.error().describe();
    });
  }
  if (!options.keep && options.phase.empty()) fs::remove_all(options.directory);
  return status;
}
