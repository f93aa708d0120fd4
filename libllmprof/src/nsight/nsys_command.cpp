// NsysCommand: argv for `nsys profile`, `nsys stats` and `nsys export`, checked against the probed nsys.
//
// Flag spellings follow `nsys profile --help` of Nsight Systems 2025.3.1 (tests/data/h100-nsight-2025.3/cli).
#include "nsight/option_error.hpp"
#include "llmprof/nsys_command.hpp"
#include "core/text.hpp"
#include "llmprof/shell_quote.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "nsight/command_checks.hpp"

namespace llmprof {
namespace {

using detail::add_warning;
using detail::join;

// Without this nsys only matches NVTX ranges whose names are registered strings (nvtxStringRegister);
// PyTorch and most workloads push plain ASCII messages, so a gate like "decode" would never open and
// nsys would print "No reports were generated" with exit status 0.
constexpr const char* kRegisterOnlyVariable = "NSYS_NVTX_PROFILER_REGISTER_ONLY";

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// nsys splits domain lists on ',' and takes '\' as the escape character.
std::string escape_domain(const std::string& domain) {
  std::string escaped;
  for (char c : domain) {
    if (c == ',' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string join_domains(const std::vector<std::string>& domains) {
  std::vector<std::string> escaped;
  for (const auto& domain : domains) escaped.push_back(escape_domain(domain));
  return join(escaped, ",");
}

std::optional<Error> check_trace(const NsysProfileOptions& options, std::vector<std::string>* warnings) {
  if (options.trace.empty()) {
    return detail::invalid_option("nsys profile needs at least one --trace API", "set trace to e.g. {\"cuda\", \"nvtx\"}");
  }
  // From `nsys profile --help` (2025.3.1); newer versions may add APIs, so unknown ones only warn.
  static const std::vector<std::string> known = {"cuda",
                                                 "cuda-hw",
                                                 "nvtx",
                                                 "cublas",
                                                 "cublas-verbose",
                                                 "cusolver",
                                                 "cusolver-verbose",
                                                 "cusparse",
                                                 "cusparse-verbose",
                                                 "mpi",
                                                 "oshmem",
                                                 "ucx",
                                                 "osrt",
                                                 "cudnn",
                                                 "opengl",
                                                 "opengl-annotations",
                                                 "openacc",
                                                 "openmp",
                                                 "nvvideo",
                                                 "vulkan",
                                                 "vulkan-annotations",
                                                 "python-gil",
                                                 "gds",
                                                 "none"};
  for (const auto& api : options.trace) {
    if (api.empty() || api.find_first_of(", ") != std::string::npos) {
      return detail::invalid_option("--trace value '" + api + "' is not one API name", "give one API per list entry",
                     "--trace " + api);
    }
    if (!contains(known, api)) add_warning(warnings, "--trace value '" + api + "' is not known to nsys 2025.3");
  }
  if (contains(options.trace, "none") && options.trace.size() > 1) {
    return detail::invalid_option("--trace=none cannot be combined with other APIs", "remove 'none' or the other APIs",
                   "--trace=" + join(options.trace, ","));
  }
  return std::nullopt;
}

std::optional<Error> check_capture(const NsysProfileOptions& options, std::vector<std::string>* warnings) {
  const bool traces_nvtx = contains(options.trace, "nvtx");
  if (options.capture_range == NsysCaptureRange::nvtx) {
    if (detail::is_blank(options.nvtx_capture)) {
      return detail::invalid_option("NVTX capture was requested with an empty --nvtx-capture expression",
                     "name the NVTX range that opens the capture, e.g. nvtx_capture = \"decode\" "
                     "(or \"decode@domain\")",
                     "--nvtx-capture=" + options.nvtx_capture);
    }
    if (!traces_nvtx) {
      return detail::invalid_option("--capture-range=nvtx needs NVTX tracing, but --trace lacks nvtx", "add \"nvtx\" to trace",
                     "--trace=" + join(options.trace, ","));
    }
    const auto variable = options.env_vars.find(kRegisterOnlyVariable);
    if (variable != options.env_vars.end() && variable->second != "0") {
      add_warning(warnings, std::string(kRegisterOnlyVariable) + "=" + variable->second +
                                ": nsys will only see registered NVTX strings, so the capture gate '" +
                                options.nvtx_capture + "' may never open");
    }
  } else if (!options.nvtx_capture.empty()) {
    return detail::invalid_option("--nvtx-capture was set but the capture range is not nvtx",
                   "set capture_range to nvtx, or clear nvtx_capture", "--nvtx-capture=" + options.nvtx_capture);
  }
  if (options.capture_range == NsysCaptureRange::cuda_profiler_api && !traces_nvtx &&
      !contains(options.trace, "cuda")) {
    return detail::invalid_option("--capture-range=cudaProfilerApi needs CUDA or NVTX tracing", "add \"cuda\" to trace");
  }
  if (options.capture_range_end_count < 0) {
    return detail::invalid_option("the number of capture windows is negative", "give 0 (no bound) or a count of windows",
                   "repeat:" + std::to_string(options.capture_range_end_count));
  }
  if (options.capture_range_end_count > 0 && options.capture_range_end != NsysCaptureRangeEnd::repeat) {
    return detail::invalid_option("a count of capture windows was given but --capture-range-end is not repeat",
                   "set capture_range_end = \"repeat\" (or \"repeat:N\"), or clear the count",
                   std::to_string(options.capture_range_end_count));
  }
  if (options.capture_range_end && options.capture_range == NsysCaptureRange::none) {
    return detail::invalid_option("--capture-range-end was set without a capture range",
                   "set capture_range to nvtx or cuda_profiler_api, or clear capture_range_end",
                   "--capture-range-end=" + std::string(choice_name(*options.capture_range_end)));
  }
  return std::nullopt;
}

std::optional<Error> check_domains(const NsysProfileOptions& options, std::vector<std::string>* warnings) {
  for (const auto& domain : options.nvtx_domain_include) {
    if (contains(options.nvtx_domain_exclude, domain)) {
      return detail::invalid_option("NVTX domain '" + domain + "' is both included and excluded",
                     "keep it in only one of nvtx_domain_include and nvtx_domain_exclude", domain);
    }
  }
  if (!options.nvtx_domain_include.empty() && !options.nvtx_domain_exclude.empty()) {
    return detail::invalid_option("--nvtx-domain-include and --nvtx-domain-exclude are mutually exclusive in nsys",
                   "use only one of the two lists");
  }
  const bool any_domain = !options.nvtx_domain_include.empty() || !options.nvtx_domain_exclude.empty();
  if (any_domain && !contains(options.trace, "nvtx")) {
    add_warning(warnings, "NVTX domain filters have no effect because --trace lacks nvtx");
  }
  return std::nullopt;
}

std::optional<Error> check_environment(const NsysProfileOptions& options) {
  for (const auto& [name, value] : options.env_vars) {
    if (name.empty() || name.find_first_of("=,") != std::string::npos) {
      return detail::invalid_option("environment variable name '" + name + "' cannot be passed to nsys --env-var",
                     "use a name without '=' or ','", name);
    }
    // nsys takes several variables as 'A=B,C=D' and has no escape for a comma in a value.
    if (value.find(',') != std::string::npos) {
      return detail::invalid_option("the value of " + name + " contains a comma, which nsys --env-var would split",
                     "set the variable in the environment nsys is started with instead", name + "=" + value);
    }
  }
  return std::nullopt;
}

std::optional<Error> check_profile(const NsysProfileOptions& options, std::vector<std::string>* warnings) {
  if (options.application.empty() || options.application.front().empty()) {
    return detail::invalid_option("nsys profile has no application to run", "set the workload argv (application)");
  }
  if (options.output_base.empty()) {
    return detail::invalid_option("nsys profile has no output base (-o)", "set output_base, e.g. MAIN/nsys/profile");
  }
  // nsys expands %p, %h, %n, %q{VAR} in -o; the report could then not be found under BASE.
  if (options.output_base.string().find('%') != std::string::npos) {
    return detail::invalid_option("the nsys output base contains '%', which nsys would expand (%p, %h, %n ...)",
                   "use an output path without '%'", options.output_base.string());
  }
  if (auto error = check_trace(options, warnings)) return error;
  if (auto error = check_capture(options, warnings)) return error;
  if (auto error = check_domains(options, warnings)) return error;
  if (auto error = check_environment(options)) return error;
  return std::nullopt;
}

}  // namespace

NsysCommand NsysCommand::profile(NsysProfileOptions options) {
  NsysCommand command;
  command.kind_ = Kind::profile;
  if (options.capture_range == NsysCaptureRange::nvtx) {
    options.env_vars.try_emplace(kRegisterOnlyVariable, "0");  // an explicit user value wins (validate warns)
  }
  command.profile_ = std::move(options);
  return command;
}

namespace {
// The probed executable, when the probe found one; else the bare name (PATH decides, and validate warns).
std::filesystem::path probed_nsys(const NsysInfo& tool) { return tool.found ? tool.path : "nsys"; }
}  // namespace

NsysCommand NsysCommand::profile(const NsysInfo& tool, NsysProfileOptions options) {
  if (options.nsys == "nsys") options.nsys = probed_nsys(tool);
  return profile(std::move(options));
}

NsysCommand NsysCommand::stats(const NsysInfo& tool, std::filesystem::path report, std::vector<std::string> reports,
                               std::filesystem::path output_prefix, std::vector<std::string> extra_args) {
  return stats(probed_nsys(tool), std::move(report), std::move(reports), std::move(output_prefix),
               std::move(extra_args));
}

NsysCommand NsysCommand::export_sqlite(const NsysInfo& tool, std::filesystem::path report,
                                       std::filesystem::path output_file) {
  return export_sqlite(probed_nsys(tool), std::move(report), std::move(output_file));
}

NsysCommand NsysCommand::stats(std::filesystem::path nsys, std::filesystem::path report,
                               std::vector<std::string> reports, std::filesystem::path output_prefix,
                               std::vector<std::string> extra_args) {
  NsysCommand command;
  command.kind_ = Kind::stats;
  command.stats_extra_args_ = std::move(extra_args);
  command.profile_.nsys = std::move(nsys);
  command.report_ = std::move(report);
  command.reports_ = std::move(reports);
  command.output_ = std::move(output_prefix);
  return command;
}

NsysCommand NsysCommand::export_sqlite(std::filesystem::path nsys, std::filesystem::path report,
                                       std::filesystem::path output_file) {
  NsysCommand command;
  command.kind_ = Kind::export_sqlite;
  command.profile_.nsys = std::move(nsys);
  command.report_ = std::move(report);
  command.output_ = std::move(output_file);
  return command;
}

Result<void> NsysCommand::validate(const NsysInfo& tool, std::vector<std::string>* warnings) const {
  detail::warn_about_probe("nsys", tool.found, tool.version, warnings);
  if (profile_.nsys.empty()) return detail::invalid_option("no nsys executable was given", "set the nsys path");
  // A bare name is left to PATH (where the probe found it, as a rule); an explicit path to another nsys is said.
  if (tool.found && profile_.nsys.has_parent_path() && profile_.nsys != tool.path) {
    add_warning(warnings, "the command runs " + profile_.nsys.string() + ", not the probed " + tool.path.string() +
                              " (build it with the probe: NsysCommand::profile(tool, options))");
  }
  if (kind_ == Kind::profile) {
    if (auto error = check_profile(profile_, warnings)) return *error;
    return {};
  }
  if (report_.empty()) return detail::invalid_option("no nsys report to read was given", "pass the .nsys-rep path");
  if (output_.empty())
    return detail::invalid_option("no output path was given for nsys " + std::string(kind_ == Kind::stats ? "stats" : "export"),
                   "pass an output prefix or file");
  if (!tool.report_extension.empty() && report_.extension() != tool.report_extension) {
    add_warning(warnings, "report " + report_.string() + " does not end in " + tool.report_extension +
                              ", the extension this nsys writes");
  }
  if (kind_ == Kind::stats) {
    if (reports_.empty()) return detail::invalid_option("nsys stats needs at least one --report", "e.g. cuda_gpu_kern_sum,nvtx_sum");
    for (const auto& name : reports_) {
      if (name.empty() || name.find_first_of(", ") != std::string::npos) {
        return detail::invalid_option("nsys stats report name '" + name + "' is not one report", "give one report per entry", name);
      }
    }
    return {};
  }
  // Export: this builder always writes `--type sqlite`; refuse a probed nsys that takes another form.
  const std::vector<std::string> form = {"--type", "sqlite"};
  if (!tool.export_sqlite_arguments.empty() && tool.export_sqlite_arguments != form) {
    return make_error(
        ErrorCode::unsupported,
        "this nsys exports SQLite with '" + join(tool.export_sqlite_arguments, " ") + "', not '--type sqlite'",
        "use an Nsight Systems version that takes `nsys export --type sqlite`", tool.path.string());
  }
  return {};
}

std::vector<std::string> NsysCommand::argv() const {
  std::vector<std::string> args = {profile_.nsys.string()};
  if (kind_ == Kind::stats) {
    // --force-export: re-create the SQLite file; a stale one from an overwritten report would be read.
    args.insert(args.end(), {"stats", "--report", join(reports_, ","), "--format", "csv", "--output", output_.string(),
                             "--force-export=true", "--force-overwrite=true"});
    args.insert(args.end(), stats_extra_args_.begin(), stats_extra_args_.end());
    args.push_back(report_.string());
    return args;
  }
  if (kind_ == Kind::export_sqlite) {
    args.insert(args.end(), {"export", "--type", "sqlite", "--output", output_.string(), "--force-overwrite=true",
                             report_.string()});
    return args;
  }
  const auto& o = profile_;
  args.push_back("profile");
  if (!o.trace.empty()) args.push_back("--trace=" + join(o.trace, ","));
  args.push_back("--sample=" + std::string(choice_name(o.sample)));
  args.push_back("--cpuctxsw=" + std::string(choice_name(o.cpuctxsw)));
  if (o.wait) args.push_back("--wait=" + std::string(choice_name(*o.wait)));
  if (o.capture_range != NsysCaptureRange::none) {
    args.push_back("--capture-range=" + std::string(choice_name(o.capture_range)));
  }
  if (!o.nvtx_capture.empty()) args.push_back("--nvtx-capture=" + o.nvtx_capture);
  if (o.capture_range_end) {
    std::string end = "--capture-range-end=" + std::string(choice_name(*o.capture_range_end));
    if (o.capture_range_end_count > 0) end += ":" + std::to_string(o.capture_range_end_count);
    args.push_back(end);
  }
  if (!o.nvtx_domain_include.empty()) args.push_back("--nvtx-domain-include=" + join_domains(o.nvtx_domain_include));
  if (!o.nvtx_domain_exclude.empty()) args.push_back("--nvtx-domain-exclude=" + join_domains(o.nvtx_domain_exclude));
  if (!o.env_vars.empty()) {
    std::vector<std::string> assignments;
    for (const auto& [name, value] : o.env_vars) assignments.push_back(name + "=" + value);
    args.push_back("--env-var=" + join(assignments, ","));
  }
  if (!o.gpu_metrics_option.empty()) {
    args.push_back(o.gpu_metrics_option + "=" + o.gpu_metrics_devices);
    args.push_back("--gpu-metrics-frequency=" + std::to_string(o.gpu_metrics_frequency_hz));
    if (!o.gpu_metrics_set.empty()) args.push_back("--gpu-metrics-set=" + o.gpu_metrics_set);
  }
  if (o.stats) args.push_back("--stats=true");
  if (o.force_overwrite) args.push_back("--force-overwrite=true");
  if (!o.output_base.empty()) args.push_back("--output=" + o.output_base.string());
  args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
  args.insert(args.end(), o.application.begin(), o.application.end());
  return args;
}

// The same tail and members as NcuCommand's: two public command types with their own options, which a shared base
// would tie together (the duplicates tool pairs the two by shape).
NsysCommand NsysCommand::without_overwrite() const {
  NsysCommand copy = *this;
  copy.profile_.force_overwrite = false;
  return copy;
}

std::string NsysCommand::to_shell_string() const { return join_shell_command(argv()); }

std::optional<std::string> requested_graph_trace(const std::vector<std::string>& extra_args) {
  constexpr std::string_view option = "--cuda-graph-trace";
  std::optional<std::string> granularity;
  for (std::size_t i = 0; i < extra_args.size(); ++i) {
    const std::string& argument = extra_args[i];
    if (argument == option && i + 1 < extra_args.size()) {
      granularity = extra_args[++i];
    } else if (argument.rfind(std::string(option) + "=", 0) == 0) {
      granularity = argument.substr(option.size() + 1);
    } else {
      continue;
    }
    granularity = granularity->substr(0, granularity->find(':'));
  }
  return granularity;
}

}  // namespace llmprof
