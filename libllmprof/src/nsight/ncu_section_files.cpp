// Reads the metric names out of ncu's .section files (protobuf text: `Name: "dram__bytes.sum"` lines), so
// the probe can tell which analyses an install's sets can feed before anything is profiled.
#include "nsight/ncu_section_files.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <system_error>

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// <dir>/sections for the ncu path as given and its realpath; NVIDIA's CUDA toolkit wrapper
// (/usr/local/cuda/bin/ncu -> ../nsight-compute-<v>/sections); Debian 12 (/usr/lib/nsight-compute/ncu,
// sections in /usr/lib/x86_64-linux-gnu/nsight-compute/sections).
std::vector<fs::path> sections_candidates(const fs::path& ncu) {
  std::vector<fs::path> directories = {ncu.parent_path()};
  std::error_code error;
  const fs::path real = fs::canonical(ncu, error);
  if (!error && real.parent_path() != ncu.parent_path()) directories.push_back(real.parent_path());
  std::vector<fs::path> candidates;
  for (const auto& directory : directories) {
    candidates.push_back(directory / "sections");
    const fs::path parent = directory.parent_path();
    candidates.push_back(parent / "x86_64-linux-gnu" / "nsight-compute" / "sections");
    std::vector<fs::path> versioned;
    for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
      if (it->path().filename().string().rfind("nsight-compute", 0) == 0) versioned.push_back(it->path() / "sections");
    }
    std::sort(versioned.begin(), versioned.end(), std::greater<>());
    candidates.insert(candidates.end(), versioned.begin(), versioned.end());
  }
  return candidates;
}

}  // namespace

void read_section_metrics(NcuInfo& info) {
  std::error_code error;
  for (const auto& candidate : sections_candidates(info.path)) {
    if (fs::is_directory(candidate, error)) {
      info.sections_directory = candidate;
      break;
    }
  }
  // No sections/ folder (a wrapper script elsewhere, a fake): not a problem for profiling; the probe's
  // abilities then say that the metrics could not be checked.
  if (info.sections_directory.empty()) return;
  static const std::regex name_line(R"rx(Name:\s*"([A-Za-z0-9_.]+__[A-Za-z0-9_.]+)")rx");
  std::set<std::string> metrics;
  for (fs::directory_iterator it(info.sections_directory, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() != ".section") continue;
    std::ifstream in(it->path());
    std::string line;
    std::smatch match;
    while (std::getline(in, line)) {
      if (std::regex_search(line, match, name_line)) metrics.insert(match[1].str());
    }
  }
  info.section_metrics.assign(metrics.begin(), metrics.end());
}

}  // namespace llmprof::detail
