// DeepProfileConfig: every knob of a deep-profile run, loaded from TOML with dotted overrides.
//
// Sources, in order: the default file (config/deep-profile.toml), an optional preset or --config file
// layered on top, then command-line overrides such as `nsys.nvtx_capture=decode`. Every key is
// type-checked against the schema (config_schema(), the single list of keys); an unknown key or a wrong
// type is an error naming the key, where it was set, and the nearest valid key. Nothing is silently
// defaulted: the defaults live, commented, in config/deep-profile.toml, and the member initialisers below
// are the same values (a unit test parses the file and compares it with DeepProfileConfig{} key by key, so
// the two cannot drift). load_config therefore starts from DeepProfileConfig{}, and load_config with no
// files is well defined: it is exactly the defaults file.
//
// Layering rules: a later source replaces a scalar or an array wholesale; a table (workload.env,
// nsys.env_vars) is merged key by key.
//
// Output locations of the profilers (-o, --force-overwrite, --log-file) are not knobs: the run directory
// owns them (MAIN/nsys/profile, MAIN/ncu/profile, ...), so a config cannot scatter artifacts elsewhere.
// Whether the terminal output is quiet is a command-line choice (--quiet), not part of a run's config.
//
// Enumerated keys (nsys.sample, ncu.replay_mode, run.on_empty_gate, ...) are parsed once, when loaded,
// into the enums the command builders take (nsys_command.hpp, ncu_command.hpp); the config file spells
// them as the tools do (choice.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/choice.hpp"
#include "llmprof/export.hpp"
#include "llmprof/library_ranges.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/nsys_command.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// What the nsys stage does when a capture gated on an NVTX range yields no report.
enum class OnEmptyGate {
  diagnose,       // fail the stage with the diagnosis (which ranges the workload emitted, the fix)
  rerun_ungated,  // diagnose, then capture once more without the gate
  fail,           // diagnose, and skip the later profiling stages too
  discover,       // an ungated discovery capture names the ranges; go on with it and the best step range
};
inline std::span<const std::string_view> choice_names(OnEmptyGate) noexcept {
  static constexpr std::string_view names[] = {"diagnose", "rerun_ungated", "fail", "discover"};
  return names;
}

// How the ncu stage chooses the launches it profiles. per-kernel: the plan of llmprof/ncu_plan.hpp
// (a few launches of each selected kernel and launch configuration, ncu 2025.3's --filter-mode
// per-launch-config); bounded: the selection's regex with one --launch-count bound, then one pass per
// kernel the bound missed (what every ncu can do; chosen by itself when the probed ncu lacks the filter mode).
enum class NcuPlanMode { per_kernel, bounded };
inline std::span<const std::string_view> choice_names(NcuPlanMode) noexcept {
  static constexpr std::string_view names[] = {"per-kernel", "bounded"};
  return names;
}

// Where the step view's steps come from (run.step_source; llmprof/sync_steps.hpp).
enum class StepSource {
  automatic,  // NVTX ranges; without any NVTX range in a capture of the workload's own window, synchronisation
  ranges,     // NVTX ranges only
  sync,       // host synchronisation only
};
inline std::span<const std::string_view> choice_names(StepSource) noexcept {
  static constexpr std::string_view names[] = {"auto", "ranges", "sync"};
  return names;
}

struct LLMPROF_API RunConfig {
  std::filesystem::path runs_root = "runs";
  std::string run_id;               // empty: generated (UTC timestamp + suffix)
  int keep_newest_runs = 0;         // 0: keep every run
  std::optional<int> device_index;  // sets CUDA_VISIBLE_DEVICES for the workload; unset: inherited
  std::string stage = "decode";     // the NVTX stage that top-N selection looks at
  int top_n_kernels = 10;
  OnEmptyGate on_empty_gate = OnEmptyGate::diagnose;
  double report_size_cap_gb = 2.0;  // warn when a report is larger
  double min_free_space_gb = 5.0;   // refuse to profile below this free space on runs_root
  bool enable_stage1 = true, enable_nsys = true, enable_ncu = true, enable_analyze = true, enable_report = true;
  // Added after the enable_* flags so that aggregate initialisers written before them stay valid.
  // > 0: select by coverage of the stage's kernel time instead of top-N; 0: by top_n_kernels. A configuration
  // file or override that sets top_n_kernels after the last one that set this selects by count (config.cpp);
  // a configuration built in code sets kernel_coverage = 0 for that.
  double kernel_coverage = 0.9;
  int max_kernels = 30;          // cap on distinct kernels of a coverage selection
  int repeats = 1;               // bare stage-1 runs; >= 2 gives a confidence interval
  bool record_gpu_state = true;  // nvidia-smi clocks/temperature/power/throttling around GPU stages
  // Processes a stage's workload (or tool) started that outlive it: reported by name and PID after every stage;
  // the bare run's are then sent SIGTERM and, after survivor_grace_s, SIGKILL, unless leave_survivors (a
  // profiler's are left: nsys finishes its report in a process of its own). Only the stage's own tree.
  bool leave_survivors = false;
  double survivor_grace_s = 5.0;
  // Where the engine-step view's steps come from: NVTX ranges, or the host's per-step synchronisation
  // (llmprof/sync_steps.hpp); auto: ranges, and synchronisation when a capture not gated on a range holds no range
  // of the workload's own (none, or only library ranges).
  StepSource step_source = StepSource::automatic;
  // NVTX ranges to treat as a library's, beside the built-in rules (llmprof/library_ranges.hpp): listed, never the
  // main stage, a gate, a step kind or discovery's choice. "NAME" or "NAME@DOMAIN", `*` for any run of characters.
  std::vector<std::string> ignore_ranges;

