// The real Nsight tools of a GPU-less machine (Debian 12's nsys 2022.4.2.1 and ncu 2022.3.0, unpacked by
// scripts/install-nsight.sh) for end-to-end tests, and deep-profile run with no tool on PATH so that the
// probe must find them itself.
//
// Where the tools are absent a test prints "LLMPROF-SKIPPED: ..." (ctest reports it as skipped); with
// LLMPROF_REQUIRE_REAL_TOOLS=1 (set by scripts/test.sh, hence CI) an absent tool fails the test instead.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/shell_quote.hpp"
#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"
#include "skip.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

// The unpacked packages: nsys and ncu under the first cache root that has both.
inline std::optional<std::filesystem::path> real_tools_root() {
  for (const auto& root : nsight_cache_roots()) {
    if (std::filesystem::exists(root / "usr/lib/nsight-systems/bin/nsys") &&
        std::filesystem::exists(root / "usr/lib/nsight-compute/ncu"))
      return root;
  }
  return std::nullopt;
}

// True when the test may go on; otherwise skips visibly, or fails when the tools are required.
inline bool have_real_tools() {
  if (real_tools_root()) return true;
  std::string places;
  for (const auto& root : nsight_cache_roots()) places += (places.empty() ? "" : ", ") + root.string();
  skip_test("the real Nsight tools are not unpacked in " + places + " (scripts/install-nsight.sh installs them)",
            "LLMPROF_REQUIRE_REAL_TOOLS");
  return false;
}

struct Finished {
  int exit_code = -1;
  std::string out;
};

// deep-profile with PATH=/usr/bin:/bin (no Nsight tool on it), `environment` ("NAME=value") added, its
// output in `temp`/output.txt.
inline Finished deep_profile(const TempDir& temp, std::vector<std::string> args,
                             const std::vector<std::string>& environment = {}) {
  std::vector<std::string> argv = {"env", "PATH=/usr/bin:/bin"};
  argv.insert(argv.end(), environment.begin(), environment.end());
  argv.push_back(LLMPROF_DEEP_PROFILE_EXE);
  argv.insert(argv.end(), args.begin(), args.end());
  const std::filesystem::path output = temp / "output.txt";
  const std::string command = join_shell_command(argv) + " > " + output.string() + " 2>&1 < /dev/null";
  const int status = std::system(command.c_str());
  Finished finished;
  finished.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  finished.out = read_file(output);
  UNSCOPED_INFO("$ " << command << "\nexit " << finished.exit_code << "\n" << finished.out);
  return finished;
}

}  // namespace llmprof::testing
