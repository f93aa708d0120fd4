// Configuration: the defaults file, layering, overrides, errors a user sees, round trip, presets.
#include "llmprof/config.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "config/config_schema.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

std::filesystem::path config_dir() { return std::filesystem::path(LLMPROF_SOURCE_DIR) / "config"; }
std::filesystem::path default_file() { return config_dir() / "deep-profile.toml"; }

Result<DeepProfileConfig> load_with(std::vector<std::string> overrides,
                                    std::vector<std::filesystem::path> extra_files = {}) {
  ConfigSources sources;
  sources.files.push_back(default_file());
  for (auto& file : extra_files) sources.files.push_back(std::move(file));
  sources.overrides = std::move(overrides);
  return load_config(sources);
}

DeepProfileConfig load_ok(std::vector<std::string> overrides, std::vector<std::filesystem::path> extra_files = {}) {
  auto config = load_with(std::move(overrides), std::move(extra_files));
  if (!config) FAIL(config.error().describe());
  return *config;
}

Error load_error(std::vector<std::string> overrides, std::vector<std::filesystem::path> extra_files = {}) {
  auto config = load_with(std::move(overrides), std::move(extra_files));
  REQUIRE_FALSE(config.has_value());
  return config.error();
}

// The lines of `text` between "[section]" and the next header.
std::string section_text(const std::string& text, const std::string& section) {
  const auto start = text.find("\n[" + section + "]\n");
  REQUIRE(start != std::string::npos);
  const auto end = text.find("\n[", start + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

TEST_CASE("the defaults file equals DeepProfileConfig{} key by key") {
  auto loaded = load_config(ConfigSources{{default_file()}, {}});
  REQUIRE(loaded.has_value());
  const DeepProfileConfig defaults;
  for (const auto& field : detail::config_fields()) {
    INFO("key " << field.info.key);
    CHECK(detail::render_field_value(field, *loaded) == detail::render_field_value(field, defaults));
  }
  CHECK(*loaded == defaults);
  // load_config with no files at all is the same thing: the struct defaults are the file's values.
  auto bare = load_config(ConfigSources{});
  REQUIRE(bare.has_value());
  CHECK(*bare == *loaded);
}

TEST_CASE("the defaults file sets every schema key itself, with a comment") {
  // Equality above would hold for a key missing from the file too; this makes the file complete.
  const std::string text = llmprof::testing::read_file(default_file());
  for (const auto& field : detail::config_fields()) {
    const auto dot = field.info.key.find('.');
    const std::string section = field.info.key.substr(0, dot);
    const std::string name = field.info.key.substr(dot + 1);
    INFO("key " << field.info.key);
    const std::string body = section_text(text, section);
    if (field.info.key == "run.device_index") {
      // Unset by default (an optional): present as a commented example.
      CHECK(std::regex_search(body, std::regex("\n# " + name + " = ")));
    } else {
      CHECK(std::regex_search(body, std::regex("\n" + name + " = ")));
    }
  }
  CHECK(std::count(text.begin(), text.end(), '#') > static_cast<long>(detail::config_fields().size()));
}

TEST_CASE("the default NVTX gate is a range the example emits, never the 'range' placeholder") {
  const DeepProfileConfig defaults;
  CHECK(defaults.nsys.capture_range == NsysCaptureRange::nvtx);
  CHECK(defaults.nsys.nvtx_capture == "decode");
  CHECK(defaults.ncu.nvtx_include == std::vector<std::string>{"decode/"});
  CHECK(validate_config(defaults).has_value());
}

TEST_CASE("layers apply in order: files, then overrides; tables merge, arrays replace") {
  TempDir dir;
  write_file(dir / "a.toml",
             "[run]\ntop_n_kernels = 3\n[ncu]\nset = \"basic\"\nsections = [\"Occupancy\", \"LaunchStats\"]\n"
             "[workload.env]\nA = \"1\"\nB = \"2\"\n");
  write_file(dir / "b.toml",
             "[run]\ntop_n_kernels = 4\n[ncu]\nsections = [\"SpeedOfLight\"]\n[workload]\nenv = { B = \"3\" }\n");

  auto ab = load_ok({}, {dir / "a.toml", dir / "b.toml"});
  CHECK(ab.run.top_n_kernels == 4);
  CHECK(ab.ncu.set == "basic");  // from a, untouched by b
  CHECK(ab.ncu.sections == std::vector<std::string>{"SpeedOfLight"});
  CHECK(ab.workload.env == std::map<std::string, std::string>{{"A", "1"}, {"B", "3"}});

  auto ba = load_ok({}, {dir / "b.toml", dir / "a.toml"});
  CHECK(ba.run.top_n_kernels == 3);
  CHECK(ba.ncu.sections == std::vector<std::string>{"Occupancy", "LaunchStats"});
  CHECK(ba.workload.env.at("B") == "2");

  auto overridden = load_ok({"run.top_n_kernels=7", "workload.env.C=4"}, {dir / "a.toml", dir / "b.toml"});
  CHECK(overridden.run.top_n_kernels == 7);
  CHECK(overridden.workload.env == std::map<std::string, std::string>{{"A", "1"}, {"B", "3"}, {"C", "4"}});

  // Overrides apply in order too.
  CHECK(load_ok({"run.top_n_kernels=8", "run.top_n_kernels=9"}).run.top_n_kernels == 9);
}

TEST_CASE("kernel coverage is the default selection; top_n_kernels set in a later layer selects by count") {
  CHECK(DeepProfileConfig{}.run.kernel_coverage == 0.9);
  CHECK(load_ok({}).run.kernel_coverage == 0.9);
  // An override of the count alone: the count.
  const auto by_count = load_ok({"run.top_n_kernels=5"});
  CHECK(by_count.run.top_n_kernels == 5);
  CHECK(by_count.run.kernel_coverage == 0);
  // Coverage set after the count: coverage; both in one layer: as written.
  CHECK(load_ok({"run.top_n_kernels=5", "run.kernel_coverage=0.8"}).run.kernel_coverage == 0.8);
  TempDir dir;
  write_file(dir / "both.toml", "[run]\ntop_n_kernels = 5\nkernel_coverage = 0.95\n");
  CHECK(load_ok({}, {dir / "both.toml"}).run.kernel_coverage == 0.95);
  write_file(dir / "count.toml", "[run]\ntop_n_kernels = 7\n");
  CHECK(load_ok({}, {dir / "both.toml", dir / "count.toml"}).run.kernel_coverage == 0);
  CHECK(load_ok({"run.kernel_coverage=0.9"}, {dir / "count.toml"}).run.kernel_coverage == 0.9);
  // The presets set a count: they select by it.
  CHECK(load_ok({}, {*find_preset("quick", {config_dir()})}).run.kernel_coverage == 0);
}

TEST_CASE("the quick and thorough presets layer over the defaults") {
  auto quick = find_preset("quick", {config_dir()});
  REQUIRE(quick.has_value());
  auto config = load_ok({}, {*quick});
  CHECK(config.run.top_n_kernels == 5);
  CHECK(config.ncu.set == "basic");
  CHECK(config.ncu.max_launches == 20);
  CHECK(config.nsys.nvtx_capture == "decode");  // untouched: still the default's

  auto thorough = find_preset("thorough", {config_dir()});
  REQUIRE(thorough.has_value());
  auto deep = load_ok({}, {*thorough});
  CHECK(deep.run.top_n_kernels == 20);
  CHECK(deep.ncu.set == "full");
  CHECK(deep.nsys.export_sqlite);
  CHECK(deep.nsys.trace == std::vector<std::string>{"cuda", "nvtx", "osrt"});

  auto sources = resolve_config_sources(ConfigSelection{"quick", {}, {"run.top_n_kernels=6"}}, {config_dir()});
  REQUIRE(sources.has_value());
  REQUIRE(sources->files.size() == 2);
  CHECK(sources->files[0].filename() == "deep-profile.toml");
  CHECK(sources->files[1].filename() == "quick.toml");
  auto resolved = load_config(*sources);
  REQUIRE(resolved.has_value());
  CHECK(resolved->run.top_n_kernels == 6);
  CHECK(resolved->ncu.set == "basic");
}

TEST_CASE("overrides of every type") {
  auto config = load_ok({
      "nsys.nvtx_capture=prefill",                      // bare string
      "ncu.set=\"full\"",                               // quoted string
      "run.run_id=20250101",                            // a string key keeps digits as text
      "run.runs_root=/tmp/my runs",                     // path with a space
      "run.top_n_kernels = 12",                         // integer, spaces around '='
      "ncu.launch_skip=5000000000",                     // 64-bit integer
      "run.report_size_cap_gb=0.5",                     // float
      "workload.timeout_s=30",                          // an integer is a fine float
      "run.enable_ncu=false",                           // boolean
      "run.device_index=1",                             // optional integer
      "ncu.sections=[\"SpeedOfLight\",\"Occupancy\"]",  // string array
      "nsys.stats_reports=[]",                          // empty array
      "workload.env.FOO=bar",                           // one table entry
      "workload.env.OPTS=a=b",                          // '=' inside the value
      "nsys.env_vars={ X = \"1\", Y = \"2\" }",         // a whole table
      "workload.argv=[\"python\", \"serve.py\", \"--batch\", \"8\"]",
  });
  CHECK(config.nsys.nvtx_capture == "prefill");
  CHECK(config.ncu.set == "full");
  CHECK(config.run.run_id == "20250101");
  CHECK(config.run.runs_root == std::filesystem::path("/tmp/my runs"));
  CHECK(config.run.top_n_kernels == 12);
  CHECK(config.ncu.launch_skip == 5000000000LL);
  CHECK(config.run.report_size_cap_gb == 0.5);
  CHECK(config.workload.timeout_s == 30.0);
  CHECK_FALSE(config.run.enable_ncu);
  CHECK(config.run.device_index == std::optional<int>(1));
  CHECK(config.ncu.sections == std::vector<std::string>{"SpeedOfLight", "Occupancy"});
  CHECK(config.nsys.stats_reports.empty());
  CHECK(config.workload.env == std::map<std::string, std::string>{{"FOO", "bar"}, {"OPTS", "a=b"}});
  CHECK(config.nsys.env_vars == std::map<std::string, std::string>{{"X", "1"}, {"Y", "2"}});
  CHECK(config.workload.argv == std::vector<std::string>{"python", "serve.py", "--batch", "8"});
  // Untouched keys keep the default file's values.
  CHECK(config.nsys.capture_range == NsysCaptureRange::nvtx);
}

TEST_CASE("an unknown key names where it was and suggests the nearest valid key") {
  TempDir dir;
  write_file(dir / "typo.toml", "# my settings\n[nsys]\nnvtx_captur = \"decode\"\n");
  auto from_file = load_error({}, {dir / "typo.toml"});
  CHECK(from_file.code == ErrorCode::invalid_argument);
  CHECK(from_file.subject == "nsys.nvtx_captur");
  CHECK_THAT(from_file.message, Catch::Contains("'nsys.nvtx_captur'"));
  CHECK_THAT(from_file.message, Catch::Contains((dir / "typo.toml").string() + ":3:1"));
  CHECK_THAT(from_file.message, Catch::Contains("did you mean nsys.nvtx_capture?"));
  CHECK_THAT(from_file.hint, Catch::Contains("nsys.capture_range"));  // lists the section's keys

  auto from_override = load_error({"nsys.nvtx_captur=decode"});
  CHECK_THAT(from_override.message, Catch::Contains("command line"));
  CHECK_THAT(from_override.message, Catch::Contains("did you mean nsys.nvtx_capture?"));

  // The right key in the wrong section.
  CHECK_THAT(load_error({"run.nvtx_capture=decode"}).message, Catch::Contains("did you mean nsys.nvtx_capture?"));
  // An unknown section.
  write_file(dir / "section.toml", "[nsy]\ntrace = [\"cuda\"]\n");
  auto section = load_error({}, {dir / "section.toml"});
  CHECK_THAT(section.message, Catch::Contains("'nsy'"));
  CHECK_THAT(section.message, Catch::Contains("did you mean nsys?"));
  // Nothing close: no made-up suggestion.
  auto far = load_error({"ncu.completely_unrelated_thing=1"});
  CHECK_THAT(far.message, !Catch::Contains("did you mean"));
  CHECK_THAT(far.hint, Catch::Contains("ncu.kernel_regex"));
  // A table entry under a key that is not a table is unknown, not silently ignored.
  CHECK(load_error({"run.stage.decode=1"}).subject == "run.stage.decode");
  CHECK_THAT(load_error({"run.top_n_kernels"}).message, Catch::Contains("section.key=value"));
}

TEST_CASE("a wrong type names the key, the expected type and what was given") {
  TempDir dir;
  write_file(dir / "bad.toml", "[run]\ntop_n_kernels = \"ten\"\n");
  auto error = load_error({}, {dir / "bad.toml"});
  CHECK(error.subject == "run.top_n_kernels");
  CHECK_THAT(error.message, Catch::Contains("expects integer"));
  CHECK_THAT(error.message, Catch::Contains("got string \"ten\""));
  CHECK_THAT(error.message, Catch::Contains((dir / "bad.toml").string() + ":2:17"));

  CHECK_THAT(load_error({"run.enable_ncu=yes"}).message, Catch::Contains("expects boolean, got string \"yes\""));
  CHECK_THAT(load_error({"run.top_n_kernels=2.5"}).message, Catch::Contains("expects integer, got float 2.5"));
  CHECK_THAT(load_error({"ncu.sections=SpeedOfLight"}).message, Catch::Contains("expects string array"));
  CHECK_THAT(load_error({"ncu.sections=[\"a\", 3]"}).message, Catch::Contains("element 1 is integer 3"));
  CHECK_THAT(load_error({"workload.env=3"}).message, Catch::Contains("expects table"));
  CHECK_THAT(load_error({"run.device_index=99999999999"}).message, Catch::Contains("out of range"));
  write_file(dir / "env.toml", "[workload.env]\nN = 1\n");
  CHECK_THAT(load_error({}, {dir / "env.toml"}).message,
             Catch::Contains("workload.env.N expects string, got integer 1"));
  write_file(dir / "scalar.toml", "run = 3\n");
  CHECK_THAT(load_error({}, {dir / "scalar.toml"}).message, Catch::Contains("must be a table"));
}

TEST_CASE("an enumerated key lists its valid values and the nearest one") {
  auto error = load_error({"nsys.capture_range=nvxt"});
  CHECK(error.subject == "nsys.capture_range");
  CHECK_THAT(error.message, Catch::Contains("'nvxt'"));
  CHECK_THAT(error.message, Catch::Contains("none, nvtx, cudaProfilerApi"));
  CHECK_THAT(error.message, Catch::Contains("command line override 'nsys.capture_range=nvxt'"));
  CHECK_THAT(error.hint, Catch::Contains("did you mean nsys.capture_range=nvtx?"));

  CHECK_THAT(load_error({"run.on_empty_gate=retry"}).message, Catch::Contains("diagnose, rerun_ungated, fail"));
  CHECK_THAT(load_error({"ncu.kernel_name_base=short"}).message, Catch::Contains("function, demangled, mangled"));
  CHECK_THAT(load_error({"ncu.replay_mode=app"}).message, Catch::Contains("kernel, application, range, app-range"));
  CHECK_THAT(load_error({"ncu.clock_control=reset"}).message, Catch::Contains("base, none"));
  CHECK_THAT(load_error({"ncu.cache_control=some"}).message, Catch::Contains("all, none"));
  CHECK_THAT(load_error({"nsys.sample=cpu"}).message, Catch::Contains("none, process-tree, system-wide"));
  CHECK_THAT(load_error({"nsys.capture_range_end=repeat:x"}).message,
             Catch::Contains("the count after repeat: must be a whole number of windows from 1 to 999999"));
  CHECK_THAT(load_error({"nsys.capture_range_end=stop:3"}).message, Catch::Contains("stop, stop-shutdown"));
  // repeat:N written wrong says what is wrong with it, not only the list of choices (which has no repeat:N).
  const Error zero = load_error({"nsys.capture_range_end=repeat:0"});
  CHECK(zero.message == "configuration key nsys.capture_range_end is 'repeat:0': repeat:0 asks for no window at all "
                        "(set at command line override 'nsys.capture_range_end=repeat:0')");
  CHECK(zero.hint == "write repeat:N with N >= 1 (one report per window), or repeat for no bound");
  const Error capitals = load_error({"nsys.capture_range_end=REPEAT:2"});
  CHECK_THAT(capitals.message, Catch::Contains("'REPEAT:2': nsys spells it in lower case without spaces"));
  CHECK(capitals.hint == "write nsys.capture_range_end=repeat:2");
  {
    TempDir spaced;
    for (const char* spelling : {" repeat:2", "Repeat:2 "}) {
      write_file(spaced / "spaced.toml", std::string("[nsys]\ncapture_range = \"cudaProfilerApi\"\ncapture_range_end = \"") +
                                             spelling + "\"\n");
      const Error spaced_error = load_error({}, {spaced / "spaced.toml"});
      INFO(spelling);
      CHECK_THAT(spaced_error.message, Catch::Contains(std::string("'") + spelling +
                                                       "': nsys spells it in lower case without spaces"));
      CHECK(spaced_error.hint == "write nsys.capture_range_end=repeat:2");
    }
  }
  CHECK_THAT(load_error({"nsys.capture_windows=2"}).message, Catch::Contains("capture_range_end is not repeat"));

  // Where a file set it, the error points at the file's line.
  TempDir dir;
  write_file(dir / "enum.toml", "[ncu]\n\nreplay_mode = \"kernels\"\n");
  CHECK_THAT(load_error({}, {dir / "enum.toml"}).message, Catch::Contains((dir / "enum.toml").string() + ":3:"));
  // Only the final value counts: a later layer may correct an earlier one.
  CHECK(load_ok({"ncu.replay_mode=kernels", "ncu.replay_mode=application"}).ncu.replay_mode ==
        NcuReplayMode::application);
}

TEST_CASE("nsys.gpu_metrics is parsed once into off, auto or a frequency: a bad value names key, value and forms") {
  CHECK(parse_gpu_metrics_setting("off").value() == GpuMetricsSetting::off());
  CHECK(parse_gpu_metrics_setting("auto").value() == GpuMetricsSetting::automatic());
  CHECK(parse_gpu_metrics_setting("10").value() == GpuMetricsSetting::at_hz(10));
  CHECK(parse_gpu_metrics_setting("20000").value() == GpuMetricsSetting::at_hz(20000));
  CHECK(parse_gpu_metrics_setting("200000").value() == GpuMetricsSetting::at_hz(200000));
  CHECK(parse_gpu_metrics_setting("020000").value() == GpuMetricsSetting::at_hz(20000));  // as the string key took it
  for (const char* text : {"off", "auto", "10", "20000", "200000"})
    CHECK(format_gpu_metrics_setting(parse_gpu_metrics_setting(text).value()) == text);
  // nsys takes 10..200000 Hz (its 2025.3 `profile --help`); the keywords are lower case, as config/deep-profile.toml
  // writes them.
  for (const char* bad : {"", "fast", "Auto", "OFF", " auto", "on", "0", "9", "200001", "300000", "1000000", "20k",
                          "-20", "+20", "2e4", "20000.0", "20 000"}) {
    INFO("'" << bad << "'");
    const auto parsed = parse_gpu_metrics_setting(bad);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message == std::string("nsys.gpu_metrics is '") + bad +
                                        "': it takes auto, off, or a sampling frequency in Hz from 10 to 200000");
    CHECK(parsed.error().hint == "write nsys.gpu_metrics=auto, off, or e.g. 20000");
    CHECK(parsed.error().subject == "nsys.gpu_metrics");
    CHECK(parsed.error().code == ErrorCode::invalid_argument);
  }

  // Loaded: where it was set, a frequency given bare on the command line, only the final value counting.
  const Error override_error = load_error({"nsys.gpu_metrics=fast"});
  CHECK(override_error.message == "nsys.gpu_metrics is 'fast': it takes auto, off, or a sampling frequency in Hz from "
                                  "10 to 200000 (set at command line override 'nsys.gpu_metrics=fast')");
  CHECK(override_error.hint == "write nsys.gpu_metrics=auto, off, or e.g. 20000");
  CHECK(override_error.subject == "nsys.gpu_metrics");
  TempDir dir;
  write_file(dir / "sampling.toml", "[nsys]\ngpu_metrics = \"5\"\n");
  CHECK_THAT(load_error({}, {dir / "sampling.toml"}).message,
             Catch::StartsWith("nsys.gpu_metrics is '5': it takes auto") &&
                 Catch::EndsWith("(set at " + (dir / "sampling.toml").string() + ":2:15)"));
  CHECK(load_ok({"nsys.gpu_metrics=5000"}).nsys.gpu_metrics == GpuMetricsSetting::at_hz(5000));
  CHECK(load_ok({"nsys.gpu_metrics=fast", "nsys.gpu_metrics=off"}).nsys.gpu_metrics == GpuMetricsSetting::off());
  CHECK(load_ok({"nsys.gpu_metrics=auto"}, {dir / "sampling.toml"}).nsys.gpu_metrics == GpuMetricsSetting::automatic());
  // A TOML integer in a file is the wrong type, as for every string key.
  write_file(dir / "integer.toml", "[nsys]\ngpu_metrics = 20000\n");
  CHECK_THAT(load_error({}, {dir / "integer.toml"}).message,
             Catch::StartsWith("configuration key nsys.gpu_metrics expects string, got integer 20000"));

  // config.toml writes each form as config/deep-profile.toml spells it.
  CHECK_THAT(section_text(config_to_toml(load_ok({})), "nsys"), Catch::Contains("\ngpu_metrics = \"auto\"\n"));
  CHECK_THAT(section_text(config_to_toml(load_ok({"nsys.gpu_metrics=off"})), "nsys"),
             Catch::Contains("\ngpu_metrics = \"off\"\n"));
  CHECK_THAT(section_text(config_to_toml(load_ok({"nsys.gpu_metrics=20000"})), "nsys"),
             Catch::Contains("\ngpu_metrics = \"20000\"\n"));

  // A config built in code with a frequency nsys refuses.
  DeepProfileConfig in_code;
  in_code.nsys.gpu_metrics = GpuMetricsSetting::at_hz(300000);
  const auto checked = validate_config(in_code);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().message ==
        "nsys.gpu_metrics is '300000': it takes auto, off, or a sampling frequency in Hz from 10 to 200000");
  CHECK(checked.error().subject == "nsys.gpu_metrics");
}

