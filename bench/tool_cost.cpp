// The cost of profiling as multiples of the bare run, over recorded run directories: what each run took against
// its bare run (stage1), and nsys's and ncu's stages alone, from run.json's stage timings (llmprof/tool_cost.hpp),
// with the ncu set that fed the run's figures (its ncu/cmd.txt, else run.json's ncu command). One row per run, oldest run.json first under
// each root, then a line per ncu set with the median multiples.
//
// Usage: bench_tool_cost [--root DIR]... [RUN_DIR]...   (no argument: every run under ./examples)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "bench_options.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/tool_cost.hpp"

namespace fs = std::filesystem;

namespace {

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The ncu stage's command as run.json records it: a recorded run trimmed to run.json keeps it there.
std::string ncu_command_in_run_json(const fs::path& main) {
  boost::system::error_code error;
  const boost::json::value run = boost::json::parse(text_of(main / "run.json"), error);
  const auto* stages = error || !run.is_object() ? nullptr : run.as_object().if_contains("stages");
  if (stages == nullptr || !stages->is_array()) return "";
  for (const auto& stage : stages->as_array()) {
    const auto* object = stage.if_object();
    if (object == nullptr || !object->contains("name") || object->at("name") != "ncu") continue;
    const auto* command = object->if_contains("command");
    if (command != nullptr && command->is_string()) return std::string(command->as_string());
  }
  return "";
}

// "llmprof" (--section LlmprofRoofline), the --set name, or "-" when the run has no ncu command (ncu/cmd.txt, or
// the ncu stage's command in run.json where the recording kept no cmd.txt).
std::string ncu_set_of(const fs::path& main) {
  std::string commands = text_of(main / "ncu" / "cmd.txt");
  if (commands.empty()) commands = ncu_command_in_run_json(main);
  if (commands.find("--section LlmprofRoofline") != std::string::npos) return "llmprof";
  static const std::regex set(R"(--set (\S+))");
  std::smatch match;
  return std::regex_search(commands, match, set) ? match[1].str() : "-";
}

std::vector<fs::path> runs_under(const fs::path& root) {
  std::vector<fs::path> runs;
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error))
    if (it->path().filename() == "run.json") runs.push_back(it->path().parent_path());
  std::sort(runs.begin(), runs.end());
  return runs;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const llmprof::bench::Usage usage{"bench_tool_cost", "[--root DIR]... [RUN_DIR]..."};
  std::vector<fs::path> runs;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--root") {
      if (i + 1 >= argc) usage.fail("--root needs a value");
      const auto found = runs_under(argv[++i]);
      runs.insert(runs.end(), found.begin(), found.end());
    } else if (word.rfind("--", 0) == 0) {
      usage.fail("unknown argument " + word);
    } else {
      runs.emplace_back(word);
    }
  }
  if (argc == 1) runs = runs_under("examples");
  if (runs.empty()) usage.fail("no run directory (a folder with run.json) was given or found");
  std::printf("%-60s %-9s %7s %7s %7s %6s %6s\n", "run", "ncu set", "bare s", "run s", "x bare", "nsys", "ncu");
  std::map<std::string, std::vector<double>> by_set, ncu_by_set;
  for (const auto& main : runs) {
    const auto manifest = llmprof::read_manifest(main);
    if (!manifest) {
      std::printf("%-60s unreadable: %s\n", main.string().c_str(), manifest.error().describe().c_str());
      continue;
    }
    const auto cost = llmprof::tool_cost_of(manifest->stages);
    if (!cost) {
      std::printf("%-60s no bare run that succeeded: no multiple\n", main.string().c_str());
      continue;
    }
    const std::string set = ncu_set_of(main);
    char ncu_text[16] = "-";
    if (auto multiple = cost->ncu_multiple()) std::snprintf(ncu_text, sizeof ncu_text, "%.1fx", *multiple);
    std::printf("%-60s %-9s %7.1f %7.1f %6.1fx %5.1fx %6s\n", main.string().c_str(), set.c_str(), cost->bare_s,
                cost->run_s, cost->multiple(), cost->nsys_multiple().value_or(0), ncu_text);
    by_set[set].push_back(cost->multiple());
    if (auto ncu = cost->ncu_multiple()) ncu_by_set[set].push_back(*ncu);
  }
  for (const auto& [set, multiples] : by_set) {
    std::printf("ncu set %-9s %zu runs: median %.1fx the bare run", set.c_str(), multiples.size(), median(multiples));
    if (ncu_by_set.count(set)) std::printf(", ncu alone %.1fx", median(ncu_by_set[set]));
    std::printf("\n");
  }
  return 0;
}
