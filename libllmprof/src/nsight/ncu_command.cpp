// NcuCommand: argv for Nsight Compute profile runs, CSV import and the section/set listings.
//
// Flag spellings follow `ncu --help` of Nsight Compute 2025.3.1 (tests/data/h100-nsight-2025.3/cli/ncu_help.txt).
#include "nsight/option_error.hpp"
#include "llmprof/ncu_command.hpp"
#include "core/text.hpp"
#include "llmprof/shell_quote.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <utility>

#include "nsight/command_checks.hpp"

namespace llmprof {
namespace {

using detail::add_warning;
using detail::join;

// ncu 2025.3 matches --section values exactly unless prefixed "regex:"; a pattern such as
// ".*SpeedOfLight.*" fails only at run time ("did not match any section"), so we refuse it up front.
bool looks_like_regex(const std::string& section) {
  return section.rfind("regex:", 0) == 0 || section.find_first_of(".*[]()|+?^$\\{}") != std::string::npos;
}

bool probed_section(const NcuInfo& tool, const std::string& identifier) {
  return std::any_of(tool.sections.begin(), tool.sections.end(),
                     [&](const NcuSection& section) { return section.identifier == identifier; });
}

bool probed_set(const NcuInfo& tool, const std::string& identifier) {
  return std::any_of(tool.sets.begin(), tool.sets.end(),
                     [&](const NcuSet& set) { return set.identifier == identifier; });
}

// Why a --section value cannot be passed, or nullopt when it can (or cannot be checked).
std::optional<std::string> section_problem(const NcuInfo& tool, const std::string& section) {
  if (section.empty()) return "an empty --section value";
  if (looks_like_regex(section)) {
    return "--section '" + section + "' looks like a regular expression; only exact section identifiers are passed";
  }
  if (!tool.sections.empty() && !probed_section(tool, section)) {
    return "--section '" + section + "' is not among the " + std::to_string(tool.sections.size()) +
           " sections this ncu lists (ncu --list-sections)";
  }
  return std::nullopt;
}

std::string section_identifiers(const NcuInfo& tool) {
  std::vector<std::string> names;
  for (const auto& section : tool.sections) names.push_back(section.identifier);
  return join(names, ", ");
}

std::optional<Error> check_kernel_name(const NcuProfileOptions& options) {
  const std::string& name = options.kernel_name;
  if (name.rfind("regex:", 0) != 0) return std::nullopt;
  const std::string expression = name.substr(6);
  if (expression.empty()) {
    return detail::invalid_option("--kernel-name regex: has an empty expression", "write regex:<expression>, e.g. regex:gemm", name);
  }
  // ncu uses its own regex engine, but unbalanced brackets or a dangling quantifier are errors in
  // every dialect; catching them here saves a profiling run.
  try {
    std::regex compiled(expression, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return detail::invalid_option("--kernel-name regular expression '" + expression + "' does not compile (" + error.what() + ")",
                   "fix the expression, e.g. balance the parentheses and brackets", name);
  }
  return std::nullopt;
}

std::optional<Error> check_filters(const NcuProfileOptions& options) {
  for (const auto& expression : options.nvtx_include) {
    if (detail::is_blank(expression)) {
      return detail::invalid_option("an NVTX include expression is empty",
                     "name the range, e.g. \"decode/\" for push/pop range decode", "--nvtx-include");
    }
  }
  for (const auto& expression : options.nvtx_exclude) {
    if (expression.empty())
      return detail::invalid_option("an NVTX exclude expression is empty", "remove it or name the range", "--nvtx-exclude");
  }
  if (options.launch_skip && *options.launch_skip < 0) {
    return detail::invalid_option("--launch-skip must not be negative", "use 0 or more",
                   "--launch-skip " + std::to_string(*options.launch_skip));
  }
  if (options.launch_count && *options.launch_count < 0) {
    return detail::invalid_option("--launch-count must not be negative", "use 1 or more",
                   "--launch-count " + std::to_string(*options.launch_count));
  }
  for (const auto& metric : options.metrics) {
    if (metric.empty() || metric.find(',') != std::string::npos) {
      return detail::invalid_option("metric '" + metric + "' is not one metric name", "give one metric per entry", metric);
    }
  }
  return check_kernel_name(options);
}

std::optional<Error> check_profile(const NcuProfileOptions& options, const NcuInfo& tool,
                                   std::vector<std::string>* warnings) {
  if (options.application.empty() || options.application.front().empty()) {
    return detail::invalid_option("ncu has no application to profile", "set the workload argv (application)");
  }
  if (options.output.empty())
    return detail::invalid_option("ncu has no output report (-o)", "set output, e.g. MAIN/ncu/profile (ncu appends .ncu-rep)");
  if (auto error = check_filters(options)) return error;
  if (options.filter_mode && *options.filter_mode != NcuFilterMode::global) {
    const std::string mode(choice_name(*options.filter_mode));
    if (!tool.filter_modes.empty() && !tool.has_filter_mode(mode)) {
      return detail::invalid_option(
          "this ncu has no --filter-mode " + mode + " (its --help lists: " + join(tool.filter_modes, ", ") + ")",
          "use Nsight Compute 2025.3 or newer, or set ncu.plan = \"bounded\"", "--filter-mode " + mode);
    }
    if (tool.filter_modes.empty())
      add_warning(warnings, "the probe could not read ncu --help, so --filter-mode " + mode + " was not checked");
  }
  if (!options.set.empty() && !tool.sets.empty() && !probed_set(tool, options.set)) {
    std::vector<std::string> names;
    for (const auto& set : tool.sets) names.push_back(set.identifier);
    return detail::invalid_option("section set '" + options.set + "' is not among the sets this ncu lists (ncu --list-sets)",
                   "use one of: " + join(names, ", "), "--set " + options.set);
  }
  if (!options.set.empty() && tool.sets.empty()) {
    add_warning(warnings, "the probe listed no ncu section sets, so --set " + options.set + " was not checked");
  }
  for (const auto& section : options.sections) {
    if (auto problem = section_problem(tool, section)) {
      return detail::invalid_option(*problem,
                     tool.sections.empty() ? "use an exact identifier from ncu --list-sections"
                                           : "use one of: " + section_identifiers(tool),
                     "--section " + section);
    }
  }
  for (const auto& section : options.own_sections) {
    if (section.empty() || looks_like_regex(section))
      return detail::invalid_option("own section '" + section + "' is not one exact section identifier",
                                    "name the Identifier of a section file in the section folder", section);
  }
  if (!options.own_sections.empty() && options.section_folders.empty())
    return detail::invalid_option("section " + options.own_sections.front() + " is libllmprof's own, but no --section-folder holds it",
                                  "set the folder (the configuration's ncu-sections) or use one of ncu's sets (ncu.set = \"roofline\")",
                                  "--section " + options.own_sections.front());
  if (!options.section_folders.empty() && !options.sections.empty() &&
      (tool.sections_directory.empty() ||
       std::find(options.section_folders.begin(), options.section_folders.end(), tool.sections_directory) ==
           options.section_folders.end())) {
    add_warning(warnings, "--section-folder replaces ncu's own sections folder, which " +
                              std::string(tool.sections_directory.empty() ? "the probe did not find"
                                                                          : "is not among the folders") +
                              ", so --section " + options.sections.front() + " may not be found");
  }
  if (!options.sections.empty() && tool.sections.empty()) {
    add_warning(warnings, "the probe listed no ncu sections, so the --section identifiers were not checked");
  }
  return std::nullopt;
}

}  // namespace

NcuCommand NcuCommand::profile(NcuProfileOptions options) {
  NcuCommand command;
  command.kind_ = Kind::profile;
  command.profile_ = std::move(options);
  return command;
}

namespace {
// The probed executable, when the probe found one; else the bare name (PATH decides, and validate warns).
std::filesystem::path probed_ncu(const NcuInfo& tool) { return tool.found ? tool.path : "ncu"; }
}  // namespace

NcuCommand NcuCommand::profile(const NcuInfo& tool, NcuProfileOptions options) {
  if (options.ncu == "ncu") options.ncu = probed_ncu(tool);
  // Folders of our own replace ncu's, so sections of ncu's own need its folder beside them.
  const bool needs_own_folder = !options.section_folders.empty() && !options.sections.empty();
  if (needs_own_folder && !tool.sections_directory.empty() &&
      std::find(options.section_folders.begin(), options.section_folders.end(), tool.sections_directory) ==
          options.section_folders.end())
    options.section_folders.push_back(tool.sections_directory);
  return profile(std::move(options));
}

NcuCommand NcuCommand::import_csv(const NcuInfo& tool, std::filesystem::path report, NcuPage page, bool base_units) {
  return import_csv(probed_ncu(tool), std::move(report), page, base_units);
}

NcuCommand NcuCommand::import_csv(std::filesystem::path ncu, std::filesystem::path report, NcuPage page,
                                  bool base_units) {
  NcuCommand command;
  command.kind_ = Kind::import_csv;
  command.profile_.ncu = std::move(ncu);
  command.report_ = std::move(report);
  command.page_ = page;
  command.base_units_ = base_units;
  return command;
}

NcuCommand NcuCommand::list_sections(std::filesystem::path ncu) {
  NcuCommand command;
  command.kind_ = Kind::list_sections;
  command.profile_.ncu = std::move(ncu);
  return command;
}

NcuCommand NcuCommand::list_sets(std::filesystem::path ncu) {
  NcuCommand command;
  command.kind_ = Kind::list_sets;
  command.profile_.ncu = std::move(ncu);
  return command;
}

Result<void> NcuCommand::validate(const NcuInfo& tool, std::vector<std::string>* warnings) const {
  detail::warn_about_probe("ncu", tool.found, tool.version, warnings);
  if (profile_.ncu.empty()) return detail::invalid_option("no ncu executable was given", "set the ncu path");
  // A bare name is left to PATH (where the probe found it, as a rule); an explicit path to another ncu is said.
  if (tool.found && profile_.ncu.has_parent_path() && profile_.ncu != tool.path) {
    add_warning(warnings, "the command runs " + profile_.ncu.string() + ", not the probed " + tool.path.string() +
                              " (build it with the probe: NcuCommand::profile(tool, options))");
  }
  if (kind_ == Kind::import_csv && report_.empty()) {
    return detail::invalid_option("no ncu report to import was given", "pass the .ncu-rep path");
  }
  if (kind_ != Kind::profile) return {};
  if (auto error = check_profile(profile_, tool, warnings)) return *error;
  return {};
}

std::vector<std::string> NcuCommand::drop_unknown_sections(const NcuInfo& tool) {
  std::vector<std::string> warnings;
  std::vector<std::string> kept;
  for (const auto& section : profile_.sections) {
    if (auto problem = section_problem(tool, section)) {
      warnings.push_back("dropped " + *problem);
    } else {
      kept.push_back(section);
    }
  }
  profile_.sections = std::move(kept);
  return warnings;
}

std::vector<std::string> NcuCommand::argv() const {
  std::vector<std::string> args = {profile_.ncu.string()};
  switch (kind_) {
    case Kind::list_sections:
      args.push_back("--list-sections");
      return args;
    case Kind::list_sets:
      args.push_back("--list-sets");
      return args;
    case Kind::import_csv:
      args.insert(args.end(),
                  {"--import", report_.string(), "--page", page_ == NcuPage::raw ? "raw" : "details", "--csv"});
      if (base_units_) args.insert(args.end(), {"--print-units", "base"});
      return args;
    case Kind::profile:
      break;
  }
  const auto& o = profile_;
  args.insert(args.end(), {"--target-processes", o.target_all_processes ? "all" : "application-only"});
  if (!o.profile_from_start) args.insert(args.end(), {"--profile-from-start", "off"});
  if (!o.nvtx_include.empty() || !o.nvtx_exclude.empty()) args.push_back("--nvtx");
  for (const auto& expression : o.nvtx_include) args.insert(args.end(), {"--nvtx-include", expression});
  for (const auto& expression : o.nvtx_exclude) args.insert(args.end(), {"--nvtx-exclude", expression});
  if (!o.set.empty()) args.insert(args.end(), {"--set", o.set});
  for (const auto& folder : o.section_folders) args.insert(args.end(), {"--section-folder", folder.string()});
  for (const auto& section : o.own_sections) args.insert(args.end(), {"--section", section});
  for (const auto& section : o.sections) args.insert(args.end(), {"--section", section});
  if (!o.metrics.empty()) args.insert(args.end(), {"--metrics", join(o.metrics, ",")});
  if (o.kernel_name_base)
    args.insert(args.end(), {"--kernel-name-base", std::string(choice_name(*o.kernel_name_base))});
  if (!o.kernel_name.empty()) args.insert(args.end(), {"--kernel-name", o.kernel_name});
  if (o.launch_skip) args.insert(args.end(), {"--launch-skip", std::to_string(*o.launch_skip)});
  if (o.launch_count) args.insert(args.end(), {"--launch-count", std::to_string(*o.launch_count)});
  if (o.filter_mode) args.insert(args.end(), {"--filter-mode", std::string(choice_name(*o.filter_mode))});
  if (o.replay_mode) args.insert(args.end(), {"--replay-mode", std::string(choice_name(*o.replay_mode))});
  if (o.clock_control) args.insert(args.end(), {"--clock-control", std::string(choice_name(*o.clock_control))});
  if (o.cache_control) args.insert(args.end(), {"--cache-control", std::string(choice_name(*o.cache_control))});
  if (!o.log_file.empty()) args.insert(args.end(), {"--log-file", o.log_file.string()});
  if (!o.output.empty()) args.insert(args.end(), {"-o", o.output.string()});
  if (o.force_overwrite) args.push_back("-f");
  args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
  args.insert(args.end(), o.application.begin(), o.application.end());
  return args;
}

NcuCommand NcuCommand::without_overwrite() const {
  NcuCommand copy = *this;
  copy.profile_.force_overwrite = false;
  return copy;
}

std::string NcuCommand::to_shell_string() const { return join_shell_command(argv()); }

}  // namespace llmprof
