// Tool probe: where nsys and ncu are, which versions they are, what they can do (the importer: importer_health.cpp).
//
// Search order for each tool: the explicit path (exclusive: a configured path that does not work is
// reported, never silently replaced by another install), PATH, the caller's extra roots, then the usual
// install locations. Recorded layouts: tests/data/h100-nsight-2025.3/cli/transcripts.md.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "core/concurrent_tasks.hpp"
#include "core/text.hpp"
#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"
#include "nsight/ncu_section_files.hpp"
#include "nsight/tool_capture.hpp"
#include "process/process_launch.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

constexpr std::chrono::seconds version_timeout{60};
constexpr std::chrono::seconds listing_timeout{120};

std::vector<fs::path> path_directories(const std::string& path_variable) {
  std::string value = path_variable;
  if (value.empty()) {
    const char* environment = std::getenv("PATH");
    value = environment == nullptr ? "" : environment;
  }
  std::vector<fs::path> directories;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find(':', start), value.size());
    if (end > start) directories.emplace_back(value.substr(start, end - start));
    start = end + 1;
  }
  return directories;
}

// Subdirectories of `parent` matching "<prefix>*", newest version first (names sort by version).
std::vector<fs::path> versioned_directories(const fs::path& parent, const std::string& prefix) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && it->is_directory(error)) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() > b.filename(); });
  return found;
}

// <parent>/<prefix>*/<suffix> for each versioned install, newest first; the pattern itself when there is
// none, so that "where the probe looked" shows the glob that matched nothing.
std::vector<fs::path> installs_matching(const fs::path& parent, const std::string& prefix, const fs::path& suffix) {
  std::vector<fs::path> candidates;
  for (const auto& directory : versioned_directories(parent, prefix)) candidates.push_back(directory / suffix);
  if (candidates.empty()) candidates.push_back(parent / (prefix + "*") / suffix);
  return candidates;
}

