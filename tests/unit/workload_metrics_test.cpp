// load_workload_metrics: the llmprof.workload_metrics/1 contract, strictly (team.md contract 2).
#include <catch2/catch.hpp>

#include <string>

#include "llmprof/workload_metrics.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {
std::string fixture_text() { return read_file(data_path("analysis/workload_metrics_decode.json")); }

// The fixture with the first occurrence of `from` replaced by `to` (a key removed or retyped).
std::string fixture_with(const std::string& from, const std::string& to) {
  std::string text = fixture_text();
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}
}  // namespace

TEST_CASE("reads every field of a valid metrics file") {
  auto metrics = load_workload_metrics(data_path("analysis/workload_metrics_decode.json"));
  REQUIRE(metrics.has_value());
  CHECK(metrics->model == "llama-style");
  CHECK(metrics->device == "cuda:0");
  CHECK(metrics->device_name == "NVIDIA H100 80GB HBM3");
  CHECK(metrics->dtype == "fp16");
  CHECK(metrics->batch == 4);
  CHECK(metrics->prompt_tokens == 256);
  CHECK(metrics->new_tokens == 8);
  CHECK(metrics->layers == 4);
  CHECK(metrics->hidden == 1024);
  CHECK(metrics->heads == 16);
  CHECK(metrics->kv_heads == 16);
  CHECK(metrics->intermediate == 4096);
  CHECK(metrics->vocab == 32000);
  CHECK(metrics->parameters == 83116032);
  CHECK(metrics->prefill_s == Approx(1.280269408));
  CHECK(metrics->decode_s == Approx(0.177371307));
  CHECK(metrics->generated_tokens == 32);
  CHECK(metrics->flop_per_token == 166232064.0);
  CHECK(metrics->decode_flop == 5319426048.0);
  CHECK(metrics->nvtx_domain.empty());
  CHECK(metrics->nvtx_ranges == std::vector<std::string>{"prefill", "decode"});
  // 166232064 FLOP/token * 32 tokens / 0.177371307 s, by hand: 2.99903e10 FLOP/s.
  CHECK(metrics->decode_model_flop_per_s() == Approx(2.99903e10).epsilon(1e-5));
  // 170221633536 / 1.280269408 = 1.32958e11 FLOP/s.
  CHECK(metrics->prefill_model_flop_per_s() == Approx(1.32958e11).epsilon(1e-5));
}

TEST_CASE("integers written as 4.0 by a Python float are accepted") {
  auto metrics = parse_workload_metrics(fixture_with("\"batch\": 4,", "\"batch\": 4.0,"), "m.json");
  REQUIRE(metrics.has_value());
  CHECK(metrics->batch == 4);
}

TEST_CASE("a missing key is named in the error") {
  auto metrics = parse_workload_metrics(fixture_with("\"decode_s\": 0.177371307,", ""), "stage1/metrics.json");
  REQUIRE_FALSE(metrics.has_value());
  CHECK(metrics.error().code == ErrorCode::parse_error);
  CHECK(metrics.error().message == "stage1/metrics.json: key \"decode_s\" is missing");
  CHECK(metrics.error().subject == "decode_s");
}

TEST_CASE("a value of the wrong type is named with what was found") {
  SECTION("integer field holding a fraction") {
    auto metrics = parse_workload_metrics(fixture_with("\"batch\": 4,", "\"batch\": 2.5,"), "m.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == "m.json: key \"batch\" must be an integer, not the number 2.5E0");
  }
  SECTION("number field holding a string") {
    auto metrics =
        parse_workload_metrics(fixture_with("\"decode_s\": 0.177371307,", "\"decode_s\": \"0.17\","), "m.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == "m.json: key \"decode_s\" must be a number, not the string \"0.17\"");
  }
  SECTION("string list holding a number") {
    auto metrics = parse_workload_metrics(fixture_with("[\"prefill\", \"decode\"]", "[\"prefill\", 3]"), "m.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == "m.json: key \"nvtx_ranges\" must hold only strings, found the integer 3");
  }
  SECTION("negative count") {
    auto metrics = parse_workload_metrics(fixture_with("\"layers\": 4,", "\"layers\": -4,"), "m.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == "m.json: key \"layers\" must not be negative (got -4)");
  }
  SECTION("unknown dtype") {
    auto metrics = parse_workload_metrics(fixture_with("\"dtype\": \"fp16\"", "\"dtype\": \"int4\""), "m.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().subject == "dtype");
  }
}

TEST_CASE("a wrong or missing schema is refused") {
  auto wrong =
      parse_workload_metrics(fixture_with("llmprof.workload_metrics/1", "llmprof.workload_metrics/2"), "m.json");
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message ==
        "m.json: expected schema \"llmprof.workload_metrics/1\", found the string \"llmprof.workload_metrics/2\"");
  auto missing = parse_workload_metrics("{\"model\": \"x\"}", "m.json");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "m.json: expected schema \"llmprof.workload_metrics/1\", found no \"schema\" key");
}

TEST_CASE("bad files give errors naming the file") {
  TempDir dir;
  SECTION("absent") {
    auto metrics = load_workload_metrics(dir / "metrics.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().code == ErrorCode::not_found);
    CHECK(metrics.error().message.find((dir / "metrics.json").string()) != std::string::npos);
  }
  SECTION("empty") {
    write_file(dir / "metrics.json", "");
    auto metrics = load_workload_metrics(dir / "metrics.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == (dir / "metrics.json").string() + ": the workload metrics file is empty");
  }
  SECTION("truncated") {
    const std::string text = fixture_text();
    write_file(dir / "metrics.json", text.substr(0, text.size() / 2));
    auto metrics = load_workload_metrics(dir / "metrics.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message.rfind((dir / "metrics.json").string() + ": not valid JSON", 0) == 0);
  }
  SECTION("random bytes") {
    write_file(dir / "metrics.json", std::string("\x89PNG\r\n\x1a\n\0\0\xff\xfe", 12));
    auto metrics = load_workload_metrics(dir / "metrics.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().code == ErrorCode::parse_error);
    CHECK(metrics.error().message.find((dir / "metrics.json").string()) == 0);
  }
  SECTION("a JSON array") {
    write_file(dir / "metrics.json", "[1, 2]");
    auto metrics = load_workload_metrics(dir / "metrics.json");
    REQUIRE_FALSE(metrics.has_value());
    CHECK(metrics.error().message == (dir / "metrics.json").string() + ": expected a JSON object, found an array");
  }
}
