// NcuCommand: typed builders for Nsight Compute (`ncu`) profile, import/export and list argv.
#pragma once

#include <cstdint>
#include <filesystem>
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

// Each enum's spellings are ncu's own (`ncu --help`, 2025.3.1) and the config file's.

// --kernel-name-base: which form of a kernel's name --kernel-name matches. nsys prints demangled names,
// so a selection made from nsys can be written for function and demangled, never for mangled.
enum class NcuKernelNameBase { function, demangled, mangled };
inline std::span<const std::string_view> choice_names(NcuKernelNameBase) noexcept {
  static constexpr std::string_view names[] = {"function", "demangled", "mangled"};
  return names;
}

enum class NcuReplayMode { kernel, application, range, app_range };  // --replay-mode
inline std::span<const std::string_view> choice_names(NcuReplayMode) noexcept {
  static constexpr std::string_view names[] = {"kernel", "application", "range", "app-range"};
  return names;
}

// --clock-control. ncu's third value, reset, resets the GPU clocks and exits without profiling, so
// it is not offered.
enum class NcuClockControl { base, none };
inline std::span<const std::string_view> choice_names(NcuClockControl) noexcept {
  static constexpr std::string_view names[] = {"base", "none"};
  return names;
}

enum class NcuCacheControl { all, none };  // --cache-control
inline std::span<const std::string_view> choice_names(NcuCacheControl) noexcept {
  static constexpr std::string_view names[] = {"all", "none"};
  return names;
}

// --filter-mode (ncu 2023.1 and later; 2025.3.1 documents all three). per-launch-config applies the kernel
// and launch filters separately to each launch configuration (grid, block, shared memory): the per-kernel
// ncu plan (llmprof/ncu_plan.hpp) rests on it.
enum class NcuFilterMode { global, per_gpu, per_launch_config };
inline std::span<const std::string_view> choice_names(NcuFilterMode) noexcept {
  static constexpr std::string_view names[] = {"global", "per-gpu", "per-launch-config"};
  return names;
}

// ncu.set = "llmprof": libllmprof's own section, which collects what the analysis reads and nothing else
// (config/ncu-sections/LlmprofRoofline.section, installed with the configuration). ncu gets
// --section-folder <that folder> --section LlmprofRoofline instead of --set; any other ncu.set is one of ncu's
// own sets (ncu --list-sets).
inline constexpr std::string_view kLlmprofNcuSet = "llmprof";
inline constexpr std::string_view kLlmprofSectionIdentifier = "LlmprofRoofline";
inline constexpr std::string_view kLlmprofSectionFile = "ncu-sections/LlmprofRoofline.section";  // in the config dir

struct LLMPROF_API NcuProfileOptions {
  std::filesystem::path ncu = "ncu";
  bool target_all_processes = true;                   // --target-processes all (python/launcher workloads)
  // false: --profile-from-start off, so ncu profiles only between cudaProfilerStart and cudaProfilerStop
  // (the workload's own capture window); true leaves ncu's default (profile from the start).
  bool profile_from_start = true;
  std::vector<std::string> nvtx_include;              // --nvtx --nvtx-include EXPR (repeated), e.g. "decode/"
  std::vector<std::string> nvtx_exclude;              // --nvtx-exclude EXPR
  std::string set;                                    // --set NAME (validated against probed sets)
  std::vector<std::string> sections;                  // --section ID, exact identifiers only (no regex)
  // --section-folder DIR, repeated: ncu then reads section files from these folders only, not from its own
  // (checked with ncu 2022.3 --list-sections); NcuCommand::profile(tool, ...) adds the probed folder of ncu's
  // own sections when `sections` names any.
  std::vector<std::filesystem::path> section_folders;
  std::vector<std::string> own_sections;  // --section ID of a file in section_folders (not among ncu's own)
  std::vector<std::string> metrics;                   // --metrics a,b,c
  std::string kernel_name;                            // --kernel-name VALUE ("regex:..." or exact)
  std::optional<NcuKernelNameBase> kernel_name_base;  // --kernel-name-base; unset: ncu's default (function)
  std::optional<std::int64_t> launch_skip;            // --launch-skip N
  std::optional<std::int64_t> launch_count;           // --launch-count N
  std::optional<NcuFilterMode> filter_mode;      // unset: ncu's default (global); validate() needs the probe to list it
  std::optional<NcuReplayMode> replay_mode;      // unset: ncu's default (kernel)
  std::optional<NcuClockControl> clock_control;  // unset: ncu's default (base)
  std::optional<NcuCacheControl> cache_control;  // unset: ncu's default (all)
  std::filesystem::path output;                  // -o FILE (ncu appends .ncu-rep)
  bool force_overwrite = true;                   // -f
  std::filesystem::path log_file;                // --log-file FILE
  std::vector<std::string> extra_args;           // passed verbatim before the application (config: ncu.extra_args)
  std::vector<std::string> application;
};

enum class NcuPage { raw, details };

class LLMPROF_API NcuCommand {
 public:
  static NcuCommand profile(NcuProfileOptions options);
  // The same, run by the probed ncu (tool.path) when options.ncu is left at its bare default "ncu"; an explicit
  // options.ncu is kept. A tool the probe did not find leaves "ncu" (validate says so).
  static NcuCommand profile(const NcuInfo& tool, NcuProfileOptions options);
  // ncu --import ... by the probed ncu (tool.path; "ncu" when the probe did not find one).
  static NcuCommand import_csv(const NcuInfo& tool, std::filesystem::path report, NcuPage page, bool base_units);
  // ncu --import REPORT --page raw|details --csv [--print-units base]
  static NcuCommand import_csv(std::filesystem::path ncu, std::filesystem::path report, NcuPage page, bool base_units);
  static NcuCommand list_sections(std::filesystem::path ncu);
  static NcuCommand list_sets(std::filesystem::path ncu);

  // Errors: a --section value that looks like a regex or is not among the probed sections
  // (ncu 2025.3 rejects it only at run time: "did not match any section"), an unknown set,
  // an empty NVTX include expression, launch counts < 0, no application.
  Result<void> validate(const NcuInfo& tool, std::vector<std::string>* warnings = nullptr) const;

  // Removes invalid --section values (returning one warning per value dropped) instead of failing.
  std::vector<std::string> drop_unknown_sections(const NcuInfo& tool);

  std::vector<std::string> argv() const;
  // The same command without a profile's overwrite flag (-f): what cmd.txt records, so that a
  // pasted line cannot replace the report this command wrote into the run directory.
  NcuCommand without_overwrite() const;
  std::string to_shell_string() const;

 private:
  enum class Kind { profile, import_csv, list_sections, list_sets };
  Kind kind_ = Kind::profile;
  NcuProfileOptions profile_;
  std::filesystem::path report_;
  NcuPage page_ = NcuPage::raw;
  bool base_units_ = false;
};

}  // namespace llmprof
