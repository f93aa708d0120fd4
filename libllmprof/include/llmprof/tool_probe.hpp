// Tool probe: finds nsys and ncu, reads their versions and what they can do on this machine.
//
// Probing a missing tool is not an error: the result says "not found" and where it looked. A harness
// needs the calls right below; the types they return follow. The parsers and checks the probe is built from
// are the library's own (src/nsight/tool_listings.hpp), where tests feed them recorded tool output.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"
#include "llmprof/process.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct ProbeOptions;
struct NsysInfo;
struct NcuInfo;
struct ProbedTools;
struct ProbeVerdict;
struct NvidiaDriver;

// The calls a harness needs:
//   auto runner = make_system_process_runner();
//   const NsysInfo nsys = probe_nsys(*runner, {});
//   const NcuInfo ncu = probe_ncu(*runner, {});
//   const ProbedTools tools = probe_tools(*runner, {});  // both, side by side: the time of the slower one
//   const ProbeVerdict verdict = assess_readiness(nsys, ncu, detect_nvidia_driver());  // ready / degraded /
//                                                                                      // not_ready, with fixes
LLMPROF_API NsysInfo probe_nsys(ProcessRunner& runner, const ProbeOptions& options);
LLMPROF_API NcuInfo probe_ncu(ProcessRunner& runner, const ProbeOptions& options);
// Each tool's listings are separate start-ups of it, so every probe runs them side by side and calls the runner from
// several threads at once (the system runner allows it; a harness's own runner must too).
LLMPROF_API ProbedTools probe_tools(ProcessRunner& runner, const ProbeOptions& options);
// Whether this machine can run the deep-profile pipeline with these tools and this driver, why not, and how to
// fix it. Without an NVIDIA driver nsys still traces the host side (NVTX, CUDA API calls) but there are no
// kernels to select or profile: degraded at best, never ready.
LLMPROF_API ProbeVerdict assess_readiness(const NsysInfo& nsys, const NcuInfo& ncu, const NvidiaDriver& driver);

// "2025.3.1.0" -> {2025, 3, 1, 0}. Compares numerically.
struct LLMPROF_API ToolVersion {
  int year = 0, major = 0, minor = 0, patch = 0;
  std::string text;  // as printed, e.g. "2025.3.1.0 (build 36398880) (public-release)"
  auto operator<=>(const ToolVersion& other) const {
    if (auto c = year <=> other.year; c != 0) return c;
    if (auto c = major <=> other.major; c != 0) return c;
    if (auto c = minor <=> other.minor; c != 0) return c;
    return patch <=> other.patch;
  }
  bool operator==(const ToolVersion& other) const { return (*this <=> other) == 0; }
  std::string to_string() const;  // "2025.3.1.0"
};

// `nsys status --environment`: "Name: value" / "Name = value" lines as named checks.
struct LLMPROF_API EnvironmentCheck {
  std::string name;
  std::string value;
  bool ok = true;  // false for values such as "Not Available", "Fail", "disabled"
};

// `ncu --list-sections` / `ncu --list-sets`: the Identifier column of the fixed-width table.
struct LLMPROF_API NcuSection {
  std::string identifier;
  std::string display_name;
  bool enabled_by_default = false;
};
struct LLMPROF_API NcuSet {
  std::string identifier;
  std::vector<std::string> sections;
  bool enabled_by_default = false;
};

// Health of the QdstrmImporter that converts nsys's raw .qdstrm into a .nsys-rep.
struct LLMPROF_API ImporterHealth {
  std::filesystem::path path;                  // empty when no importer was found next to nsys
  bool loads = false;                          // `QdstrmImporter --version` ran successfully
  std::vector<std::string> missing_libraries;  // e.g. "libdw.so.1"
  std::string detail;                          // what the importer printed when it failed
  std::string fix;                             // how to make it load (which package / LD_LIBRARY_PATH)
  // Whether the importer sits where nsys itself looks (<real nsys dir>/../host-linux-x64 or the Nsight
  // Compute bundle's directory). Debian 12 splits the install (nsys under /usr/lib/x86_64-linux-gnu/
  // nsight-systems/target-linux-x64, the importer under /usr/lib/nsight-systems/host-linux-x64): nsys then
  // prints "The importer binary and its dependencies were not found" and leaves a .qdstrm, which
  // resolve_report imports with this importer.
  bool found_by_nsys = false;
};

// Whether nsys can sample the GPU's own counters here (nsys profile --gpu-metrics-devices), from its own listing:
// nsys 2025.3.1 on the H200 listed "0: Hopper GH100 | NVIDIA H200 PCI[...]" and the set "gh100"; nsys 2022.4
// without a GPU prints "NVIDIA GPUs not found, feature is not available" (and spells the option
// --gpu-metrics-device, GPU ids only, no "all").
struct LLMPROF_API GpuMetricsSupport {
  bool available = false;
  std::string devices_option;        // "--gpu-metrics-devices" (2025.3) or "--gpu-metrics-device" (2022.4)
  std::string devices;               // the option's value: "all", or the listed GPU ids joined by commas
  bool cuda_visible = false;         // nsys takes "cuda-visible" (2025.3.1 lists it; 2022.4 does not)
  // Each listed GPU id's PCI bus location ("0" -> "0000:00:06.0", from "PCI[0000:00:06.0]" in its line): what
  // per-rank sampling checks a rank's GPU against.
  std::map<std::string, std::string> buses;
  std::vector<std::string> listed;   // the devices nsys listed, e.g. "0: Hopper GH100 | NVIDIA H200 PCI[...]"
  std::string metric_set;            // the set that names the listed chip (e.g. "gh100"); "" when none does
  std::string reason;                // why it is not available, in nsys's words where it gave some
};