TEST_CASE("an NVTX gate without a range name is an error with the fix") {
  auto error = load_error({"nsys.nvtx_capture="});
  CHECK(error.subject == "nsys.nvtx_capture");
  CHECK_THAT(error.message, Catch::Contains("an NVTX gate needs a range name"));
  CHECK(error.hint == "set nsys.nvtx_capture=decode or nsys.capture_range=none");
  // Without the gate an empty expression is fine.
  auto ungated = load_ok({"nsys.nvtx_capture=", "nsys.capture_range=none"});
  CHECK(ungated.nsys.nvtx_capture.empty());
}

TEST_CASE("bounds and cross-field rules") {
  CHECK_THAT(load_error({"run.top_n_kernels=0"}).message,
             Catch::EndsWith("must be >= 1, got 0 (set at command line override 'run.top_n_kernels=0')"));
  CHECK_THAT(load_error({"workload.timeout_s=0"}).message, Catch::Contains("must be > 0"));
  CHECK_THAT(load_error({"nsys.timeout_s=-5"}).message, Catch::Contains("nsys.timeout_s must be > 0"));
  CHECK_THAT(load_error({"ncu.timeout_s=inf"}).message, Catch::Contains("finite"));
  CHECK_THAT(load_error({"ncu.launch_skip=-1"}).message, Catch::Contains(">= 0"));
  CHECK_THAT(load_error({"run.device_index=-1"}).message, Catch::Contains("run.device_index must be >= 0"));
  CHECK_THAT(load_error({"nsys.trace=[]"}).message, Catch::Contains("must not be an empty array"));
  CHECK_THAT(load_error({"ncu.nvtx_include=[\"\"]"}).message, Catch::Contains("empty element"));
  CHECK_THAT(load_error({"run.stage="}).message, Catch::Contains("run.stage must not be empty"));
  CHECK_THAT(load_error({"ncu.launches_per_kernel=5", "ncu.max_launches=4"}).message,
             Catch::Contains("exceeds ncu.max_launches"));
  CHECK_THAT(load_error({"nsys.nvtx_domain_include=[\"a\"]", "nsys.nvtx_domain_exclude=[\"a\"]"}).message,
             Catch::Contains("both in"));
  CHECK_THAT(load_error({"ncu.kernel_regex=regex:gemm"}).message, Catch::Contains("regex:"));
  CHECK_THAT(load_error({"run.run_id=../escape"}).message, Catch::Contains("not a plain directory name"));

  DeepProfileConfig in_code;
  in_code.run.top_n_kernels = 0;
  auto checked = validate_config(in_code);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().subject == "run.top_n_kernels");
}

