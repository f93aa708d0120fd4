// Reads the metric names out of ncu's .section files (protobuf text: `Name: "dram__bytes.sum"` lines), so
// the probe can tell which analyses an install's sets can feed before anything is profiled.
#include "nsight/ncu_section_files.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <system_error>

#include "core/file_text.hpp"
#include "core/text.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// The folder an ncu found by a glob claims to be: "nsight-compute-2025.3.1" or "2025.3.1" (up to four
// numbers; missing ones are 0, so 2025.3.1 is ncu 2025.3.1.0). Empty when the name is no version.
std::optional<ToolVersion> folder_version(const fs::path& folder) {
  std::string name = folder.filename().string();
  for (const std::string prefix : {"nsight-compute-", "nsight-compute"}) {
    if (name.rfind(prefix, 0) == 0) {
      name = name.substr(prefix.size());
      break;
    }
  }
  static const std::regex version(R"rx((\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?)rx");
  std::smatch match;
  if (!std::regex_match(name, match, version)) return std::nullopt;
  ToolVersion found;
  int* parts[] = {&found.year, &found.major, &found.minor, &found.patch};
  for (std::size_t i = 0; i < 4; ++i) *parts[i] = match[i + 1].matched ? std::stoi(match[i + 1].str()) : 0;
  found.text = name;
  return found;
}

// The folders of the ncu a wrapper script execs. CUDA's /usr/local/cuda/bin/ncu can be a small shell
// script rather than a symlink (seen with ncu 2025.3.1 on the H100 machine, whose Nsight Compute is in
// /opt/nvidia/nsight-compute/2025.3.1): its realpath is itself, and only its text says where ncu is.
// A path that starts with a variable or a command substitution ("$APPDIR/target/.../ncu" in Nsight
// Compute's own wrapper, "$(dirname ...)/../nsight-compute-<v>/ncu") is taken relative to the script's
// folder, which is what those hold in the wrappers NVIDIA ships.
std::vector<fs::path> wrapper_targets(const fs::path& script) {
  std::error_code error;
  const auto size = fs::file_size(script, error);
  if (error || size > 64 * 1024 || !fs::is_regular_file(script, error)) return {};
  const std::string text = detail::read_file_text(script).value_or(std::string());
  if (text.rfind("#!", 0) != 0) return {};
  static const std::regex ncu_path(R"rx(([^\s"'=;|&()`]*)/ncu(?=$|[\s"';|&)`]))rx");
  std::vector<fs::path> folders;
  for (std::sregex_iterator it(text.begin(), text.end(), ncu_path), end; it != end; ++it) {
    std::string prefix = (*it)[1].str();
    const auto start = static_cast<std::size_t>(it->position(0));
    const char before = start > 0 ? text[start - 1] : '\n';
    const bool after_substitution = before == ')' || before == '}' ||
                                    (before == '"' && start > 1 &&
                                     (std::isalnum(static_cast<unsigned char>(text[start - 2])) ||
                                      text[start - 2] == '_' || text[start - 2] == '}'));
    fs::path folder;
    if (!prefix.empty() && prefix.front() == '/' && !after_substitution) {
      folder = prefix;
    } else {
      if (!prefix.empty() && prefix.front() == '$') {
        const auto slash = prefix.find('/');
        prefix = slash == std::string::npos ? "" : prefix.substr(slash + 1);
      }
      while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
      folder = script.parent_path() / prefix;
    }
    folder = fs::weakly_canonical(folder, error);
    if (error) continue;
    if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
  }
  return folders;
}

struct SectionCandidates {
  std::vector<fs::path> own;        // of the ncu itself (its folder, realpath, wrapper target, Debian's split)
  std::vector<fs::path> versioned;  // found by a glob over versioned install folders: <folder>/sections
};

// Own: <dir>/sections for the ncu path as given, its realpath and the ncu a wrapper script execs; Debian 12
// (/usr/lib/nsight-compute/ncu, sections in /usr/lib/x86_64-linux-gnu/nsight-compute/sections).
// Versioned: CUDA toolkit siblings (<cuda>/bin/ncu beside <cuda>/nsight-compute-<v>/) and NVIDIA's
// standalone installs (<root>/<v>/), newest first.
SectionCandidates sections_candidates(const fs::path& ncu, const SectionSearch& search) {
  std::vector<fs::path> directories = {ncu.parent_path()};
  std::error_code error;
  const fs::path real = fs::canonical(ncu, error);
  if (!error && real.parent_path() != ncu.parent_path()) directories.push_back(real.parent_path());
  for (const auto& target : wrapper_targets(error ? ncu : real)) {
    if (std::find(directories.begin(), directories.end(), target) == directories.end()) directories.push_back(target);
  }
  SectionCandidates candidates;
  auto add_versioned = [&](const fs::path& parent, const std::string& prefix) {
    std::vector<fs::path> found;
    std::error_code listing;
    for (fs::directory_iterator it(parent, listing), end; !listing && it != end; it.increment(listing)) {
      if (it->path().filename().string().rfind(prefix, 0) == 0) found.push_back(it->path() / "sections");
    }
    std::sort(found.begin(), found.end(), std::greater<>());
    candidates.versioned.insert(candidates.versioned.end(), found.begin(), found.end());
  };
  for (const auto& directory : directories) {
    candidates.own.push_back(directory / "sections");
    const fs::path parent = directory.parent_path();
    candidates.own.push_back(parent / "x86_64-linux-gnu" / "nsight-compute" / "sections");
    add_versioned(parent, "nsight-compute");
  }
  for (const auto& root : search.install_roots) add_versioned(root, "");
  return candidates;
}

// Picks the sections folder: one of the ncu's own, else the versioned install of the probed version.
// Another version's folder is never used; the note names what was found instead.
void choose_sections_directory(NcuInfo& info, const SectionSearch& search) {
  std::error_code error;
  const SectionCandidates candidates = sections_candidates(info.path, search);
  for (const auto& candidate : candidates.own) {
    if (fs::is_directory(candidate, error)) {
      info.sections_directory = candidate;
      return;
    }
  }
  std::vector<std::string> other_versions;
  for (const auto& candidate : candidates.versioned) {
    if (!fs::is_directory(candidate, error)) continue;
    const auto version = folder_version(candidate.parent_path());
    if (version && info.version && *version == *info.version) {
      info.sections_directory = candidate;
      return;
    }
    const std::string text = candidate.string();
    if (std::find(other_versions.begin(), other_versions.end(), text) == other_versions.end())
      other_versions.push_back(text);
  }
  if (other_versions.empty()) return;
  info.sections_note = (info.version ? "no sections folder of ncu " + info.version->to_string() + "; found only "
                                     : "ncu printed no version to match an install's sections folder against; found ") +
                       join(other_versions, ", ") + " (not read: another version's sections describe another ncu)";
}

}  // namespace

void read_section_metrics(NcuInfo& info, const SectionSearch& search) {
  std::error_code error;
  choose_sections_directory(info, search);
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
