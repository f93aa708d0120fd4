// The end-to-end fixture: the real `deep-profile run` (or `sweep`) into a temporary runs root, with
// the fake nsys/ncu of tests/fake_tools first on PATH, and the run's manifest read back.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "deep_profile_cli.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

struct Invocation {
  std::vector<std::string> args;             // after `deep-profile <command>`
  std::map<std::string, std::string> env;    // on top of this process's environment
  std::function<void(pid_t)> while_running;  // e.g. send SIGINT
  std::string command = "run";
};

class EndToEnd {
 public:
  EndToEnd() { std::filesystem::create_directories(temp_ / "runs"); }

  // MAIN of the run (run.run_id=e2e under the temporary runs root).
  std::filesystem::path main() const { return temp_.path() / "runs" / "e2e"; }
  const TempDir& temp() const { return temp_; }

  CliResult run(Invocation invocation) {
    std::vector<std::string> args = {invocation.command,
                                     "--set",
                                     "run.runs_root=" + (temp_ / "runs").string(),
                                     "--set",
                                     "run.run_id=e2e",
                                     "--set",
                                     "run.min_free_space_gb=0"};
    args.insert(args.end(), invocation.args.begin(), invocation.args.end());
    if (invocation.env.find("PATH") == invocation.env.end()) invocation.env["PATH"] = path_with_fake_tools();
    CliOptions options;
    options.environment = invocation.env;
    options.while_running = invocation.while_running;
    return run_deep_profile(args, options);
  }

  RunManifest manifest() const { return manifest_of(main()); }

 private:
  TempDir temp_;
};

}  // namespace llmprof::testing
