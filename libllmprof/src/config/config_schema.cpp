// The configuration schema: every dotted key of DeepProfileConfig, its type (from the member it binds),
// its allowed values or bounds, and a one-line description. This table is the single source of truth
// for load_config, validate_config, config_to_toml and `deep-profile config --keys`.
#include "config/config_schema.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <type_traits>
#include <utility>
#include <variant>

namespace llmprof::detail {
namespace {

// Binds "section.name" to &config.section.name; the key text is made from the member names so the
// two can never disagree.
#define LLMPROF_CONFIG_KEY(section, name) \
#section "." #name, [](DeepProfileConfig & c) -> ConfigFieldRef { return field_ref(&c.section.name); }

const char* type_name(const ConfigFieldRef& ref) {
  static constexpr const char* names[] = {"string",       "path",  "boolean", "integer", "integer", "float",
                                          "string array", "table", "integer", "string",  "string"};
  static_assert(std::size(names) == std::variant_size_v<ConfigFieldRef>, "a type name per ConfigFieldRef alternative");
  return names[ref.index()];
}

std::string describe_rules(const ConfigRules& rules, bool is_array) {
  std::vector<std::string> parts;
  if (rules.bound)
    parts.push_back(std::string(rules.bound->exclusive ? "> " : ">= ") + format_exact_number(rules.bound->minimum));
  if (rules.required) parts.emplace_back("not empty");
  if (is_array && !rules.blank_elements) parts.emplace_back("no empty elements");
  return join(parts, ", ");
}

ConfigField make_field(const char* key, ConfigFieldRef (*locate)(DeepProfileConfig&), const char* description,
                       ConfigRules rules = {}) {
  DeepProfileConfig probe;
  const ConfigFieldRef field_ref_probe = locate(probe);
  ConfigField field;
  field.info.key = key;
  field.info.type = type_name(field_ref_probe);
  field.info.description = description;
  if (const auto* choice = std::get_if<ChoiceFieldRef>(&field_ref_probe)) {
    field.info.allowed_values.assign(choice->names.begin(), choice->names.end());
  }
  field.info.constraint = describe_rules(rules, field.info.type == "string array");
  field.locate = locate;
  field.rules = rules;  // trivially copyable: a move would copy anyway
  return field;
}

ConfigRules at_least(double minimum) { return {.bound = ConfigBound{minimum, false}}; }
ConfigRules above(double minimum) { return {.bound = ConfigBound{minimum, true}}; }
ConfigRules not_empty() { return {.required = true, .blank_elements = false}; }
ConfigRules no_blank_elements() { return {.blank_elements = false}; }

std::vector<ConfigField> build_run_fields() {
  return {
      make_field(LLMPROF_CONFIG_KEY(run, runs_root), "directory that holds one MAIN directory per run", not_empty()),
      make_field(LLMPROF_CONFIG_KEY(run, run_id), "name of the run directory; empty: UTC timestamp + suffix"),
      make_field(LLMPROF_CONFIG_KEY(run, keep_newest_runs), "retention: keep only the newest N runs; 0 keeps all",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(run, device_index),
                 "GPU index; sets CUDA_VISIBLE_DEVICES for the workload (example uses cuda:0); unset: inherited",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(run, stage), "NVTX stage whose kernels the top-N selection ranks", not_empty()),
      make_field(LLMPROF_CONFIG_KEY(run, top_n_kernels), "how many of the stage's heaviest kernels ncu profiles",
                 at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(run, kernel_coverage),
                 "select the fewest heaviest kernels reaching this fraction of the stage's kernel time (0.9); "
                 "0: top_n_kernels",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(run, max_kernels), "at most this many distinct kernels in a coverage selection",
                 at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(run, repeats),
                 "bare stage-1 runs: mean, standard deviation and 95% interval of their times (2+ for noise)",
                 at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(run, record_gpu_state),
                 "record GPU clocks, temperature, power, throttling and other processes before/after GPU stages"),
      make_field(LLMPROF_CONFIG_KEY(run, on_empty_gate), "when a gated nsys capture yields no report"),
      make_field(LLMPROF_CONFIG_KEY(run, report_size_cap_gb), "warn when one profiler report is larger (GB)", above(0)),
      make_field(LLMPROF_CONFIG_KEY(run, min_free_space_gb),
                 "refuse to profile below this free space on runs_root (GB)", at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(run, leave_survivors),
                 "leave running the processes a stage's workload started that outlive it (reported either way)"),
      make_field(LLMPROF_CONFIG_KEY(run, step_source),
                 "engine steps from NVTX ranges, or from the host's per-step synchronisation (sync); auto: ranges, "
                 "else sync when the capture holds no NVTX range of the workload's own"),
      make_field(LLMPROF_CONFIG_KEY(run, ignore_ranges),
                 "NVTX ranges to treat as a library's, beside the built-in list (docs/library-ranges.md): NAME or "
                 "NAME@DOMAIN, * for any run of characters; never the main stage, a gate, a step kind or discovery's "
                 "choice",
                 no_blank_elements()),
      make_field(LLMPROF_CONFIG_KEY(run, survivor_grace_s),
                 "seconds between a stage's survivors' SIGTERM and their SIGKILL", at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(run, enable_stage1), "run the workload bare once for stage-1 timings"),
      make_field(LLMPROF_CONFIG_KEY(run, enable_nsys), "run the Nsight Systems timeline stage"),
      make_field(LLMPROF_CONFIG_KEY(run, enable_ncu), "run the Nsight Compute kernel stage"),
      make_field(LLMPROF_CONFIG_KEY(run, enable_analyze), "write the roofline/MFU analysis to MAIN/analysis"),
      make_field(LLMPROF_CONFIG_KEY(run, enable_report), "write MAIN/report.md and MAIN/report.html"),
  };
}

// Config rows stay literal, one per key with its help text: the schema is read, not computed (the duplicates tool
// pairs the sections' row lists by shape).
std::vector<ConfigField> build_workload_fields() {
  return {
      make_field(LLMPROF_CONFIG_KEY(workload, argv), "workload command; empty: the bundled example llmprof-decode"),
      make_field(LLMPROF_CONFIG_KEY(workload, example_args), "extra flags for the bundled example"),
      make_field(LLMPROF_CONFIG_KEY(workload, env), "environment overrides for the workload (NAME = \"value\")"),
      make_field(LLMPROF_CONFIG_KEY(workload, cwd), "working directory of the workload; empty: the current one"),
      make_field(LLMPROF_CONFIG_KEY(workload, timeout_s), "time limit of the bare stage-1 run (seconds)", above(0)),
  };
}

std::vector<ConfigField> build_nsys_fields() {
  return {
      make_field(LLMPROF_CONFIG_KEY(nsys, path), "nsys executable; empty: probe PATH and the usual install places"),
      make_field(LLMPROF_CONFIG_KEY(nsys, trace), "nsys profile --trace APIs (cuda, nvtx, osrt, cublas, ...)",
                 not_empty()),
      make_field(LLMPROF_CONFIG_KEY(nsys, sample), "nsys profile --sample (CPU IP sampling)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, cpuctxsw), "nsys profile --cpuctxsw (CPU context switches)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, wait),
                 "nsys profile --wait: primary ends the capture with the workload's process (what it leaves running "
                 "is ended after the stage); all waits for every process it started"),
      make_field(LLMPROF_CONFIG_KEY(nsys, capture_range), "nsys profile --capture-range (what opens the capture)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, nvtx_capture),
                 "nsys profile --nvtx-capture: NVTX range that opens the gate (range[@domain])"),
      make_field(LLMPROF_CONFIG_KEY(nsys, capture_range_end),
                 "nsys profile --capture-range-end (\"repeat:N\" also sets nsys.capture_windows)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, capture_skip),
                 "engine steps (instances of the step range) left out of the step analysis before the window",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(nsys, capture_count),
                 "engine steps the step analysis keeps after capture_skip; 0: all", at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(nsys, capture_windows),
                 "with capture_range_end = repeat: at most this many windows, one report each; 0: no bound",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(nsys, nvtx_domain_include), "nsys profile --nvtx-domain-include"),
      make_field(LLMPROF_CONFIG_KEY(nsys, nvtx_domain_exclude), "nsys profile --nvtx-domain-exclude"),
      make_field(LLMPROF_CONFIG_KEY(nsys, env_vars), "nsys profile --env-var NAME=value for the profiled workload"),
      make_field(LLMPROF_CONFIG_KEY(nsys, profile_stats), "nsys profile --stats=true (summary into the nsys log)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, stats_reports), "nsys stats --report list, for their CSVs; empty: the tables come from the SQLite export (no nsys stats)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, stats_extra_args), "extra arguments for nsys stats, before the report"),
      make_field(LLMPROF_CONFIG_KEY(nsys, export_sqlite), "also nsys export --type sqlite (MAIN/nsys/profile.sqlite)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, graph_node_pass),
                 "when the capture recorded CUDA graph launches whole, capture again with --cuda-graph-trace=node "
                 "(MAIN/nsys/node/) so that the kernel figures list the graphs' kernels"),
      make_field(LLMPROF_CONFIG_KEY(nsys, restrict_discovery_to_window),
                 "the followed cudaProfilerStart/Stop window from the discovery capture's export, not a second capture"),
      make_field(LLMPROF_CONFIG_KEY(nsys, timeout_s), "time limit of nsys profile with the workload (seconds)",
                 above(0)),
      make_field(LLMPROF_CONFIG_KEY(nsys, postprocess_timeout_s),
                 "time limit of each of .qdstrm import, nsys stats, nsys export (seconds)", above(0)),
      make_field(LLMPROF_CONFIG_KEY(nsys, extra_args), "extra arguments for nsys profile, before the workload"),
      make_field(LLMPROF_CONFIG_KEY(nsys, gpu_metrics),
                 "GPU-metrics sampling in every capture: auto (20 kHz where the probe finds it available), off, "
                 "or a frequency in Hz (10..200000)"),
      make_field(LLMPROF_CONFIG_KEY(nsys, gpu_metrics_set),
                 "nsys --gpu-metrics-set alias; empty: the set the probe matched to the GPU's chip"),
  };
}