TEST_CASE("config_to_toml round-trips a config with every key changed") {
  DeepProfileConfig config;
  config.run = {"/data/runs \"quoted\"",
                "my-run",
                3,
                2,
                "prefill",
                7,
                OnEmptyGate::rerun_ungated,
                0.25,
                1.5,
                false,
                false,
                false,
                false,
                false};
  config.run.kernel_coverage = 0.8;
  config.run.max_kernels = 12;
  config.run.repeats = 5;
  config.run.record_gpu_state = false;
  config.run.leave_survivors = true;
  config.run.survivor_grace_s = 0.5;
  config.run.step_source = StepSource::sync;
  config.run.ignore_ranges = {"warmup@*", "helper_*"};
  config.workload.argv = {"python3", "-c", "print('a\\b')\n", ""};
  config.workload.example_args = {"--preset", "1b"};
  config.workload.env = {{"PYTHONPATH", "/x:/y"}, {"WEIRD.NAME", "tab\there"}, {"UNICODE", "décodé ✓"}};
  config.workload.cwd = "/work dir";
  config.workload.timeout_s = 123.456;
  config.nsys = {"/opt/nsys",
                 {"cuda", "osrt"},
                 NsysProcessScope::process_tree,
                 NsysProcessScope::system_wide,
                 NsysCaptureRange::cuda_profiler_api,
                 "step@llm",
                 NsysCaptureRangeEnd::repeat,
                 {"llm"},
                 {"other"},
                 {{"A", "1"}},
                 true,
                 {"cuda_gpu_kern_sum"},
                 {"--timeunit=nsec"},
                 false,  // export_sqlite (default true)
                 false,  // graph_node_pass (default true)
                 0.1,
                 2.5e3,
                 {"--delay=2"}};
  config.nsys.capture_windows = 3;
  config.nsys.capture_skip = 20;
  config.nsys.capture_count = 40;
  config.nsys.wait = NsysWait::all;
  config.nsys.restrict_discovery_to_window = false;
  config.ncu.path = "/opt/ncu";
  config.ncu.set = "";
  config.ncu.sections = {"SpeedOfLight", "Occupancy"};
  config.ncu.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  config.ncu.nvtx_include = {"prefill/", "decode/"};
  config.ncu.nvtx_exclude = {"warmup/"};
  config.ncu.kernel_regex = "gemm|flash_(fwd|bwd)";
  config.ncu.kernel_name_base = NcuKernelNameBase::mangled;
  config.ncu.launch_skip = 10;
  config.ncu.launches_per_kernel = 3;
  config.ncu.max_launches = 30;
  config.ncu.plan = NcuPlanMode::bounded;
  config.ncu.launches_per_config = 2;
  config.ncu.plan_max_launch_count = 4;
  config.ncu.seconds_per_launch = 1.5;
  config.ncu.max_seconds = 45;
  config.ncu.start_up_overhead_s = 3;
  config.ncu.seconds_per_pass = 12;
  config.ncu.seconds_per_intercepted_launch = 0.001;
  config.ncu.end_workload_when_planned = false;
  config.ncu.workload_end_grace_s = 2.5;
  config.ncu.pass_timeout_s = 42.5;
  config.ncu.retry_without_filter = false;
  config.ncu.replay_mode = NcuReplayMode::application;
  config.ncu.clock_control = NcuClockControl::none;
  config.ncu.cache_control = NcuCacheControl::none;
  config.ncu.target_all_processes = false;
  config.ncu.print_units_base = false;
  config.ncu.timeout_s = 1e-3;
  config.ncu.postprocess_timeout_s = 77;
  config.ncu.extra_args = {"--nvtx-exclude", "x"};
  config.nsys.gpu_metrics = GpuMetricsSetting::at_hz(100000);
  config.nsys.gpu_metrics_set = "gh100-ct";
  REQUIRE(validate_config(config).has_value());

  // Every key differs from the default, so a key that config_to_toml forgot would show up below.
  const DeepProfileConfig defaults;
  for (const auto& field : detail::config_fields()) {
    INFO("key " << field.info.key);
    CHECK(detail::render_field_value(field, config) != detail::render_field_value(field, defaults));
  }

  TempDir dir;
  const std::string text = config_to_toml(config);
  write_file(dir / "resolved.toml", text);
  auto reloaded = load_config(ConfigSources{{dir / "resolved.toml"}, {}});
  if (!reloaded) FAIL(reloaded.error().describe() + "\n" + text);
  CHECK(*reloaded == config);

  // The defaults round-trip too, with the unset device_index left as a comment.
  const std::string default_text = config_to_toml(defaults);
  CHECK_THAT(default_text, Catch::Contains("# device_index is unset"));
  write_file(dir / "defaults.toml", default_text);
  auto reloaded_defaults = load_config(ConfigSources{{dir / "defaults.toml"}, {}});
  REQUIRE(reloaded_defaults.has_value());
  CHECK(*reloaded_defaults == defaults);
}