  bool operator==(const RunConfig&) const = default;
};

struct LLMPROF_API WorkloadConfig {
  std::vector<std::string> argv;          // empty: the bundled example (llmprof-decode)
  std::vector<std::string> example_args;  // extra flags for the bundled example
  std::map<std::string, std::string> env;
  std::filesystem::path cwd;  // empty: the current directory
  double timeout_s = 600;

  bool operator==(const WorkloadConfig&) const = default;
};

// run.stage = "auto": the step kind with the most GPU time inside the captured window (the serving preset's).
inline constexpr std::string_view kAutoStage = "auto";

// nsys.gpu_metrics: GPU-metrics sampling off, "auto" (kGpuMetricsDefaultHz where the probe finds it available),
// or at a frequency asked for explicitly. The config file spells it "off", "auto" or the frequency in Hz as a
// string ("20000"); load_config parses that once (parse_gpu_metrics_setting), so nothing downstream compares text.
enum class GpuMetricsMode { off, automatic, frequency };
struct LLMPROF_API GpuMetricsSetting {
  GpuMetricsMode mode = GpuMetricsMode::automatic;
  int frequency_hz = 0;  // GpuMetricsMode::frequency only; nsys takes kGpuMetricsMinHz..kGpuMetricsMaxHz

  static constexpr GpuMetricsSetting off() noexcept { return {GpuMetricsMode::off, 0}; }
  static constexpr GpuMetricsSetting automatic() noexcept { return {GpuMetricsMode::automatic, 0}; }
  static constexpr GpuMetricsSetting at_hz(int hz) noexcept { return {GpuMetricsMode::frequency, hz}; }
  bool operator==(const GpuMetricsSetting&) const = default;
};
inline constexpr int kGpuMetricsMinHz = 10;      // nsys 2025.3 `profile --help`: --gpu-metrics-frequency 10..200000
inline constexpr int kGpuMetricsMaxHz = 200000;

// "off", "auto", or a whole number of Hz from kGpuMetricsMinHz to kGpuMetricsMaxHz, written without sign, spaces
// or leading '+'. Anything else is an error naming nsys.gpu_metrics, the value and the forms it takes.
LLMPROF_API Result<GpuMetricsSetting> parse_gpu_metrics_setting(std::string_view text);
// The config file's spelling: "off", "auto", or the frequency ("20000"); parse_gpu_metrics_setting reads it back.
LLMPROF_API std::string format_gpu_metrics_setting(const GpuMetricsSetting& setting);

