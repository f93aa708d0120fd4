// validate_config: the checks beyond types. Per key (from the schema's rules: enumerated values, bounds,
// non-empty values) and across keys (an NVTX gate needs a range name, launch bounds agree, ...). Run after
// every layer is applied, so only the final value of a key matters, and each error says where it was set.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "config/config_schema.hpp"
#include "core/text.hpp"
#include "llmprof/library_ranges.hpp"

namespace llmprof {
namespace detail {
namespace {

std::string where_set(const ConfigOrigins& origins, const std::string& key) {
  const auto found = origins.find(key);
  return found == origins.end() ? std::string() : " (set at " + found->second + ")";
}

Error invalid_value(const std::string& key, const std::string& problem, const std::string& hint,
                    const ConfigOrigins& origins) {
  return make_error(ErrorCode::invalid_argument, "configuration key " + key + " " + problem + where_set(origins, key),
                    hint, key);
}

std::optional<Error> check_bound(const ConfigField& field, double value, const ConfigOrigins& origins) {
  if (!std::isfinite(value)) {
    return invalid_value(field.info.key, "must be a finite number", "write a number such as 600", origins);
  }
  const auto& bound = field.rules.bound;
  if (!bound) return std::nullopt;
  const bool ok = bound->exclusive ? value > bound->minimum : value >= bound->minimum;
  if (ok) return std::nullopt;
  return invalid_value(field.info.key, "must be " + field.info.constraint + ", got " + format_exact_number(value),
                       "set a value " + field.info.constraint, origins);
}

std::optional<Error> check_list(const ConfigField& field, const StringList& values, const ConfigOrigins& origins) {
  if (field.rules.required && values.empty()) {
    return invalid_value(field.info.key, "must not be an empty array", "give at least one value", origins);
  }
  for (const auto& value : values) {
    if (!field.rules.blank_elements && detail::is_blank(value)) {
      return invalid_value(field.info.key, "has an empty element", "remove the empty string from the array", origins);
    }
  }
  return std::nullopt;
}

std::optional<Error> check_table(const ConfigField& field, const StringTable& values, const ConfigOrigins& origins) {
  for (const auto& [name, value] : values) {
    // These tables are environment variables: a name with '=' or nothing in it cannot be set.
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos) {
      return invalid_value(field.info.key, "has the variable name '" + name + "', which cannot be set",
                           "use a name like CUDA_LAUNCH_BLOCKING (no '=')", origins);
    }
  }
  return std::nullopt;
}

std::optional<Error> check_field(const ConfigField& field, const DeepProfileConfig& config,
                                 const ConfigOrigins& origins) {
  return std::visit(
      [&](const auto member) -> std::optional<Error> {
        using Member = std::remove_cv_t<std::remove_pointer_t<decltype(member)>>;
        if constexpr (std::is_same_v<Member, ChoiceFieldRef>) {
          return std::nullopt;  // an enumerator by construction: load_config parsed it
        } else if constexpr (std::is_same_v<Member, GpuMetricsSetting>) {
          return std::nullopt;  // its frequency's bounds: check_across_fields, for a config built in code
        } else if constexpr (std::is_same_v<Member, std::string> || std::is_same_v<Member, std::filesystem::path>) {
          const std::string text = [&] {
            if constexpr (std::is_same_v<Member, std::string>)
              return *member;
            else
              return member->string();
          }();
          if (field.rules.required && text.empty()) {
            return invalid_value(field.info.key, "must not be empty", "set a value; the default file has one", origins);
          }
          return std::nullopt;
        } else if constexpr (std::is_same_v<Member, int> || std::is_same_v<Member, std::int64_t> ||
                             std::is_same_v<Member, double>) {
          return check_bound(field, static_cast<double>(*member), origins);
        } else if constexpr (std::is_same_v<Member, std::optional<int>>) {
          if (!*member) return std::nullopt;
          return check_bound(field, static_cast<double>(**member), origins);
        } else if constexpr (std::is_same_v<Member, StringList>) {
          return check_list(field, *member, origins);
        } else if constexpr (std::is_same_v<Member, StringTable>) {
          return check_table(field, *member, origins);
        } else {
          return std::nullopt;  // booleans: any value is valid
        }
      },
      locate_field(field, config));
}

std::optional<Error> check_across_fields(const DeepProfileConfig& config, const ConfigOrigins& origins) {
  for (const auto& entry : config.run.ignore_ranges) {
    if (auto parsed = parse_ignore_range(entry); !parsed) {
      Error error = parsed.error();
      error.message += where_set(origins, "run.ignore_ranges");
      return error;
    }
  }
  if (config.nsys.capture_range == NsysCaptureRange::nvtx && detail::is_blank(config.nsys.nvtx_capture)) {
    return make_error(ErrorCode::invalid_argument,
                      "nsys.capture_range is nvtx but nsys.nvtx_capture is empty: an NVTX gate needs a range name" +
                          where_set(origins, "nsys.nvtx_capture"),
                      "set nsys.nvtx_capture=decode or nsys.capture_range=none", "nsys.nvtx_capture");
  }
  if (config.nsys.capture_windows > 0 && config.nsys.capture_range_end != NsysCaptureRangeEnd::repeat) {
    return make_error(ErrorCode::invalid_argument,
                      "nsys.capture_windows is " + std::to_string(config.nsys.capture_windows) +
                          " but nsys.capture_range_end is not repeat, so nsys would capture one window" +
                          where_set(origins, "nsys.capture_windows"),
                      "set nsys.capture_range_end=repeat:" + std::to_string(config.nsys.capture_windows) +
                          ", or nsys.capture_windows=0",
                      "nsys.capture_windows");
  }
  // load_config only ever parses a valid setting; a config built in code may hold a frequency nsys refuses.
  if (auto parsed = parse_gpu_metrics_setting(format_gpu_metrics_setting(config.nsys.gpu_metrics)); !parsed) {
    Error error = parsed.error();
    error.message += where_set(origins, "nsys.gpu_metrics");
    return error;
  }
  if (config.run.kernel_coverage > 1) {
    return make_error(
        ErrorCode::invalid_argument,
        "run.kernel_coverage is " + format_number(config.run.kernel_coverage) +
            ", but it is a fraction of the stage's kernel time (at most 1)" + where_set(origins, "run.kernel_coverage"),
        "write e.g. run.kernel_coverage=0.9 for 90%, or 0 to select run.top_n_kernels", "run.kernel_coverage");
  }
  if (config.ncu.launches_per_kernel > config.ncu.max_launches) {
    return make_error(ErrorCode::invalid_argument,
                      "ncu.launches_per_kernel (" + std::to_string(config.ncu.launches_per_kernel) +
                          ") exceeds ncu.max_launches (" + std::to_string(config.ncu.max_launches) +
                          "), the bound on the whole ncu run" + where_set(origins, "ncu.launches_per_kernel"),
                      "raise ncu.max_launches or lower ncu.launches_per_kernel", "ncu.launches_per_kernel");
  }
  for (const auto& domain : config.nsys.nvtx_domain_include) {
    const auto& excluded = config.nsys.nvtx_domain_exclude;
    if (std::find(excluded.begin(), excluded.end(), domain) != excluded.end()) {
      return make_error(ErrorCode::invalid_argument,
                        "NVTX domain '" + domain + "' is both in nsys.nvtx_domain_include and nsys.nvtx_domain_exclude",
                        "keep it in one of the two lists", "nsys.nvtx_domain_exclude");
    }
  }
  if (config.ncu.kernel_regex.rfind("regex:", 0) == 0) {
    return make_error(ErrorCode::invalid_argument,
                      "ncu.kernel_regex starts with 'regex:'; the prefix is added when the ncu command is built" +
                          where_set(origins, "ncu.kernel_regex"),
                      "write only the expression, e.g. ncu.kernel_regex=\"gemm|flash\"", "ncu.kernel_regex");
  }
  const std::string& run_id = config.run.run_id;
  if (run_id == "." || run_id == ".." || run_id.find_first_of("/\\") != std::string::npos) {
    return make_error(ErrorCode::invalid_argument,
                      "run.run_id '" + run_id + "' is not a plain directory name" + where_set(origins, "run.run_id"),
                      "use letters, digits, '-', '_' or '.'; the run directory is <runs_root>/<run_id>", "run.run_id");
  }
  return std::nullopt;
}

}  // namespace

Error unknown_choice(const std::string& key, std::string_view value, std::span<const std::string_view> names,
                     const std::string& where) {
  const std::vector<std::string> allowed(names.begin(), names.end());
  const std::string nearest = nearest_candidate(value, allowed);
  return make_error(
      ErrorCode::invalid_argument,
      "configuration key " + key + " is '" + std::string(value) +
          "', which is not one of: " + detail::join(allowed, ", ") + " (set at " + where + ")",
      nearest.empty() ? "use one of: " + detail::join(allowed, ", ") : "did you mean " + key + "=" + nearest + "?",
      key);
}

Result<void> validate_config_values(const DeepProfileConfig& config, const ConfigOrigins& origins) {
  for (const auto& field : config_fields()) {
    if (auto error = check_field(field, config, origins)) return *error;
  }
  if (auto error = check_across_fields(config, origins)) return *error;
  return {};
}

}  // namespace detail

Result<void> validate_config(const DeepProfileConfig& config) {
  return detail::validate_config_values(config, detail::ConfigOrigins{});
}

Result<LibraryRanges> library_ranges_of(const DeepProfileConfig& config) {
  return LibraryRanges::with_ignored(config.run.ignore_ranges);
}

}  // namespace llmprof
