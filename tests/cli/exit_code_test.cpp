// The exit status of every deep-profile subcommand for one representative error each, and the one
// Error -> exit status mapping they share (llmprof::exit_code_for, README "Exit codes").
#include <catch2/catch.hpp>

#include "deep_profile_cli.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/exit_code.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

TEST_CASE("exit_code_for maps each error code to the README's exit status") {
  CHECK(exit_code_for(make_error(ErrorCode::invalid_argument, "x")) == 2);
  CHECK(exit_code_for(make_error(ErrorCode::not_found, "x")) == 4);
  CHECK(exit_code_for(make_error(ErrorCode::parse_error, "x")) == 4);
  CHECK(exit_code_for(make_error(ErrorCode::io_error, "x")) == 3);
  CHECK(exit_code_for(make_error(ErrorCode::no_space, "x")) == 3);
  CHECK(exit_code_for(make_error(ErrorCode::process_failed, "x")) == 3);
  CHECK(exit_code_for(make_error(ErrorCode::unsupported, "x")) == 3);
  CHECK(exit_code_for(make_error(ErrorCode::already_exists, "x")) == 3);
  CHECK(exit_code_for(make_error(ErrorCode::no_report, "x")) == 1);
  CHECK(exit_code_for(make_error(ErrorCode::timeout, "x")) == 124);
  CHECK(exit_code_for(make_error(ErrorCode::interrupted, "x")) == 130);
}

TEST_CASE("exit_code_for maps each run status to the README's exit status") {
  CHECK(exit_code_for(RunStatus::ok) == 0);
  CHECK(exit_code_for(RunStatus::hardware_limited) == 0);
  CHECK(exit_code_for(RunStatus::incomplete) == 1);
  CHECK(exit_code_for(RunStatus::failed) == 1);
  CHECK(exit_code_for(RunStatus::running) == 1);  // never the outcome of a returned run: counted as not finished
  CHECK(exit_code_for(RunStatus::environment) == 3);
  CHECK(exit_code_for(RunStatus::bad_input) == 4);
  CHECK(exit_code_for(RunStatus::timeout) == 124);
  CHECK(exit_code_for(RunStatus::interrupted) == 130);
}

#ifdef LLMPROF_DEEP_PROFILE_EXE
using llmprof::testing::run_deep_profile;

TEST_CASE("run: an unknown configuration key is a usage error (2)", "[cli]") {
  const auto result = run_deep_profile({"run", "--set", "nsys.nvtx_captur=decode"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("did you mean nsys.nvtx_capture?"));
}

TEST_CASE("run: a --config file that does not exist is a usage error (2), not a missing input", "[cli]") {
  TempDir temp;
  const auto result = run_deep_profile({"run", "--config", (temp / "absent.toml").string()});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("absent.toml"));
}

