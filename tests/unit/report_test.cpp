// Reports from fixture run directories (tests/data/runs, written by tests/tools/make_run_fixtures.py).
#include <catch2/catch.hpp>
#include <regex>

#include "deep_profile_cli.hpp"
#include "llmprof/report.hpp"
#include "report/svg_chart.hpp"
#include "report_golden.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

RunReportModel load_fixture(const std::string& name) {
  auto model = load_run_report(data_path("runs/" + name));
  if (!model) FAIL(model.error().describe());
  return *model;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A copy of a fixture run in a temp dir, so a test can break one file.
void copy_run(const std::string& name, const std::filesystem::path& target) {
  std::filesystem::copy(data_path("runs/" + name), target, std::filesystem::copy_options::recursive);
}

}  // namespace

TEST_CASE("the model reads report.json, run.json, env.json and config.toml of a run") {
  const auto model = load_fixture("h100-decode-b4");
  CHECK(model.run_id == "20261122T153122Z-a1b2c3");
  CHECK(model.created_utc == "2026-11-22T15:31:22Z");
  CHECK(model.run_status == "ok");
  CHECK(model.device.name == "NVIDIA H100 80GB HBM3");
  REQUIRE(model.device.peak_flop_per_s.size() == 3);
  CHECK(model.device.peak_flop_per_s[0].first == "fp16");
  CHECK(model.device.peak_flop_per_s[0].second == Approx(132 * 4096 * 1.584e9));
  REQUIRE(model.stages.size() == 3);
  const auto& decode = model.stages[2];
  CHECK(decode.name == "decode");
  CHECK(decode.parent == std::optional<std::string>("generate"));
  CHECK(decode.wall_ns == 177371307);            // ns1_st_nvtx_sum.csv
  CHECK(decode.gpu_projection_ns == 156817883);  // ns1_st_nvtx_gpu_proj_sum.csv
  CHECK(decode.kernel_time_ns == 1435206);       // sum of the :decode rows of ns1_st_nvtx_kern_sum.csv
  CHECK(decode.kernel_instances == 345);
  CHECK(*decode.gpu_busy_fraction == Approx(1435206.0 / 177371307).epsilon(1e-4));  // over max(wall, projection)
  CHECK(decode.mfu_workload.has_value());                                           // extra field, read when present
  CHECK_FALSE(model.stages[1].mfu.has_value());                                     // null: not computed
  REQUIRE(model.kernels.size() == 16);
  CHECK(model.kernels[0].name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(model.kernels[0].total_time_ns == 322025);
  CHECK(model.kernels[0].instances == 64);
  CHECK_FALSE(model.kernels[3].pct_peak_compute.has_value());  // the copy kernel was not profiled
  REQUIRE(model.environment.tool_versions.size() == 2);
  CHECK(model.environment.tool_versions[1] == std::pair<std::string, std::string>("ncu", "2025.3.1.0"));
  REQUIRE(model.environment.gpus.size() == 1);
  CHECK(model.environment.gpus[0].driver == "580.159.04");
  CHECK(model.workload_argv.at(0) == "./build/release/examples/decode-workload/llmprof-decode");
  // Commands: stage1 and nsys from run.json, ncu from its cmd.txt (run.json has only cmd_file).
  REQUIRE(model.reproduce.size() == 3);
  CHECK(model.reproduce[2].stage == "ncu");
  CHECK(model.reproduce[2].source == "ncu/cmd.txt");
  CHECK(model.reproduce[2].command.rfind("/usr/local/cuda/bin/ncu --set roofline", 0) == 0);
  CHECK(std::find(model.config.begin(), model.config.end(),
                  std::pair<std::string, std::string>("ncu.set", "'roofline'")) != model.config.end());
  CHECK(model.stage_problems.empty());
  CHECK(model.notes.empty());
}

TEST_CASE("Markdown report of a complete run matches its golden file", "[golden]") {
  const auto markdown = render_markdown(load_fixture("h100-decode-b4"));
  llmprof::testing::check_golden("h100-decode-b4.report.md", markdown);
  // Independent of the golden: the facts a reader needs are there.
  CHECK(markdown.find("| decode (in generate) | 177 ms | 157 ms | 1.44 ms | 0.81% (stats) | 345 |") !=
        std::string::npos);
  CHECK(markdown.find("host-bound: GPU busy 0.81% of the stage") != std::string::npos);
  CHECK(markdown.find("| 1 | `nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT` | 17% | 322 µs | 64 |") !=
        std::string::npos);
  CHECK(markdown.find("nsys 2025.3.1.0 · ncu 2025.3.1.0") != std::string::npos);
  CHECK(markdown.find("```sh\n/usr/local/cuda/bin/ncu --set roofline") != std::string::npos);
}

TEST_CASE("Markdown report of an nsys-only run says what was skipped and shows nulls as not computed") {
  const auto markdown = render_markdown(load_fixture("h100-nsys-only"));
  llmprof::testing::check_golden("h100-nsys-only.report.md", markdown);
  CHECK(markdown.find("| ncu | skipped | run.enable_ncu = false in the configuration |") != std::string::npos);
  CHECK(markdown.find("ncu/raw.csv is absent") != std::string::npos);
  CHECK(markdown.find("not computed (no ncu data)") != std::string::npos);
}

TEST_CASE("HTML report is self-contained, escaped and has its charts") {
  auto model = load_fixture("h100-decode-b4");
  model.warnings.push_back("kernel <script>alert(1)</script> & friends");
  const auto html = render_html(model);
  // Self-contained: the only URL is the SVG namespace; no external scripts, styles or fonts.
  std::string without_namespace = html;
  for (auto at = without_namespace.find("http://www.w3.org/2000/svg"); at != std::string::npos;
       at = without_namespace.find("http://www.w3.org/2000/svg")) {
    without_namespace.erase(at, 26);
  }
  CHECK(without_namespace.find("http") == std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(count(html, "<script>") == 1);
  // Escaping: kernel names with templates and the injected warning never appear raw.
  CHECK(html.find("<script>alert(1)") == std::string::npos);
  CHECK(html.find("kernel &lt;script&gt;alert(1)&lt;/script&gt; &amp; friends") != std::string::npos);
  CHECK(html.find("vectorized_layer_norm_kernel<c10::Half") == std::string::npos);
  CHECK(html.find("vectorized_layer_norm_kernel&lt;c10::Half, float, (bool)0&gt;") != std::string::npos);
  // Charts: two rooflines (fp16 and fp32 kernels), the time bars and the timeline.
  CHECK(count(html, "class=\"chart roofline\"") == 2);
  CHECK(count(html, "class=\"chart stacked-bars\"") == 1);
  CHECK(count(html, "class=\"chart timeline\"") == 1);
  CHECK(count(html, "class=\"kernel-point\"") == 9);  // profiled kernels with FLOP > 0
  CHECK(count(html, "class=\"roof-dram\"") == 2);
  CHECK(count(html, "class=\"roof-compute\"") == 6);  // 3 precisions x 2 charts
  CHECK(count(html, "class=\"timeline-row\"") == 3);
  CHECK(html.find(">Roofline: fp16 (5 kernels)</text>") != std::string::npos);
  CHECK(html.find(">1T</text>") != std::string::npos);  // decade tick labels
  CHECK(html.find(">100</text>") != std::string::npos);
  CHECK(html.find("7 kernels are not plotted") != std::string::npos);
  CHECK(count(html, "<table class=\"sortable\"") == 2);
}

TEST_CASE("HTML report without ncu data explains the missing roofline") {
  const auto html = render_html(load_fixture("h100-nsys-only"));
  CHECK(html.find("class=\"chart roofline\"") == std::string::npos);
  CHECK(html.find("no roofline") != std::string::npos);
  CHECK(html.find("class=\"chart timeline\"") != std::string::npos);
}

TEST_CASE("write_reports writes report.md and report.html into the run directory") {
  TempDir temp;
  const auto main = temp / "run";
  copy_run("h100-decode-b4", main);
  REQUIRE(write_reports(main));
  CHECK(read_file(main / "report.md") == render_markdown(load_fixture("h100-decode-b4")));
  CHECK(read_file(main / "report.html").rfind("<!DOCTYPE html>", 0) == 0);
}

TEST_CASE("a run directory without analysis/report.json is a not_found error with the fix") {
  TempDir temp;
  const auto result = load_run_report(temp.path());
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::not_found);
  CHECK(result.error().hint.find("deep-profile analyze") != std::string::npos);
}

TEST_CASE("bad report inputs are parse errors naming the file and field") {
  TempDir temp;
  const auto main = temp / "run";
  copy_run("h100-decode-b4", main);
  SECTION("a known field with the wrong type") {
    std::string text = read_file(main / "analysis/report.json");
    text.replace(text.find("\"wall_ns\": 177371307"), 20, "\"wall_ns\": \"slow\"");
    write_file(main / "analysis/report.json", text);
    const auto result = load_run_report(main);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::parse_error);
    CHECK(result.error().message.find("stages[2].wall_ns") != std::string::npos);
    CHECK(result.error().message.find("report.json") != std::string::npos);
  }
  SECTION("another schema") {
    write_file(main / "analysis/report.json", "{\"schema\": \"something/2\"}");
    const auto result = load_run_report(main);
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("'schema'") != std::string::npos);
  }
  SECTION("truncated JSON") {
    write_file(main / "analysis/report.json", read_file(main / "analysis/report.json").substr(0, 200));
    const auto result = load_run_report(main);
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("is not valid JSON") != std::string::npos);
  }
  SECTION("unknown fields are ignored and absent optional files become notes") {
    std::string text = read_file(main / "analysis/report.json");
    text.replace(text.find("\"warnings\""), 10, "\"future_field\": {\"x\": [1, 2]}, \"warnings\"");
    write_file(main / "analysis/report.json", text);
    std::filesystem::remove(main / "env.json");
    std::filesystem::remove(main / "config.toml");
    const auto result = load_run_report(main);
    REQUIRE(result);
    CHECK(result->notes.size() == 2);
    CHECK(render_markdown(*result).find("env.json is absent") != std::string::npos);
  }
}