template <typename Item>
void append(std::vector<Item>& to, const std::vector<Item>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

struct Located {
  fs::path path;
  std::vector<fs::path> searched;
  std::string problem;  // set when an explicit path was given and does not work
};

// Tries candidates in order, recording each; stops at the first executable file.
bool try_candidates(const std::vector<fs::path>& candidates, Located& located) {
  for (const auto& candidate : candidates) {
    if (std::find(located.searched.begin(), located.searched.end(), candidate) != located.searched.end()) continue;
    located.searched.push_back(candidate);
    if (detail::is_executable_file(candidate)) {
      located.path = candidate;
      return true;
    }
  }
  return false;
}

// `tool` in each directory of PATH, in PATH's order: the one a shell would run comes first.
std::vector<fs::path> on_path(const std::string& path_variable, std::string_view tool) {
  std::vector<fs::path> candidates;
  for (const auto& directory : path_directories(path_variable)) candidates.push_back(directory / tool);
  return candidates;
}

Located locate_explicit(const fs::path& explicit_path, const std::string& tool, const ProbeOptions& options) {
  Located located;
  const std::string text = explicit_path.string();
  if (text.find('/') == std::string::npos) {  // a bare name: look it up on PATH only
    if (!try_candidates(on_path(options.path_variable, text), located)) {
      located.problem = "the configured " + tool + " '" + text + "' is not on PATH";
    }
    return located;
  }
  if (!try_candidates({explicit_path}, located)) {
    std::error_code error;
    located.problem = fs::exists(explicit_path, error)
                          ? "the configured " + tool + " path " + text + " is not an executable file"
                          : "the configured " + tool + " path " + text + " does not exist";
  }
  return located;
}

// Debian 12's packages (non-free nsight-systems / nsight-compute), installed under `root` ("/" for apt-get
// install, a cache root for the unpacked packages of scripts/install-nsight.sh).
std::vector<fs::path> debian_layout(const fs::path& root, const std::string& tool) {
  if (tool == "ncu") return {root / "usr/lib/nsight-compute/ncu", root / "usr/bin/ncu"};
  return {root / "usr/lib/nsight-systems/bin/nsys",
          root / "usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys", root / "usr/bin/nsys"};
}

// After the NVIDIA install places: Debian's own, then the install-nsight.sh cache.
void append_debian_and_cache(std::vector<fs::path>& candidates, const std::string& tool) {
  append(candidates, debian_layout("/", tool));
  for (const auto& root : nsight_cache_roots()) append(candidates, debian_layout(root, tool));
}

std::vector<fs::path> ncu_install_candidates(const ProbeOptions& options) {
  std::vector<fs::path> candidates;
  for (const auto& root : options.extra_search_roots) {
    candidates.push_back(root / "ncu");
    candidates.push_back(root / "bin" / "ncu");
  }
  if (options.use_default_locations) {
    candidates.emplace_back("/usr/local/cuda/bin/ncu");
    append(candidates, installs_matching("/usr/local/cuda", "nsight-compute", "ncu"));
    append(candidates, installs_matching("/opt/nvidia/nsight-compute", "", "ncu"));
    append_debian_and_cache(candidates, "ncu");
  }
  return candidates;
}

Located locate_ncu(const ProbeOptions& options) {
  if (!options.ncu_path.empty()) return locate_explicit(options.ncu_path, "ncu", options);
  Located located;
  std::vector<fs::path> candidates = on_path(options.path_variable, "ncu");
  const auto installs = ncu_install_candidates(options);
  candidates.insert(candidates.end(), installs.begin(), installs.end());
  try_candidates(candidates, located);
  return located;
}

// Nsight Compute ships an nsys at <ncu-root>/host/target-linux-x64/nsys (the H100 machine's only nsys).
std::vector<fs::path> bundled_nsys_next_to(const fs::path& ncu) {
  std::vector<fs::path> candidates = {ncu.parent_path() / "host" / "target-linux-x64" / "nsys"};
  std::error_code error;
  const fs::path real = fs::canonical(ncu, error);
  if (!error && real.parent_path() != ncu.parent_path()) {
    candidates.push_back(real.parent_path() / "host" / "target-linux-x64" / "nsys");
  }
  return candidates;
}

Located locate_nsys(const ProbeOptions& options) {
  if (!options.nsys_path.empty()) return locate_explicit(options.nsys_path, "nsys", options);
  Located located;
  std::vector<fs::path> candidates = on_path(options.path_variable, "nsys");
  for (const auto& root : options.extra_search_roots) {
    for (const auto& relative : {"nsys", "bin/nsys", "target-linux-x64/nsys", "host/target-linux-x64/nsys"}) {
      candidates.push_back(root / relative);
    }
  }
  // The nsys bundled with whichever ncu this machine has (found without running it).
  ProbeOptions ncu_options = options;
  ncu_options.ncu_path.clear();
  if (const Located ncu = locate_ncu(ncu_options); !ncu.path.empty()) {
    for (const auto& candidate : bundled_nsys_next_to(ncu.path)) candidates.push_back(candidate);
  }
  if (options.use_default_locations) {
    candidates.emplace_back("/usr/local/cuda/bin/nsys");
    append(candidates, installs_matching("/opt/nvidia/nsight-systems", "", "bin/nsys"));
    append(candidates, installs_matching("/usr/local/cuda", "nsight-systems", "bin/nsys"));
    append(candidates, installs_matching("/opt/nvidia/nsight-compute", "", "host/target-linux-x64/nsys"));
    append_debian_and_cache(candidates, "nsys");
  }
  try_candidates(candidates, located);
  return located;
}

// Runs `tool args...`; on failure adds a readable problem and returns nothing.
std::optional<std::string> run_listing(ProcessRunner& runner, const fs::path& tool, std::vector<std::string> arguments,
                                       std::chrono::milliseconds timeout, std::vector<std::string>& problems) {
  std::vector<std::string> argv = {tool.string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::string command = tool.filename().string();
  for (const auto& argument : arguments) command += " " + argument;
  auto run = detail::run_and_capture(runner, argv, timeout);
  if (!run) {
    problems.push_back("`" + command + "` could not be started: " + run.error().describe());
    return std::nullopt;
  }
  if (!run->outcome.succeeded()) {
    std::string output = run->combined();
    if (output.size() > 400) output = output.substr(0, 400) + "...";
    problems.push_back("`" + command + "` failed (" + detail::describe_outcome(run->outcome) + "): " + output);
    return std::nullopt;
  }
  return run->combined();
}

}  // namespace

std::vector<fs::path> nsight_cache_roots() {
  // Set: that cache only (a test points it at an empty folder to hide an installed one).
  if (const char* configured = std::getenv("LLMPROF_NSIGHT_DIR"); configured != nullptr && *configured != '\0') {
    return {fs::path(configured) / "root"};
  }
  return {"/opt/llmprof/nsight/root"};
}

NvidiaDriver detect_nvidia_driver() {
  NvidiaDriver driver;
  std::ifstream version("/proc/driver/nvidia/version");
  std::string line;
  if (version && std::getline(version, line)) {
    driver.present = true;
    driver.evidence = line;
  } else {
    driver.evidence = "no NVIDIA kernel driver is loaded (/proc/driver/nvidia/version is absent)";
  }
  return driver;
}

namespace {

// What probe_nsys and probe_ncu do alike: record where the tool was looked for and, when it was
// found, its --version. False when it was not found (nothing more to probe).
template <typename ToolInfo>
bool locate_and_read_version(ProcessRunner& runner, ToolInfo& info, Located located,
                             Result<ToolVersion> (*parse_version)(std::string_view)) {
  info.searched = std::move(located.searched);
  if (!located.problem.empty()) info.problems.push_back(located.problem);
  if (located.path.empty()) return false;
  info.found = true;
  info.path = located.path;
  if (auto output = run_listing(runner, info.path, {"--version"}, version_timeout, info.problems)) {
    auto version = parse_version(*output);
    if (version) {
      info.version = *version;
    } else {
      info.problems.push_back(version.error().describe());
    }
  }
  return true;
}

// GPU-metrics sampling as this nsys lists it. The option's spelling changed between the two versions recorded
// (2022.4: --gpu-metrics-device, 2025.3.1: --gpu-metrics-devices); the older spelling is tried first on a
// version before 2023, and the other when nsys rejects the first. Both listings print whatever the exit status.
GpuMetricsSupport probe_gpu_metrics(ProcessRunner& runner, const NsysInfo& info) {
  std::vector<std::string> spellings = {"--gpu-metrics-devices", "--gpu-metrics-device"};
  if (info.version && info.version->year < 2023) std::swap(spellings[0], spellings[1]);
  GpuMetricsSupport support;
  support.reason = "nsys did not list its GPU-metrics devices";
  for (const auto& option : spellings) {
    auto listed = detail::run_and_capture(runner, {info.path.string(), "profile", option + "=help"}, listing_timeout);
    if (!listed) continue;
    const std::string output = listed->combined();
    if (output.find("Possible") == std::string::npos) continue;  // an unknown option: nsys printed its usage
    support = parse_gpu_metrics_devices(output, option);
    break;
  }
  if (!support.available) return support;
  if (auto sets = detail::run_and_capture(runner, {info.path.string(), "profile", "--gpu-metrics-set=help"},
                                          listing_timeout))
    support.metric_set = choose_gpu_metrics_set(sets->combined(), support.listed);
  return support;
}

}  // namespace

// The listings after --version depend on nothing but the tool's version, and each is a start-up of the tool of its
// own (2.3-4.4 s for the ten of them one after another, probe stage of the 1b runs on the H100, nsys/ncu 2025.3.1):
// they run side by side, each with its own problems, added in the order below so that messages never depend on which
// finished first.
NsysInfo probe_nsys(ProcessRunner& runner, const ProbeOptions& options) {
  NsysInfo info;
  if (!locate_and_read_version(runner, info, locate_nsys(options), parse_nsys_version)) return info;
  if (info.version) info.report_extension = report_extension_for(*info.version);
  // Every nsys that writes .qdrep or .nsys-rep takes `export --type sqlite`; `--sqlite` was never a flag.
  info.export_sqlite_arguments = {"--type", "sqlite"};
  std::vector<std::string> environment_problems;
  std::vector<std::string> report_problems;
  detail::run_concurrently({
      [&] {
        if (auto output =
                run_listing(runner, info.path, {"status", "--environment"}, listing_timeout, environment_problems))
          info.environment = parse_nsys_status_environment(*output);
      },
      [&] { info.importer = check_importer(runner, info.path); },
      [&] {
        // nsys 2022.4 prints the list and exits 1, so the output counts whatever the exit status.
        if (auto listed =
                detail::run_and_capture(runner, {info.path.string(), "stats", "--help-reports"}, listing_timeout))
          info.stats_reports = parse_nsys_report_list(listed->combined());
        if (info.stats_reports.empty())
          report_problems.push_back("`nsys stats --help-reports` listed no report names");
      },
      [&] { info.gpu_metrics = probe_gpu_metrics(runner, info); },
  });
  append(info.problems, environment_problems);
  append(info.problems, report_problems);
  return info;
}

NcuInfo probe_ncu(ProcessRunner& runner, const ProbeOptions& options) {
  NcuInfo info;
  if (!locate_and_read_version(runner, info, locate_ncu(options), parse_ncu_version)) return info;
  std::vector<std::string> section_problems;
  std::vector<std::string> set_problems;
  detail::run_concurrently({
      [&] {
        if (auto output = run_listing(runner, info.path, {"--list-sections"}, listing_timeout, section_problems)) {
          info.sections_listing = *output;
          info.sections = parse_ncu_section_list(*output);
          if (info.sections.empty()) section_problems.push_back("`ncu --list-sections` printed no section table");
        }
      },
      [&] {
        if (auto output = run_listing(runner, info.path, {"--list-sets"}, listing_timeout, set_problems)) {
          info.sets = parse_ncu_set_list(*output);
          if (info.sets.empty()) set_problems.push_back("`ncu --list-sets` printed no set table");
        }
      },
      [&] {
        // ncu --help exits 0 in 2022.3 and 2025.3.1; an unreadable help only means no optional filter modes.
        if (auto help = detail::run_and_capture(runner, {info.path.string(), "--help"}, listing_timeout);
            help && help->outcome.succeeded())
          info.filter_modes = parse_ncu_filter_modes(help->combined());
      },
  });
  append(info.problems, section_problems);
  append(info.problems, set_problems);
  // A probe confined to the caller's roots (tests' fake trees) does not read this machine's installs.
  detail::SectionSearch search;
  if (!options.use_default_locations) search.install_roots.clear();
  detail::read_section_metrics(info, search);
  return info;
}

ProbedTools probe_tools(ProcessRunner& runner, const ProbeOptions& options) {
  ProbedTools tools;
  detail::run_concurrently({[&] { tools.nsys = probe_nsys(runner, options); },
                            [&] { tools.ncu = probe_ncu(runner, options); }});
  return tools;
}

}  // namespace llmprof