struct LLMPROF_API NsysInfo {
  bool found = false;
  std::filesystem::path path;
  std::vector<std::filesystem::path> searched;  // every place looked, in order
  std::optional<ToolVersion> version;
  std::string report_extension;  // ".nsys-rep" (2021.4 and later) or ".qdrep"
  // How `nsys export` takes the output type: "--type sqlite" for every supported version.
  std::vector<std::string> export_sqlite_arguments;
  std::vector<EnvironmentCheck> environment;
  ImporterHealth importer;
  // Report names `nsys stats --help-reports` listed (2022.4: "nvtxsum", ...; 2025.3: "nvtx_sum", ...).
  std::vector<std::string> stats_reports;
  GpuMetricsSupport gpu_metrics;
  std::vector<std::string> problems;  // readable problems found while probing
};

struct LLMPROF_API NcuInfo {
  bool found = false;
  std::filesystem::path path;
  std::vector<std::filesystem::path> searched;
  std::optional<ToolVersion> version;
  std::vector<NcuSection> sections;
  std::vector<NcuSet> sets;
  std::string sections_listing;  // `ncu --list-sections` verbatim, for sections.txt
  // The install's sections/ folder and every metric name its .section files collect, so the probe can
  // say which analyses the sets can feed (ncu 2022.3's roofline set has no sm__ops_path_tensor_* FLOP).
  std::filesystem::path sections_directory;
  std::vector<std::string> section_metrics;
  // The --filter-mode values `ncu --help` lists: 2022.3 has global and per-gpu, 2025.3.1 adds
  // per-launch-config, which the per-kernel ncu plan needs. Empty when the help could not be read.
  std::vector<std::string> filter_modes;
  // Why no sections/ folder was read when one of another version was found (never used in its place).
  std::string sections_note;
  std::vector<std::string> problems;

  bool has_section(std::string_view identifier) const;
  bool has_set(std::string_view identifier) const;
  bool has_filter_mode(std::string_view mode) const;
};

struct LLMPROF_API ProbeOptions {
  std::filesystem::path nsys_path;  // explicit path from config; empty to search
  std::filesystem::path ncu_path;
  std::string path_variable;  // PATH to search; empty: the process's PATH
  // Extra install roots to search (tests point these at fake trees); the usual locations
  // (/usr/local/cuda/bin, /opt/nvidia/nsight-systems/*/bin, /opt/nvidia/nsight-compute/*, ...) follow.
  std::vector<std::filesystem::path> extra_search_roots;
  bool use_default_locations = true;
};

struct LLMPROF_API ProbedTools {
  NsysInfo nsys;
  NcuInfo ncu;
};

// Whether this machine has an NVIDIA kernel driver loaded (/proc/driver/nvidia/version). Without it
// ncu fails with "failed to connect to the CUDA driver" and nsys records no CUDA activity.
struct LLMPROF_API NvidiaDriver {
  bool present = false;
  std::string evidence;  // the version line, or why the driver is considered absent
};
LLMPROF_API NvidiaDriver detect_nvidia_driver();

// Whether this machine can run the deep-profile pipeline.
enum class Readiness {
  ready,     // nsys and ncu found, versions read, the importer loads
  degraded,  // something works: one tool missing, importer broken, unreadable version, failed check
  not_ready  // neither nsys nor ncu can be used
};
LLMPROF_API const char* to_string(Readiness readiness) noexcept;

struct LLMPROF_API ProbeVerdict {
  Readiness readiness = Readiness::not_ready;
  std::vector<std::string> reasons;  // why not ready/degraded, one sentence each
  std::vector<std::string> fixes;    // what to do about it, one per reason where there is a fix
  std::vector<std::string> skipped;  // pipeline stages that will be skipped ("nsys timeline", "ncu kernels")
  // Observations that do not block profiling, e.g. failed `nsys status --environment` checks (CPU
  // sampling or LBR backtraces unavailable: the pipeline traces CUDA/NVTX and does not need them).
  std::vector<std::string> notes;
};

// What the pipeline can and cannot do with these tools, one line each ("nsys stats reports: ... (2022.4
// names)", "tensor-core FLOP per kernel: no, ncu 2022.3's sections collect no sm__ops_path_tensor_*").
struct LLMPROF_API ToolAbility {
  std::string what;
  bool able = false;
  std::string detail;
};
LLMPROF_API std::vector<ToolAbility> describe_abilities(const NsysInfo& nsys, const NcuInfo& ncu);

// JSON text for env.json's "tools": {"nvidia_driver":{...},"nsys":{...},"ncu":{...},"verdict":{...}}.
LLMPROF_API std::string probe_to_json(const NsysInfo& nsys, const NcuInfo& ncu, const NvidiaDriver& driver);

}  // namespace llmprof