struct LLMPROF_API NsysConfig {
  std::filesystem::path path;  // empty: probe
  std::vector<std::string> trace = {"cuda", "nvtx"};
  NsysProcessScope sample = NsysProcessScope::none;
  NsysProcessScope cpuctxsw = NsysProcessScope::none;
  NsysCaptureRange capture_range = NsysCaptureRange::nvtx;
  std::string nvtx_capture = "decode";
  NsysCaptureRangeEnd capture_range_end = NsysCaptureRangeEnd::stop;  // used when capture_range is not none
  std::vector<std::string> nvtx_domain_include, nvtx_domain_exclude;
  std::map<std::string, std::string> env_vars;
  bool profile_stats = false;                 // nsys profile --stats=true (the pipeline runs nsys stats itself)
  std::vector<std::string> stats_reports;     // empty: all that libllmprof parses
  std::vector<std::string> stats_extra_args;  // appended to `nsys stats` before the report
  bool export_sqlite = true;                  // the timeline engine reads MAIN/nsys/profile.sqlite
  // When the capture recorded CUDA graph launches whole (--cuda-graph-trace=graph, nsys's default), whose
  // kernels its stats do not list: capture again traced per node (MAIN/nsys/node/) for the kernel figures.
  bool graph_node_pass = true;
  double timeout_s = 900;               // nsys profile (the workload under nsys)
  double postprocess_timeout_s = 1800;  // each of: .qdstrm import, nsys stats, nsys export
  std::vector<std::string> extra_args;
  // Added after extra_args so that aggregate initialisers written before them stay valid.
  int capture_windows = 0;  // with capture_range_end repeat: at most this many windows (repeat:N); 0: no bound
  // A window bounded in engine steps when the workload opens none: the step analysis keeps instances
  // capture_skip .. capture_skip + capture_count - 1 of the step range (0 count: all). nsys has no option to
  // skip instances of an NVTX range, so this filters the analysed timeline; the capture itself is not cut.
  int capture_skip = 0;
  int capture_count = 0;
  // nsys profile --wait. primary: the capture ends with the workload's own process, and what it leaves running
  // is ended after the stage like every stage's survivors (run.leave_survivors); all: nsys waits for them too.
  NsysWait wait = NsysWait::primary;
  // GPU-metrics sampling in every capture (main, node-traced, windows, ranks): auto samples at
  // kGpuMetricsDefaultHz where the probe finds it available and says why not elsewhere; off; or a frequency
  // asked for explicitly, whose absence is then a warning on the run.
  GpuMetricsSetting gpu_metrics = GpuMetricsSetting::automatic();
  std::string gpu_metrics_set;  // nsys --gpu-metrics-set alias; empty: the set the probe matched to the GPU's chip
  // A workload with no NVTX range of its own that opens a cudaProfilerStart/Stop window: true takes the window out of
  // the discovery capture it already has (the SQLite export restricted to the window) instead of running the
  // workload once more under nsys gated on the window (on the H100, a Hugging Face generate(): 15.5 s of 34 s of the
  // stage); false captures again, for a report file (.nsys-rep) that holds only the window.
  bool restrict_discovery_to_window = true;

  bool operator==(const NsysConfig&) const = default;
};

struct LLMPROF_API NcuConfig {
  std::filesystem::path path;
  std::string set = "llmprof";  // libllmprof's own section (kLlmprofNcuSet), or one of ncu's sets
  std::vector<std::string> sections;
  std::vector<std::string> metrics;
  std::vector<std::string> nvtx_include = {"decode/"};
  std::vector<std::string> nvtx_exclude;
  std::string kernel_regex;  // empty: built from the top-N selection
  NcuKernelNameBase kernel_name_base = NcuKernelNameBase::demangled;
  std::int64_t launch_skip = 0;
  std::int64_t launches_per_kernel = 1;     // each selected kernel profiled at least this often
  std::int64_t max_launches = 200;          // bound on the whole ncu run
  NcuPlanMode plan = NcuPlanMode::per_kernel;  // bounded where ncu lacks per-launch-config (see deep-profile.toml)
  std::int64_t launches_per_config = 1;     // per-kernel plan: launches per (kernel, launch configuration)
  std::int64_t plan_max_launch_count = 16;  // per-kernel plan: highest --launch-count to reach shared configurations
  double seconds_per_launch = 0;            // per-kernel plan estimate; 0: the set's own figure (pipeline/ncu_sets)
  double start_up_overhead_s = 3.5;         // per-kernel plan: ncu's addition to a pass's start-up (H100, measured)
  double max_seconds = 0;                   // per-kernel plan: bound on its estimate (kernels left out); 0: none
  double seconds_per_pass = 0;              // per-kernel plan: one workload replay under ncu; 0: estimated
  double seconds_per_intercepted_launch = 0.00045;  // per-kernel plan: ncu's cost per launch it does not profile
  bool end_workload_when_planned = true;  // per-kernel plan: end a pass's workload once its launches are profiled
  double workload_end_grace_s = 3;        // between that SIGTERM to the workload and its SIGKILL
  double pass_timeout_s = 0;  // each pass's bound, past which its workload is ended; 0: from the pass's estimate
  bool retry_without_filter = true;         // "No kernels were profiled": once more, unfiltered, bounded
  NcuReplayMode replay_mode = NcuReplayMode::kernel;
  NcuClockControl clock_control = NcuClockControl::base;
  NcuCacheControl cache_control = NcuCacheControl::all;
  bool target_all_processes = true;
  bool print_units_base = true;
  double timeout_s = 1800;             // ncu profile
  double postprocess_timeout_s = 600;  // ncu --import ... --csv
  std::vector<std::string> extra_args;

