// Steps inferred without step ranges (llmprof/sync_steps.hpp, analysis/step_sequence.hpp): on sequences built here
// for the rule's corners, and on the zoo's recorded exports (tests/data/zoo/README.md: workloads written without the
// profiler in mind, recorded on the H100) against tests/tools/zoo_steps_expected.py, which cuts each capture at the
// workload's own per-step copies, labels the steps by the workload's facts and sums their GPU work.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/step_sequence.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/sync_steps.hpp"
#include "llmprof/timeline.hpp"
#include "oracle.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;

namespace {

// A sequence from letters: lower case a kernel (x, y, z: elementwise; g, h: GEMMs), G a graph launch, S a
// synchronisation (a device-to-host copy); equal letters, equal launches.
std::vector<detail::SequenceCall> sequence(const std::string& letters) {
  std::vector<detail::SequenceCall> calls;
  for (const char letter : letters) {
    detail::SequenceCall call;
    call.token = letter;
    call.synchronizes = letter == 'S';
    call.graph = letter == 'G';
    call.computes = letter != 'S';
    call.marks_pass = letter == 'g' || letter == 'h' || letter == 'G';
    calls.push_back(call);
  }
  return calls;
}

std::string repeat(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

StepKindReport inferred(const std::string& name) {
  auto found = infer_sync_steps(data_path("zoo/" + name + ".sqlite"));
  REQUIRE(found.has_value());
  REQUIRE(found->has_value());
  return **found;
}

std::map<std::string, const StepKindFigures*> by_name(const StepKindReport& report) {
  std::map<std::string, const StepKindFigures*> kinds;
  for (const auto& kind : report.kinds) kinds[kind.name] = &kind;
  return kinds;
}

double figure(const std::string& line, const std::string& key) { return oracle_figure("zoo_steps", line, key); }

}  // namespace

TEST_CASE("inferred steps: a step that waits twice is one step, its sequence repeating every two waits") {
  // A lead-in that prepares (x S), a prefill (h-shaped), then decode passes that each wait twice: after the forward
  // (g g h z S) and after a short check (y S), as Hugging Face generate() does.
  const auto found = detail::find_sequence_steps(sequence("xS" "gggghzS" "yS" + repeat("gghzS" "yS", 6)));
  CHECK(found.disagreement.empty());
  CHECK(found.unit_segments == 2);
  CHECK(found.repeats == 6);
  REQUIRE(found.steps.size() == 7);  // the lead-in with the prefill, and six decode steps
  CHECK_FALSE(found.steps.front().repeats);
  CHECK(found.steps.front().first == 0);
  REQUIRE(found.once_per_step.has_value());
  CHECK(*found.once_per_step == 'h');  // the last GEMM once per repeat: the LM head
  for (const auto& step : found.steps) CHECK(step.marks == 1);
}

TEST_CASE("inferred steps: graph replays with an eager step between them, and the calls after the last wait") {
  // Decode steps replay a graph (G z S); every fourth is mixed (G, an eager forward, S); calls after the last
  // synchronisation belong to no step.
  const auto found = detail::find_sequence_steps(sequence(repeat("GzS" "GzS" "GzS" "GgggzS", 3) + "Gz"));
  CHECK(found.disagreement.empty());
  CHECK(found.unit_segments == 1);
  REQUIRE(found.steps.size() == 12);
  CHECK(found.repeats == 9);
  CHECK(*found.once_per_step == 'G');
  CHECK(found.steps.back().last == 3 * 15 - 1);
}

TEST_CASE("inferred steps: the launch sequence and the synchronisation disagree, and say why") {
  SECTION("each wait closes two forward passes: no GEMM occurs once between waits") {
    const auto found = detail::find_sequence_steps(sequence(repeat("gghz" "gghzS", 5)));
    CHECK_THAT(found.disagreement, Catch::Contains("each synchronisation closes several forward passes"));
  }
  SECTION("nothing repeats between the waits") {
    const auto found = detail::find_sequence_steps(sequence("gS" "hhzS" "gxyyS" "zzzzghS" "xgS"));
    CHECK_THAT(found.disagreement, Catch::StartsWith("no launch sequence"));
    CHECK(found.steps.size() == 5);  // one per wait, unconfirmed
  }
  SECTION("a lead-in of several passes without a wait of its own is left out, not a step") {
    const auto found = detail::find_sequence_steps(sequence("xgghgghgghS" + repeat("gghzS", 4)));
    CHECK(found.disagreement.empty());
    CHECK(found.lead_in_marks_left_out == 3);
    CHECK(found.steps.size() == 4);
  }
}

// An engine (tests/zoo/engine.py) copies each step's tokens to the host once; its facts list each step's kind. The
// replayed graphs' kernels (traced per node) and executions (traced whole) belong to the step that launched them.
TEST_CASE("inferred steps: the zoo's engines, eager and replaying graphs, against their own per-step copies") {
  for (const std::string name : {"engine_eager_spawn_none", "engine_graph_fork_none", "engine_graph_fork_none_graphtrace"}) {
    INFO(name);
    const std::string line = name + ":";
    const StepKindReport steps = inferred(name);
    CHECK(double(steps.steps) == figure(line, "steps"));
    CHECK_FALSE(steps.figures_withheld);
    CHECK_THAT(steps.inference_check, Catch::StartsWith("the launch sequence and the synchronisation agree") &&
                                          Catch::Contains("closed by one synchronisation"));
    const auto kinds = by_name(steps);
    REQUIRE(kinds.size() == 2);
    REQUIRE(kinds.count("uniform-1"));
    REQUIRE(kinds.count("varying"));
    CHECK(double(kinds.at("uniform-1")->count) == figure(line, "decode_steps"));
    CHECK(double(kinds.at("varying")->count) == figure(line, "mixed_steps"));
    // Decode steps' GPU time within 5% of the independent count (the same work: equal here).
    CHECK(double(kinds.at("uniform-1")->gpu_time_ns) == Approx(figure(line, "decode_gpu_time_ns")).epsilon(0.05));
    CHECK(double(kinds.at("uniform-1")->gpu_time_ns) == figure(line, "decode_gpu_time_ns"));
    CHECK(double(kinds.at("varying")->gpu_time_ns) == figure(line, "mixed_gpu_time_ns"));
  }
  // The graph is each step's once-per-step launch: per node, its kernels; traced whole, its graph id.
  CHECK_THAT(inferred("engine_graph_fork_none").inference_check, Catch::Contains("launching `graph of 74 kernels"));
  CHECK_THAT(inferred("engine_graph_fork_none_graphtrace").inference_check, Catch::Contains("launching `graph 1`"));
}

// Hugging Face generate() (tests/zoo/hf_generate.py, transformers 5.x): 34 device-to-host copies for 16 forward
// passes with the dynamic cache, 20 with the static one (whose decode replays a compiled graph).
TEST_CASE("inferred steps: Hugging Face generate(), dynamic and static cache: 1 prefill + N-1 decode steps") {
  const std::map<std::string, std::string> waits = {{"hf_dynamic_window", "closed by 2 synchronisations"},
                                                    {"hf_static_window", "closed by one synchronisation"},
                                                    {"hf_dynamic_whole", "closed by 2 synchronisations"}};
  for (const auto& [name, closed] : waits) {
    INFO(name);
    const std::string line = name + ":";
    const StepKindReport steps = inferred(name);
    CHECK(double(steps.steps) == figure(line, "steps"));
    CHECK_FALSE(steps.figures_withheld);
    CHECK_THAT(steps.inference_check, Catch::StartsWith("the launch sequence and the synchronisation agree") &&
                                          Catch::Contains(closed));
    const auto kinds = by_name(steps);
    REQUIRE(kinds.count("uniform-1"));
    REQUIRE(kinds.count("varying"));
    CHECK(double(kinds.at("uniform-1")->count) == figure(line, "decode_steps"));
    CHECK(double(kinds.at("varying")->count) == figure(line, "prefill_steps"));
    // The steps hold all the GPU work the thread launched up to its last wait.
    CHECK(double(kinds.at("uniform-1")->gpu_time_ns + kinds.at("varying")->gpu_time_ns) == figure(line, "gpu_time_ns"));
  }
}

// many_steps.py without step ranges: one `decode` range around its decode steps, each copying its token to the host;
// the whole run captured (weights' initialisation, a warm-up without waits, a prefill). The ranges are not read.
TEST_CASE("inferred steps: a whole-run capture of a decode loop, eager and replaying graphs") {
  for (const std::string name : {"many_steps_eager_noranges", "many_steps_graph_noranges"}) {
    INFO(name);
    const std::string line = name + ":";
    const StepKindReport steps = inferred(name);
    CHECK_FALSE(steps.figures_withheld);
    const auto kinds = by_name(steps);
    REQUIRE(kinds.count("uniform-1"));
    CHECK(double(kinds.at("uniform-1")->count) == figure(line, "decode_steps"));
    CHECK(double(kinds.at("uniform-1")->gpu_time_ns) == figure(line, "decode_gpu_time_ns"));
  }
  // Inside the `decode` range's CPU span only: a range holding N inferred steps, each one repeat.
  for (const std::string name : {"many_steps_eager_noranges", "many_steps_graph_noranges"}) {
    INFO(name);
    const std::string line = name + ":";
    auto timeline = analyze_timeline(data_path("zoo/" + name + ".sqlite"));
    REQUIRE(timeline.has_value());
    const TimelineStage* decode = timeline->find_stage("decode");
    REQUIRE(decode != nullptr);
    REQUIRE(decode->instances.size() == 1);
    auto found = infer_sync_steps(data_path("zoo/" + name + ".sqlite"), {},
                                  std::pair{decode->instances.front().cpu_start_ns, decode->instances.front().cpu_end_ns});
    REQUIRE(found.has_value());
    REQUIRE(found->has_value());
    const StepKindReport& steps = **found;
    CHECK(double(steps.steps) == figure(line, "decode_steps"));
    REQUIRE(steps.kinds.size() == 1);
    CHECK(double(steps.kinds.front().gpu_time_ns) == figure(line, "decode_gpu_time_ns"));
    CHECK_THAT(steps.inference_check, Catch::Contains(std::to_string(steps.steps) + " of the " +
                                                      std::to_string(steps.steps) + " steps repeat one sequence"));
  }
  // The eager run's warm-up passes wait nowhere: they are left out with the lead-in, said so.
  CHECK_THAT(inferred("many_steps_eager_noranges").inference_check,
             Catch::Contains("the calls before the first repeat, 2 launches of it without a synchronisation of their "
                             "own, are left out"));
}

// The eager engine with every second step's copy and wait removed, as if its steps did not wait one by one: the
// repeating sequence holds every GEMM twice, the two methods disagree, and no per-step figure is given.
TEST_CASE("inferred steps: when the waits close two passes each, the report says so and withholds per-step figures") {
  llmprof::testing::TempDir temp;
  const auto copy = temp.path() / "every_second_wait.sqlite";
  std::filesystem::copy_file(data_path("zoo/engine_eager_spawn_none.sqlite"), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    // The 2nd, 4th, ... device-to-host copy calls and synchronise calls (in call order: copy k, then its wait).
    for (const std::string which :
         {"r.correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2)",
          "s.value LIKE 'cudaStreamSynchronize%'"})
      REQUIRE(database->execute(
          "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid IN (SELECT id FROM (SELECT r.rowid AS id, "
          "row_number() OVER (ORDER BY r.start) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = "
          "r.nameId WHERE " + which + ") WHERE n % 2 = 0)"));
  }
  auto found = infer_sync_steps(copy);
  REQUIRE(found.has_value());
  REQUIRE(found->has_value());
  const StepKindReport& steps = **found;
  const std::string line = "engine_eager_spawn_none every second wait removed:";
  CHECK(double(steps.steps) == figure(line, "synchronisations"));
  CHECK(figure(line, "steps_per_synchronisation") == 2);
  CHECK(steps.figures_withheld);
  CHECK(steps.kinds.empty());
  CHECK_THAT(steps.inference_check, Catch::StartsWith("the launch sequence and the synchronisation disagree") &&
                                        Catch::Contains("each synchronisation closes several forward passes") &&
                                        Catch::EndsWith("per-step figures withheld"));
  const std::string markdown = step_kinds_markdown({steps});
  CHECK_THAT(markdown, Catch::Contains("How sure: the launch sequence and the synchronisation disagree"));
  CHECK_THAT(markdown, !Catch::Contains("| kind | steps |"));
  CHECK_THAT(step_kinds_json({steps}), Catch::Contains("\"figures_withheld\":true"));
}