std::vector<ConfigField> build_ncu_fields() {
  return {
      make_field(LLMPROF_CONFIG_KEY(ncu, path), "ncu executable; empty: probe PATH and the usual install places"),
      make_field(LLMPROF_CONFIG_KEY(ncu, set), "\"llmprof\": only what the analysis reads (config/ncu-sections); else ncu --set (checked against ncu --list-sets); empty: none"),
      make_field(LLMPROF_CONFIG_KEY(ncu, sections), "ncu --section identifiers, exact (no regex)"),
      make_field(LLMPROF_CONFIG_KEY(ncu, metrics), "ncu --metrics, added to the set and sections"),
      make_field(LLMPROF_CONFIG_KEY(ncu, nvtx_include), "ncu --nvtx --nvtx-include expressions (\"decode/\")",
                 no_blank_elements()),
      make_field(LLMPROF_CONFIG_KEY(ncu, nvtx_exclude), "ncu --nvtx-exclude expressions", no_blank_elements()),
      make_field(LLMPROF_CONFIG_KEY(ncu, kernel_regex),
                 "ncu --kernel-name regex:VALUE; empty: built from the top-N selection"),
      make_field(LLMPROF_CONFIG_KEY(ncu, kernel_name_base), "ncu --kernel-name-base, also used to name kernels"),
      make_field(LLMPROF_CONFIG_KEY(ncu, launch_skip), "ncu --launch-skip", at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, launches_per_kernel), "launches profiled per selected kernel", at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(ncu, max_launches), "ncu --launch-count bound on the whole ncu run", at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(ncu, plan),
                 "per-kernel: a few launches of each selected kernel and launch configuration (ncu --filter-mode "
                 "per-launch-config); bounded: one --launch-count bound, then a pass per kernel it missed"),
      make_field(LLMPROF_CONFIG_KEY(ncu, launches_per_config),
                 "per-kernel plan: launches per kernel and launch configuration", at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(ncu, plan_max_launch_count),
                 "per-kernel plan: highest --launch-count a pass uses before another pass takes the kernels it misses",
                 at_least(1)),
      make_field(LLMPROF_CONFIG_KEY(ncu, seconds_per_launch),
                 "per-kernel plan: estimated ncu seconds per profiled launch; 0: the set's own figure (a run's "
                 "measured figure replaces either)",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, start_up_overhead_s),
                 "per-kernel plan: seconds ncu adds to the workload's start-up to the stage before a pass profiles "
                 "(a run of the runs root measures it)",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, max_seconds),
                 "per-kernel plan: a bound on its estimated seconds; the kernels giving up the least kernel time per "
                 "second saved are left out until the estimate fits (0: no bound)",
                 at_least(0)),
      make_field(
          LLMPROF_CONFIG_KEY(ncu, seconds_per_pass),
          "per-kernel plan: ncu seconds per pass beyond its launches; 0: the bare run's wall time plus "
          "ncu.seconds_per_intercepted_launch per kernel launch nsys recorded",
          at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, seconds_per_intercepted_launch),
                 "per-kernel plan: ncu's cost per kernel launch it intercepts without profiling it", at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, end_workload_when_planned),
                 "per-kernel plan: end the workload (not ncu) once a pass has profiled its planned launches"),
      make_field(LLMPROF_CONFIG_KEY(ncu, workload_end_grace_s),
                 "seconds between that SIGTERM to the workload and its SIGKILL", above(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, pass_timeout_s),
                 "each ncu pass's bound (seconds): past it its workload is ended and ncu keeps what it profiled; "
                 "0: 3x the pass's estimate, at least 60 s past it",
                 at_least(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, retry_without_filter),
                 "after \"No kernels were profiled\", run once more without the kernel filter (bounded)"),
      make_field(LLMPROF_CONFIG_KEY(ncu, replay_mode), "ncu --replay-mode"),
      make_field(LLMPROF_CONFIG_KEY(ncu, clock_control), "ncu --clock-control"),
      make_field(LLMPROF_CONFIG_KEY(ncu, cache_control), "ncu --cache-control"),
      make_field(LLMPROF_CONFIG_KEY(ncu, target_all_processes), "ncu --target-processes all (launcher workloads)"),
      make_field(LLMPROF_CONFIG_KEY(ncu, print_units_base), "ncu --import --csv --print-units base"),
      make_field(LLMPROF_CONFIG_KEY(ncu, timeout_s), "time limit of ncu profile with the workload (seconds)", above(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, postprocess_timeout_s), "time limit of the ncu CSV export (seconds)",
                 above(0)),
      make_field(LLMPROF_CONFIG_KEY(ncu, extra_args), "extra arguments for ncu, before the workload"),
  };
}

