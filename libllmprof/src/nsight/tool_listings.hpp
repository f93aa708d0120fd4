// The parsers and checks the tool probe is built from (llmprof/tool_probe.hpp): what nsys and ncu print for their
// versions, listings and status, where their pieces sit. Internal: tests and the fuzz targets feed them recorded
// tool output; a harness uses probe_nsys / probe_ncu.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof {

// Parse the first line of `nsys --version` / the version line of `ncu --version`, current and
// older formats. An Error (parse_error) names the text it could not read.
Result<ToolVersion> parse_nsys_version(std::string_view version_output);
Result<ToolVersion> parse_ncu_version(std::string_view version_output);

// `nsys status --environment`: "Name: value" / "Name = value" lines as named checks.
std::vector<EnvironmentCheck> parse_nsys_status_environment(std::string_view output);
// `ncu --list-sections` / `ncu --list-sets`: the Identifier column of the fixed-width table.
std::vector<NcuSection> parse_ncu_section_list(std::string_view output);
std::vector<NcuSet> parse_ncu_set_list(std::string_view output);
// The values listed under --filter-mode in `ncu --help` ("global", "per-gpu", "per-launch-config").
std::vector<std::string> parse_ncu_filter_modes(std::string_view help);

// `nsys stats --help-reports`: the report names ("  nvtx_sum -- NVTX Range Summary" -> "nvtx_sum"; the
// ":base|:mangled" option suffixes dropped). nsys 2022.4 prints the list and exits 1.
std::vector<std::string> parse_nsys_report_list(std::string_view help_reports_output);
// `nsys profile --gpu-metrics-devices=help` (or 2022.4's --gpu-metrics-device=help): the numbered devices it
// lists ("0: Hopper GH100 | NVIDIA H200 PCI[0000:00:06.0]"), or, with none, the reason it printed.
GpuMetricsSupport parse_gpu_metrics_devices(std::string_view output, std::string devices_option);
// `nsys profile --gpu-metrics-set=help`: the alias of the first set whose description names a listed chip
// ("gh100        : General Metrics for NVIDIA GH100 (any frequency)" for "Hopper GH100"); "" when none does.
std::string choose_gpu_metrics_set(std::string_view output, const std::vector<std::string>& listed_devices);

// Where scripts/install-nsight.sh unpacks the Debian packages: $LLMPROF_NSIGHT_DIR/root when that is set,
// else /opt/llmprof/nsight/root. Searched after PATH and the usual NVIDIA and Debian install places.
std::vector<std::filesystem::path> nsight_cache_roots();
// The report file extension nsys writes: ".qdrep" before 2021.4, ".nsys-rep" from 2021.4 on.
std::string report_extension_for(const ToolVersion& nsys_version);

// Where a QdstrmImporter may sit next to this nsys, in the order they are tried:
// <nsys-dir>/../linux-desktop-glibc_2_11_3-x64/ (the nsys bundled with Nsight Compute),
// <nsys-dir>/../host-linux-x64/ (a standalone Nsight Systems), <nsys-dir>/, each for the path as
// given and for its realpath.
std::vector<std::filesystem::path> importer_candidates(const std::filesystem::path& nsys_path);
// Finds the importer next to nsys and runs `QdstrmImporter --version` to see whether it loads.
ImporterHealth check_importer(ProcessRunner& runner, const std::filesystem::path& nsys_path);
// Library names from the dynamic loader's "error while loading shared libraries: X: cannot open
// shared object file" lines, in order, without duplicates.
std::vector<std::string> parse_missing_libraries(std::string_view loader_output);

}  // namespace llmprof