TEST_CASE("the schema lists each key once, with a type and description") {
  const auto& schema = config_schema();
  REQUIRE(schema.size() == detail::config_fields().size());
  std::set<std::string> keys;
  const std::set<std::string> types = {"string", "path", "integer", "float", "boolean", "string array", "table"};
  for (const auto& info : schema) {
    INFO(info.key);
    CHECK(keys.insert(info.key).second);
    CHECK(types.count(info.type) == 1);
    CHECK_FALSE(info.description.empty());
  }
  const auto* gate = detail::find_config_field("nsys.capture_range");
  REQUIRE(gate != nullptr);
  CHECK(gate->info.allowed_values == std::vector<std::string>{"none", "nvtx", "cudaProfilerApi"});
  CHECK(gate->info.type == "string");
  CHECK(detail::find_config_field("run.top_n_kernels")->info.constraint == ">= 1");
  CHECK(detail::find_config_field("nsys.timeout_s")->info.constraint == "> 0");
  CHECK(detail::find_config_field("workload.env")->info.type == "table");
  CHECK(detail::find_config_field("run.quiet") == nullptr);  // a command-line choice, not config
}

TEST_CASE("preset lookup errors list what is available") {
  auto typo = find_preset("quik", {config_dir()});
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().code == ErrorCode::not_found);
  CHECK_THAT(typo.error().message, Catch::Contains("no preset 'quik'"));
  CHECK_THAT(typo.error().message, Catch::Contains(config_dir().string()));
  CHECK_THAT(typo.error().hint, Catch::Contains("did you mean quick?"));
  CHECK_THAT(typo.error().hint, Catch::Contains("available presets: deep-profile, quick, sampled, serving, thorough"));

  CHECK(find_preset("quick.toml", {config_dir()}).has_value());
  CHECK(find_preset("../config/quick", {config_dir()}).error().code == ErrorCode::invalid_argument);
  CHECK(find_preset("quick", {}).error().code == ErrorCode::not_found);

  // Earlier directories win.
  TempDir dir;
  write_file(dir / "quick.toml", "[run]\ntop_n_kernels = 2\n");
  CHECK(*find_preset("quick", {dir.path(), config_dir()}) == dir / "quick.toml");

  // Without deep-profile.toml there is no configuration at all: an error, not built-in values.
  auto no_defaults = resolve_config_sources(ConfigSelection{}, {dir.path()});
  REQUIRE_FALSE(no_defaults.has_value());
  CHECK_THAT(no_defaults.error().message, Catch::Contains("deep-profile.toml was not found"));
  CHECK_THAT(no_defaults.error().hint, Catch::Contains("available presets: quick"));
}

