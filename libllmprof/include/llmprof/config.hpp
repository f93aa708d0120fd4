// DeepProfileConfig: every knob of a deep-profile run, loaded from TOML with dotted overrides.
//
// Sources, in order: the default file (config/deep-profile.toml), an optional preset or --config file
// layered on top, then command-line overrides such as `nsys.nvtx_capture=decode`. Every key is
// type-checked against the schema; an unknown key or a wrong type is an error naming the key and the
// nearest valid one. Nothing is silently defaulted: the defaults live, commented, in the TOML file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct RunConfig {
  std::filesystem::path runs_root = "runs";
  std::string run_id;                      // empty: generated
  int keep_newest_runs = 0;                // 0: keep every run
  std::optional<int> device_index;         // sets CUDA_VISIBLE_DEVICES for the workload
  std::string stage = "decode";            // the NVTX stage that top-N selection looks at
  int top_n_kernels = 10;
  std::string on_empty_gate = "diagnose";  // diagnose | rerun_ungated | fail
  double report_size_cap_gb = 2.0;         // warn when a report is larger
  double min_free_space_gb = 5.0;          // refuse to profile below this free space on runs_root
  bool enable_stage1 = true, enable_nsys = true, enable_ncu = true, enable_analyze = true,
       enable_report = true;
};

struct WorkloadConfig {
  std::vector<std::string> argv;           // empty: the bundled example (llmprof-decode)
  std::vector<std::string> example_args;   // extra flags for the bundled example
  std::map<std::string, std::string> env;
  std::filesystem::path cwd;
  double timeout_s = 600;
};

struct NsysConfig {
  std::filesystem::path path;              // empty: probe
  std::vector<std::string> trace = {"cuda", "nvtx"};
  std::string sample = "none";
  std::string cpuctxsw = "none";
  std::string capture_range = "nvtx";      // none | nvtx | cudaProfilerApi
  std::string nvtx_capture = "decode";
  std::string capture_range_end = "stop";
  std::vector<std::string> nvtx_domain_include, nvtx_domain_exclude;
  std::map<std::string, std::string> env_vars;
  std::vector<std::string> stats_reports;  // empty: all that libllmprof parses
  bool export_sqlite = false;
  double timeout_s = 900;
  std::vector<std::string> extra_args;
};

struct NcuConfig {
  std::filesystem::path path;
  std::string set = "roofline";
  std::vector<std::string> sections;
  std::vector<std::string> metrics;
  std::vector<std::string> nvtx_include = {"decode/"};
  std::vector<std::string> nvtx_exclude;
  std::string kernel_name_base = "demangled";  // function | demangled | mangled
  std::int64_t launch_skip = 0;
  std::int64_t launches_per_kernel = 1;        // each selected kernel profiled at least this often
  std::int64_t max_launches = 200;             // bound on the whole ncu run
  std::string replay_mode = "kernel";
  std::string clock_control = "base";
  std::string cache_control = "all";
  bool target_all_processes = true;
  bool print_units_base = true;
  double timeout_s = 1800;
  std::vector<std::string> extra_args;
};

struct DeepProfileConfig {
  RunConfig run;
  WorkloadConfig workload;
  NsysConfig nsys;
  NcuConfig ncu;
};

struct ConfigSources {
  std::vector<std::filesystem::path> files;  // layered in order (default, then preset / --config)
  std::vector<std::string> overrides;        // "section.key=value", applied last
};

// Loads, layers and validates. Errors name the file, the key, the expected type, and suggest
// the nearest valid key ("nsys.nvtx_captur" -> "did you mean nsys.nvtx_capture?").
Result<DeepProfileConfig> load_config(const ConfigSources& sources);

// The resolved configuration as TOML (MAIN/config.toml), loadable again by load_config.
std::string config_to_toml(const DeepProfileConfig& config);

// Every valid dotted key with its type and one-line description (for --help and suggestions).
struct ConfigKeyInfo {
  std::string key;          // "nsys.nvtx_capture"
  std::string type;         // "string", "integer", "float", "boolean", "string array", "table"
  std::string description;
};
const std::vector<ConfigKeyInfo>& config_schema();

// Where presets live: $LLMPROF_CONFIG_DIR, then <exe>/../share/llmprof/config, then the source tree.
Result<std::filesystem::path> find_preset(const std::string& name, const std::vector<std::filesystem::path>& search_dirs);

}  // namespace llmprof