TEST_CASE("probe: an unknown option is a usage error (2)", "[cli]") {
  const auto result = run_deep_profile({"probe", "--no-such-option"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("usage: deep-profile probe"));
}

TEST_CASE("analyze: a run directory that does not exist is a missing input (4)", "[cli]") {
  TempDir temp;
  const auto result = run_deep_profile({"analyze", (temp / "no-such-run").string()});
  CHECK(result.exit_code == 4);
  CHECK_THAT(result.err, Catch::Contains("no-such-run"));
}

TEST_CASE("report: an unparsable analysis/report.json is a bad input (4), as everywhere else", "[cli]") {
  TempDir temp;
  write_file(temp / "analysis" / "report.json", "{ not json");
  const auto result = run_deep_profile({"report", temp.path().string()});
  CHECK(result.exit_code == 4);
  CHECK_THAT(result.err, Catch::Contains("report.json"));
}

TEST_CASE("compare: a run directory that does not exist is a missing input (4)", "[cli]") {
  TempDir temp;
  const auto result = run_deep_profile({"compare", (temp / "a").string(), (temp / "b").string()});
  CHECK(result.exit_code == 4);
}

// Issue 33: a missing workload program was exit 1 ("failed") from run and run --discover; the README says 4.
TEST_CASE("run and run --discover: a workload program that does not exist is a missing input (4)", "[cli]") {
  TempDir temp;
  const std::string program = (temp / "no-such-program").string();
  const auto run = run_deep_profile({"run", "--set", "run.runs_root=" + (temp / "runs").string(), "--", program});
  CHECK(run.exit_code == 4);
  CHECK_THAT(run.out, Catch::Contains("outcome: bad_input"));
  CHECK_THAT(run.out, Catch::Contains("executable '" + program + "' does not exist"));
  const auto discover =
      run_deep_profile({"run", "--discover", "--set", "run.runs_root=" + (temp / "runs").string(), "--", program});
  CHECK(discover.exit_code == 4);
  CHECK_THAT(discover.err, Catch::Contains("executable '" + program + "' does not exist"));
}

// Issue 33: each message names what the user gave and what the tool found there.
TEST_CASE("analyze FILE, report MISSING_DIR and a newer run.json say what they were given", "[cli]") {
  TempDir temp;
  write_file(temp / "run" / "run.json", R"({"schema": "llmprof.run/9"})");
  write_file(temp / "run" / "config.toml", "");
  const auto file = run_deep_profile({"analyze", (temp / "run" / "run.json").string()});
  CHECK(file.exit_code == 4);
  CHECK_THAT(file.err, Catch::Contains("run.json is a file, not a run directory"));
  CHECK_THAT(file.err, !Catch::Contains("does not exist"));
  const auto missing = run_deep_profile({"report", (temp / "absent").string()});
  CHECK(missing.exit_code == 4);
  CHECK_THAT(missing.err, Catch::Contains("absent does not exist"));
  CHECK_THAT(missing.err, !Catch::Contains("deep-profile analyze"));
  const auto newer = run_deep_profile({"run", "--resume", (temp / "run").string()});
  CHECK(newer.exit_code == 4);
  CHECK_THAT(newer.err, Catch::Contains("run.json has schema llmprof.run/9; this deep-profile reads llmprof.run/1"));
}

TEST_CASE("sweep: no points is a usage error (2)", "[cli]") {
  const auto result = run_deep_profile({"sweep"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("a sweep needs points"));
}

TEST_CASE("sweep: an axis that cannot take effect (example_args beside -- CMD) is a usage error (2)", "[cli]") {
  // These points used to run the same command three times and be listed as three distinct points.
  const auto result =
      run_deep_profile({"sweep", "--point", "workload.example_args=[\"--batch\",\"1\"]", "--point",
                        "workload.example_args=[\"--batch\",\"2\"]", "--", "/bin/true"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("workload.example_args") && Catch::Contains("no effect"));
}

TEST_CASE("config: a value of the wrong type is a usage error (2)", "[cli]") {
  const auto result = run_deep_profile({"config", "--set", "run.top_n_kernels=ten"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("run.top_n_kernels"));
}

TEST_CASE("run --ranks: an absurd range or a rank beyond the launcher's world is a usage error (2) at once", "[cli]") {
  // 0-50000000 used to allocate a set of 50 million ranks and die of std::bad_alloc (134). Checked
  // before the launcher is looked up on PATH, so no srun is needed here.
  // Without -n the world size is unknown here: the range itself is refused.
  const auto absurd = run_deep_profile({"run", "--launcher", "srun", "--ranks", "0-50000000", "--", "true"});
  CHECK(absurd.exit_code == 2);
  CHECK_THAT(absurd.err, Catch::Contains("above 1048575"));
  const auto beyond = run_deep_profile({"run", "--launcher", "srun -n 2", "--ranks", "0,2", "--", "true"});
  CHECK(beyond.exit_code == 2);
  CHECK_THAT(beyond.err, Catch::Contains("outside the world size 2"));
}

TEST_CASE("every subcommand prints its usage on --help and exits 0", "[cli]") {
  for (const std::string command : {"run", "probe", "analyze", "report", "compare", "sweep", "config"}) {
    const auto result = run_deep_profile({command, "--help"});
    INFO(command);
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.out, Catch::Contains("usage: deep-profile " + command));
    CHECK_THAT(result.out, Catch::Contains("--help"));
  }
}
#endif

TEST_CASE("run --resume '': an empty run directory (an unset variable) is a usage error (2), not a new run", "[cli]") {
  // It used to read as "no --resume" and start a brand-new full run, exit 0. The workload would fail
  // loudly if it ever ran: it must not.
  const auto result = run_deep_profile({"run", "--resume", ""});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("--resume needs a run directory"));
  // `--resume=` the option parser itself refuses (a missing argument): 2 as well.
  CHECK(run_deep_profile({"run", "--resume="}).exit_code == 2);
}

TEST_CASE("run --resume: with a configuration change, or on a directory that is no run, a usage error (2)", "[cli]") {
  llmprof::testing::TempDir temp;
  const auto mixed = run_deep_profile({"run", "--resume", temp.path().string(), "--set", "run.top_n_kernels=3"});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("--resume continues with the configuration and workload MAIN recorded") != std::string::npos);
  const auto missing = run_deep_profile({"run", "--resume", temp.path().string()});
  CHECK(missing.exit_code == 2);  // no config.toml there: the command line named no run
  CHECK(missing.err.find("config.toml") != std::string::npos);
}
