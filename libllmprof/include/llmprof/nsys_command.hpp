// NsysCommand: typed builders for `nsys profile`, `nsys stats` and `nsys export` argv.
//
// Builders are plain values: set options, validate() against the probed tool, then argv() or
// to_shell_string() (for cmd.txt). No I/O happens here.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/choice.hpp"
#include "llmprof/export.hpp"
#include "llmprof/result.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof {

// Each enum's spellings are nsys's own (`nsys profile --help`, 2025.3.1) and the config file's.
enum class NsysCaptureRange { none, nvtx, cuda_profiler_api };  // --capture-range
inline std::span<const std::string_view> choice_names(NsysCaptureRange) noexcept {
  static constexpr std::string_view names[] = {"none", "nvtx", "cudaProfilerApi"};
  return names;
}

enum class NsysCaptureRangeEnd { stop, stop_shutdown, repeat, none };  // --capture-range-end
inline std::span<const std::string_view> choice_names(NsysCaptureRangeEnd) noexcept {
  static constexpr std::string_view names[] = {"stop", "stop-shutdown", "repeat", "none"};
  return names;
}

// Which processes --sample (CPU IP sampling) and --cpuctxsw (context switches) cover.
enum class NsysProcessScope { none, process_tree, system_wide };
inline std::span<const std::string_view> choice_names(NsysProcessScope) noexcept {
  static constexpr std::string_view names[] = {"none", "process-tree", "system-wide"};
  return names;
}

// What the CLI waits for before it ends the capture (--wait). nsys's default, all, waits for the processes the
// application left re-parented to its launcher too: with nsys 2022.4 a workload that leaves a daemon (an
// engine worker holding its port) kept `nsys profile` running until it was killed (measured: 100 s timeout
// against 1.5 s for the same capture with primary).
enum class NsysWait { primary, all };
inline std::span<const std::string_view> choice_names(NsysWait) noexcept {
  static constexpr std::string_view names[] = {"primary", "all"};
  return names;
}

struct LLMPROF_API NsysProfileOptions {
  std::filesystem::path nsys = "nsys";                 // executable
  std::vector<std::string> trace = {"cuda", "nvtx"};   // --trace=cuda,nvtx[,osrt,cublas,...]
  NsysProcessScope sample = NsysProcessScope::none;    // --sample=
  NsysProcessScope cpuctxsw = NsysProcessScope::none;  // --cpuctxsw=
  NsysCaptureRange capture_range = NsysCaptureRange::none;
  std::string nvtx_capture;  // --nvtx-capture=EXPR (required with capture_range nvtx)
  std::optional<NsysCaptureRangeEnd> capture_range_end;
  // With capture_range_end repeat: at most this many windows (--capture-range-end=repeat:N); 0: no bound.
  // nsys writes one report per window, numbered BASE.1.nsys-rep, BASE.2.nsys-rep, ... (recorded with nsys
  // 2022.4.2: "Generated: rep.1.qdstrm rep.2.qdstrm"; `nsys profile --help`: "'repeat[:N]' ... subsequent
  // capture ranges will trigger more collections ... max number of capture ranges to be honored").
  int capture_range_end_count = 0;
  std::vector<std::string> nvtx_domain_include;  // --nvtx-domain-include=a,b
  std::vector<std::string> nvtx_domain_exclude;  // --nvtx-domain-exclude=a,b
  std::map<std::string, std::string> env_vars;   // --env-var=K=V (repeated)
  std::filesystem::path output_base;             // -o BASE (nsys appends the report extension)
  bool force_overwrite = true;                   // --force-overwrite=true
  bool stats = false;                            // --stats=true|false
  std::vector<std::string> extra_args;           // passed verbatim before the application (config: nsys.extra_args)
  std::vector<std::string> application;          // the workload argv
  std::optional<NsysWait> wait;                  // --wait=; nullopt: nsys's default (all)
  // GPU-metrics sampling (config nsys.gpu_metrics, with the option's spelling and the devices from the probe's
  // GpuMetricsSupport): "--gpu-metrics-devices=all --gpu-metrics-frequency=20000 [--gpu-metrics-set=gh100]".
  // An empty option: no sampling.
  std::string gpu_metrics_option;
  std::string gpu_metrics_devices;
  int gpu_metrics_frequency_hz = 0;
  std::string gpu_metrics_set;
};

// The --cuda-graph-trace granularity that arguments given verbatim (nsys.extra_args) ask for: "graph" or
// "node" (a ":<launch origin>" suffix dropped; both nsys 2022.4 and 2025.3.1 take either), nullopt when they
// do not set it (nsys then traces graphs whole). The last occurrence wins, as in nsys's own parser.
LLMPROF_API std::optional<std::string> requested_graph_trace(const std::vector<std::string>& extra_args);

class LLMPROF_API NsysCommand {
 public:
  // nsys profile ...; with capture_range nvtx also --env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0,
  // without which nsys ignores unregistered NVTX strings and a gate like "decode" never opens.
  static NsysCommand profile(NsysProfileOptions options);
  // The same, run by the probed nsys (tool.path) when options.nsys is left at its bare default "nsys"; an
  // explicit options.nsys (a wrapper, say) is kept. A tool the probe did not find leaves "nsys" (validate says so).
  static NsysCommand profile(const NsysInfo& tool, NsysProfileOptions options);
  // nsys stats --report r1,r2 --format csv --output PREFIX --force-export=true --force-overwrite=true
  //   [EXTRA_ARGS...] REPORT
  static NsysCommand stats(std::filesystem::path nsys, std::filesystem::path report, std::vector<std::string> reports,
                           std::filesystem::path output_prefix, std::vector<std::string> extra_args = {});
  // nsys export --type sqlite --output FILE --force-overwrite true REPORT (never `--sqlite`)
  static NsysCommand export_sqlite(std::filesystem::path nsys, std::filesystem::path report,
                                   std::filesystem::path output_file);
  // stats and export run by the probed nsys (tool.path; "nsys" when the probe did not find one).
  static NsysCommand stats(const NsysInfo& tool, std::filesystem::path report, std::vector<std::string> reports,
                           std::filesystem::path output_prefix, std::vector<std::string> extra_args = {});
  static NsysCommand export_sqlite(const NsysInfo& tool, std::filesystem::path report,
                                   std::filesystem::path output_file);

  // Checks the options against the probed tool: NVTX capture with an empty expression, domains
  // both included and excluded, missing output base or application, export arguments the version
  // does not take. Returns the errors; warnings (non-fatal adjustments, and a command that runs another
  // nsys than the probed one) go to `warnings`.
  Result<void> validate(const NsysInfo& tool, std::vector<std::string>* warnings = nullptr) const;

  std::vector<std::string> argv() const;
  // The same command without a profile's overwrite flag (--force-overwrite=true): what cmd.txt records, so that a
  // pasted line cannot replace the report this command wrote into the run directory.
  NsysCommand without_overwrite() const;
  std::string to_shell_string() const;  // copy-pasteable, POSIX-quoted

 private:
  enum class Kind { profile, stats, export_sqlite };
  Kind kind_ = Kind::profile;
  NsysProfileOptions profile_;
  std::filesystem::path report_;
  std::vector<std::string> reports_;
  std::filesystem::path output_;
  std::vector<std::string> stats_extra_args_;
};

}  // namespace llmprof