TEST_CASE("a TOML syntax error names file:line:column, a missing file is not_found") {
  TempDir dir;
  write_file(dir / "broken.toml", "[run]\ntop_n_kernels = = 3\n");
  auto error = load_error({}, {dir / "broken.toml"});
  CHECK(error.code == ErrorCode::parse_error);
  CHECK(std::regex_search(error.message, std::regex(std::regex_replace((dir / "broken.toml").string(),
                                                                       std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                                                    R"(:2:\d+: )")));
  auto missing = load_error({}, {dir / "absent.toml"});
  CHECK(missing.code == ErrorCode::not_found);
  CHECK(missing.subject == (dir / "absent.toml").string());
}

TEST_CASE("a file starting with an unusual code point is refused before toml++ sees it (fuzz input)") {
  // Starts with U+FDFF; fuzz_config (UBSan) saw toml++ 3.3 reach TOML_UNREACHABLE on it.
  const auto config =
      llmprof::load_config({{llmprof::testing::data_path("fuzz-regressions/config_toml_unreachable.toml")}, {}});
  REQUIRE_FALSE(config.has_value());
  CHECK(config.error().code == llmprof::ErrorCode::parse_error);
  CHECK_THAT(config.error().message, Catch::Contains("config_toml_unreachable.toml: byte 1 is a non-ASCII character"));
}

TEST_CASE("bytes toml++ cannot safely parse are refused; non-ASCII text in strings and comments is fine") {
  llmprof::testing::TempDir dir;
  const auto refused = [&](const std::string& name, const std::string& text, const std::string& why) {
    llmprof::testing::write_file(dir / name, text);
    const auto config = llmprof::load_config({{dir / name}, {}});
    REQUIRE_FALSE(config.has_value());
    CHECK_THAT(config.error().message, Catch::Contains(why));
  };
  refused("invalid.toml", "[run]\nstage = \"\xC3\x28\"\n", "byte 16 is not valid UTF-8");
  refused("overlong.toml", "[run]\nstage = \"\xC0\xAF\"\n", "byte 16 is not valid UTF-8");
  refused("noncharacter.toml", "[run]\nstage = \"\xEF\xB7\x90\"\n",
          "byte 16 is a control character or a Unicode noncharacter");
  refused("control.toml", "[run]\nstage = \"\x01\"\n", "byte 16 is a control character");
  refused("bare.toml", "[run]\nr\xC3\xA9 = 1\n", "byte 8 is a non-ASCII character outside a quoted string or comment");

  llmprof::testing::write_file(dir / "fine.toml",
                               "# r\xC3\xA9sum\xC3\xA9\n[run]\nruns_root = \"r\xC3\xA9sultats\" # \xE2\x86\x90 ok\n"
                               "run_id = 'caf\xC3\xA9'\n[workload]\nargv = [\"\"\"a \\\" \xC3\xA9\"\"\"]\n");
  const auto fine = llmprof::load_config({{dir / "fine.toml"}, {}});
  INFO((fine ? std::string() : fine.error().describe()));
  REQUIRE(fine.has_value());
  CHECK(fine->run.runs_root == "r\xC3\xA9sultats");
  CHECK(fine->workload.argv == std::vector<std::string>{"a \" \xC3\xA9"});

  // On the command line a non-ASCII value is the bare string typed.
  const auto override = llmprof::load_config({{}, {"run.runs_root=r\xC3\xA9sultats"}});
  REQUIRE(override.has_value());
  CHECK(override->run.runs_root == "r\xC3\xA9sultats");
}

TEST_CASE("capture windows: nsys's spelling repeat:N sets the count, and config.toml keeps it") {
  auto config = load_with({"nsys.capture_range=cudaProfilerApi", "nsys.capture_range_end=repeat:2"});
  REQUIRE(config.has_value());
  CHECK(config->nsys.capture_range_end == NsysCaptureRangeEnd::repeat);
  CHECK(config->nsys.capture_windows == 2);
  const std::string written = config_to_toml(*config);
  CHECK_THAT(written, Catch::Contains("capture_windows = 2"));
  CHECK_THAT(written, Catch::Contains("capture_range_end = \"repeat\""));
}

TEST_CASE("the serving preset: the workload's window, forked workers traced, graph nodes, the busiest step kind") {
  ConfigSources sources;
  sources.files = {default_file(), default_file().parent_path() / "serving.toml"};
  auto config = load_config(sources);
  REQUIRE(config.has_value());
  CHECK(config->nsys.capture_range == NsysCaptureRange::cuda_profiler_api);
  CHECK(config->nsys.extra_args ==
        std::vector<std::string>{"--trace-fork-before-exec=true", "--cuda-graph-trace=node"});
  CHECK(config->run.stage == "auto");  // the busiest step kind in the window, whatever its name (issue 34)
  CHECK(config->ncu.nvtx_include == std::vector<std::string>{"decode_batch/"});
  // The serving example's ncu figure (0.9 s a launch under --set roofline on the H200) scaled to the default
  // llmprof set by the ratio a superset of its metrics showed on the H100 (0.25 / 0.6), not the 1b example's.
  CHECK(config->ncu.set == "llmprof");
  CHECK(config->ncu.seconds_per_launch == 0.36);
  CHECK(config->ncu.start_up_overhead_s == 3.0);
}

TEST_CASE("the sampled preset: no ncu, the GPU's counters at 20 kHz, NVTX without CUDA trace") {
  ConfigSources sources;
  sources.files = {default_file(), default_file().parent_path() / "sampled.toml"};
  auto config = load_config(sources);
  REQUIRE(config.has_value());
  CHECK_FALSE(config->run.enable_ncu);
  CHECK(config->nsys.gpu_metrics == GpuMetricsSetting::at_hz(20000));
  // With CUDA traced this preset's nsys stage took 13.6 s on the H200, without 6.7 s; the counters need only the
  // ranges (issue 36).
  CHECK(config->nsys.trace == std::vector<std::string>{"nvtx"});
  CHECK(config->nsys.capture_range == NsysCaptureRange::nvtx);
}