  bool operator==(const NcuConfig&) const = default;
};

struct LLMPROF_API DeepProfileConfig {
  RunConfig run;
  WorkloadConfig workload;
  NsysConfig nsys;
  NcuConfig ncu;

  bool operator==(const DeepProfileConfig&) const = default;
};

struct LLMPROF_API ConfigSources {
  std::vector<std::filesystem::path> files;  // layered in order (default, then preset / --config)
  std::vector<std::string> overrides;        // "section.key=value", applied last
};

// The nsys and ncu sections as their command builders' options: the one place a configuration key becomes a
// command-line option (docs/architecture.md, "Adding a tool option"). What a run decides is left for the pipeline
// to add: the executable the probe found, whether the capture is gated this time, the kernel filter and its
// launch count, the output, the workload.
LLMPROF_API NsysProfileOptions nsys_profile_options(const NsysConfig& config);

// nsys.gpu_metrics's sampling frequency: 20 kHz for auto (on the H100 the 1b --cuda-graphs decode ran at
// 2.49 ms/token at 20 kHz and at 100 kHz against 2.47 bare, and an 8 ms eager step holds 160 samples at
// 20 kHz: a 2.5 ms graph step still holds 50); the given frequency; nullopt for off or a frequency outside
// kGpuMetricsMinHz..kGpuMetricsMaxHz (validate_config rejects it first).
inline constexpr int kGpuMetricsDefaultHz = 20000;
LLMPROF_API std::optional<int> gpu_metrics_frequency_hz(const NsysConfig& config);
LLMPROF_API NcuProfileOptions ncu_profile_options(const NcuConfig& config);

// Loads, layers and validates. Errors name the file (or "command line"), line and column, the key, the
// expected type, and suggest the nearest valid key ("nsys.nvtx_captur" -> "did you mean
// nsys.nvtx_capture?"). Override values are parsed as TOML values (10, true, ["a","b"], {K="v"}); a
// value that is not valid TOML is taken as a bare string (nsys.nvtx_capture=decode). A table entry is
// set with a third component: workload.env.FOO=bar.
LLMPROF_API Result<DeepProfileConfig> load_config(const ConfigSources& sources);

// The checks load_config runs after layering, for a config built in code: enumerated values, ranges
// (top_n_kernels >= 1, timeouts > 0, ...) and cross-field rules (an NVTX gate needs a range name).
LLMPROF_API Result<void> validate_config(const DeepProfileConfig& config);

// The library-range rules of a run (llmprof/library_ranges.hpp): the built-in ones, then one per
// run.ignore_ranges entry. An error only for an entry validate_config rejects too.
LLMPROF_API Result<LibraryRanges> library_ranges_of(const DeepProfileConfig& config);

// The resolved configuration as TOML (MAIN/config.toml), loadable again by load_config to an equal
// config (device_index, when unset, appears as a comment).
LLMPROF_API std::string config_to_toml(const DeepProfileConfig& config);

// Every valid dotted key with its type and one-line description (for --keys, --help and suggestions).
struct LLMPROF_API ConfigKeyInfo {
  std::string key;   // "nsys.nvtx_capture"
  std::string type;  // "string", "path", "integer", "float", "boolean", "string array", "table"
  std::string description;
  std::vector<std::string> allowed_values;  // empty: any value of the type
  std::string constraint;                   // e.g. ">= 1", "> 0"; empty: none
};
LLMPROF_API const std::vector<ConfigKeyInfo>& config_schema();

// <dir>/<name>.toml in the first of search_dirs that has it. Where presets live (the CLI's order):
// $LLMPROF_CONFIG_DIR, then <exe>/../share/llmprof/config, then the source tree's config/.
// Not found: an error listing the directories searched and the presets available there.
LLMPROF_API Result<std::filesystem::path> find_preset(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_dirs);

// What a user picked on a command line: the sources are the default file "deep-profile" (required, found
// with find_preset), then the preset, then each --config file, then the overrides.
struct LLMPROF_API ConfigSelection {
  std::string preset;                               // empty: none
  std::vector<std::filesystem::path> config_files;  // layered after the preset, in order
  std::vector<std::string> overrides;
};
LLMPROF_API Result<ConfigSources> resolve_config_sources(const ConfigSelection& selection,
                                             const std::vector<std::filesystem::path>& search_dirs);

}  // namespace llmprof