TEST_CASE("short kernel names drop return type, templates and parameters, and cut in the middle") {
  CHECK(short_kernel_name(
            "void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::Half, float, (bool)0>(int, T2)") ==
        "vectorized_layer_norm_kernel");
  CHECK(
      short_kernel_name("void at::native::vectorized_elementwise_kernel<(int)8, at::native::float16_copy_kernel_cuda("
                        "at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>"
                        "(int, T2, T3)") == "vectorized_elementwise_kernel");
  CHECK(short_kernel_name("(anonymous namespace)::softmax_warp_forward<float, 4>(float*)") == "softmax_warp_forward");
  const auto cut = short_kernel_name("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT", 26);
  CHECK(cut == "nvjet_sm90_h…_relubias_TNT");
  CHECK(short_kernel_name("plain_kernel") == "plain_kernel");
}

TEST_CASE("decade ticks cover the range with powers of ten") {
  const auto ticks = detail::decade_ticks(0.3, 2500);
  REQUIRE(ticks.size() == 4);
  CHECK(ticks.front() == Approx(1));
  CHECK(ticks.back() == Approx(1000));
  CHECK(detail::decade_ticks(5, 4).empty());
}

#ifdef LLMPROF_DEEP_PROFILE_EXE
TEST_CASE("deep-profile report renders a copied run directory and fails clearly without report.json", "[cli]") {
  TempDir temp;
  const auto main = temp / "run";
  copy_run("h100-decode-b4", main);
  using llmprof::testing::run_deep_profile;
  CHECK(run_deep_profile({"report", main.string(), "--format", "md"}).exit_code == 0);
  CHECK(std::filesystem::exists(main / "report.md"));
  CHECK_FALSE(std::filesystem::exists(main / "report.html"));
  CHECK(run_deep_profile({"report", temp.path().string()}).exit_code == 4);
  CHECK(run_deep_profile({"report", main.string(), "--format", "pdf"}).exit_code == 2);
}
#endif
