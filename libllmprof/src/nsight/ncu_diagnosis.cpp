// Reads an ncu run's console output (Nsight Compute 2025.3.1 wording, tests/data/h100-nsight-2025.3/cli/).
#include "llmprof/ncu_diagnosis.hpp"

#include <charconv>
#include <regex>

#include "core/text.hpp"

namespace llmprof {
namespace {

using detail::join;
using detail::trim;

void read_prof_line(const std::string& body, NcuOutputDiagnosis& diagnosis) {
  // ==PROF== Profiling "reduce_kernel" - 0 (1/40): 0%....50%....100% - 17 passes
  static const std::regex profiling(R"rx(^Profiling "(.*)" - \d+ \((\d+)/(\d+)\))rx");
  std::smatch match;
  if (std::regex_search(body, match, profiling)) {
    ++diagnosis.profiled_kernels;
    diagnosis.kernel_names.push_back(match[1].str());
    // from_chars, not stoi: a count too large for int (damaged output) must not throw.
    int planned = 0;
    const auto digits = match[3].str();
    if (std::from_chars(digits.data(), digits.data() + digits.size(), planned).ec == std::errc())
      diagnosis.planned_kernels = planned;
  } else if (body.starts_with("Report: ")) {
    diagnosis.report_path = trim(body.substr(8));
  } else if (body.starts_with("Connected to process")) {
    ++diagnosis.connected_processes;
  }
}

}  // namespace

NcuOutputDiagnosis diagnose_ncu_output(std::string_view output) {
  NcuOutputDiagnosis diagnosis;
  static const std::regex numbered(R"(^\s*\d+\.\s+(.+)$)");
  bool in_kernel_list = false;
  for (const std::string& line : detail::split_lines(output)) {
    if (trim(line).empty()) continue;
    if (line.starts_with("==PROF== ")) {
      in_kernel_list = false;
      read_prof_line(line.substr(9), diagnosis);
    } else if (line.starts_with("==ERROR== ")) {
      in_kernel_list = false;
      diagnosis.errors.emplace_back(trim(line.substr(10)));
      if (diagnosis.errors.back().find("failed to connect to the CUDA driver") != std::string::npos)
        diagnosis.no_cuda_driver = true;
    } else if (line.starts_with("==WARNING== ")) {
      in_kernel_list = false;
      const std::string warning(trim(line.substr(12)));
      if (warning.starts_with("No kernels were profiled")) diagnosis.no_kernels_profiled = true;
      if (warning.find("NVTX include expressions match only push/pop ranges") != std::string::npos) {
        diagnosis.nvtx_filter_note = true;
      }
      diagnosis.warnings.push_back(warning);
    } else if (trim(line) == "Available Kernels:") {
      in_kernel_list = true;
    } else if (in_kernel_list) {
      std::smatch match;
      if (std::regex_match(line, match, numbered)) {
        diagnosis.available_kernels.emplace_back(trim(match[1].str()));
      } else {
        in_kernel_list = false;  // the application printed something after the list
      }
    }
  }
  return diagnosis;
}

std::optional<Error> ncu_output_error(const NcuOutputDiagnosis& diagnosis, std::string_view filters) {
  const std::string filter_text = filters.empty() ? std::string() : " (filters: " + std::string(filters) + ")";
  for (const auto& error : diagnosis.errors) {
    if (error.find("did not match any section") != std::string::npos) {
      return make_error(ErrorCode::invalid_argument, "ncu rejected a --section value: " + error,
                        "--section takes exact identifiers from `ncu --list-sections` (e.g. SpeedOfLight), "
                        "not regular expressions",
                        error);
    }
  }
  if (diagnosis.no_cuda_driver) {
    return make_error(ErrorCode::unsupported,
                      "ncu could not connect to the CUDA driver, so the application did not run and no kernel was "
                      "profiled: kernel metrics need an NVIDIA GPU and its driver",
                      "run on a machine with an NVIDIA GPU (nvidia-smi works there); on this machine the timeline "
                      "(nsys) and the bare run still work",
                      "failed to connect to the CUDA driver");
  }
  if (diagnosis.has_errors()) {
    return make_error(ErrorCode::process_failed, "ncu reported an error: " + join(diagnosis.errors, " ", 4),
                      "see the ncu log for the full output", diagnosis.errors.front());
  }
  if (diagnosis.no_kernels_profiled) {
    std::string hint;
    if (!diagnosis.available_kernels.empty()) {
      hint = "the application launched these kernels: " + join(diagnosis.available_kernels, ", ", 10) +
             "; adjust --kernel-name (regex:<expression>) or the launch skip/count to match them";
    } else if (diagnosis.nvtx_filter_note) {
      hint =
          "NVTX include expressions match only push/pop ranges and need a trailing '/' (e.g. decode/); "
          "check the range names the workload emits, and the NVTX domain";
    } else {
      hint = "check the kernel and NVTX filters against what the workload launches";
    }
    return make_error(ErrorCode::no_report, "ncu profiled no kernels: its filters matched nothing" + filter_text, hint,
                      std::string(filters));
  }
  return std::nullopt;
}

}  // namespace llmprof