#undef LLMPROF_CONFIG_KEY

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = [] {
    std::vector<ConfigField> all;
    for (auto part : {build_run_fields(), build_workload_fields(), build_nsys_fields(), build_ncu_fields()}) {
      all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return all;
  }();
  return fields;
}

const ConfigField* find_config_field(std::string_view key) {
  for (const auto& field : config_fields()) {
    if (field.info.key == key) return &field;
  }
  return nullptr;
}

ConfigFieldRef locate_field(const ConfigField& field, DeepProfileConfig& config) { return field.locate(config); }

ConfigFieldRef locate_field(const ConfigField& field, const DeepProfileConfig& config) {
  // The locator only takes an address; nothing is written through it here.
  return field.locate(const_cast<DeepProfileConfig&>(config));
}

std::vector<std::string> config_key_names() {
  std::vector<std::string> names = {"run", "workload", "nsys", "ncu"};
  for (const auto& field : config_fields()) names.push_back(field.info.key);
  return names;
}

namespace {
std::string_view leaf_of(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}
}  // namespace

std::string nearest_candidate(std::string_view wrong, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& candidate : candidates) {
    std::size_t distance = edit_distance(wrong, candidate);
    // The right key in the wrong section ("run.nvtx_capture") is a likely mistake too.
    if (leaf_of(wrong) == leaf_of(candidate) && leaf_of(candidate) != candidate)
      distance = std::min<std::size_t>(distance, 2);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  const std::size_t plausible = std::max<std::size_t>(3, wrong.size() / 3);
  return best_distance <= plausible ? best : std::string();
}

}  // namespace llmprof::detail

namespace llmprof {

const std::vector<ConfigKeyInfo>& config_schema() {
  static const std::vector<ConfigKeyInfo> schema = [] {
    std::vector<ConfigKeyInfo> infos;
    for (const auto& field : detail::config_fields()) infos.push_back(field.info);
    return infos;
  }();
  return schema;
}

}  // namespace llmprof
