// The one writer of recorded commands (cmd.txt, run.json, the report's blocks), tested by re-execution:
// each line is pasted into bash, and a probe program records what it received (cwd, an environment
// variable, argv bytes), which must equal what the line was made from.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "llmprof/shell_quote.hpp"
#include "shell_roundtrip.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// A probe that writes its cwd, $PROBE_VALUE and its arguments, each NUL-terminated, to $PROBE_OUT.
void write_probe(const fs::path& path) {
  write_file(path,
             "#!/bin/sh\n"
             "{ printf '%s\\0' \"$(pwd -P)\" \"${PROBE_VALUE-unset}\"; printf '%s\\0' \"$@\"; } > \"$PROBE_OUT\"\n");
  fs::permissions(path, fs::perms::owner_all);
}

// Runs `line` with bash from another directory; returns what the probe saw.
std::vector<std::string> run_pasted(const std::string& line, const fs::path& out) {
  const fs::path script = out.parent_path() / "pasted.sh";
  write_file(script, "cd / || exit 99\n" + line + "\n");
  const std::string command = "env PROBE_OUT=" + quote_shell_argument(out.string()) + " bash " +
                              quote_shell_argument(script.string()) + " </dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  return split_nul_terminated(read_file(out));
}

}  // namespace

TEST_CASE("a recorded command pasted into bash runs the recorded argv, environment and directory") {
  TempDir temp;
  const fs::path directory = temp / "work dir 'quoted'";
  // A '=' in the program's path: `env K=V /x/out=opt/prog` takes the program for an assignment.
  fs::create_directories(directory / "out=opt");
  write_probe(directory / "out=opt/prog");
  const fs::path program = fs::canonical(directory / "out=opt/prog");
  const std::vector<std::string> arguments = {"x", "", "two words", "it's", "$HOME", "new\nline", "A=B", "--"};

  for (const std::string& program_word : {program.string(), std::string("./out=opt/prog")}) {
    for (const bool with_environment : {true, false}) {
      std::vector<std::string> argv = {program_word};
      argv.insert(argv.end(), arguments.begin(), arguments.end());
      std::map<std::string, std::string> environment;
      if (with_environment) environment = {{"PROBE_VALUE", "v a'l=ue\n$X"}, {"LLMPROF_PROFILER", "nsys"}};
      const std::string line = reproduce_command_line(argv, environment, directory);
      INFO(line);
      const std::vector<std::string> seen = run_pasted(line, temp / "seen.bin");
      REQUIRE(seen.size() == 2 + arguments.size());
      CHECK(seen[0] == fs::canonical(directory).string());
      CHECK(seen[1] == (with_environment ? "v a'l=ue\n$X" : "unset"));
      CHECK(std::vector<std::string>(seen.begin() + 2, seen.end()) == arguments);
    }
  }
}

TEST_CASE("a program word with '=' after env is started through sh, and a plain one directly") {
  const std::string odd = reproduce_command_line({"/x/out=opt/prog", "y"}, {{"K", "V"}}, "/w");
  CHECK(odd == "cd /w && env K=V sh -c 'exec \"$0\" \"$@\"' /x/out=opt/prog y");
  CHECK(reproduce_command_line({"/bin/prog", "y"}, {{"K", "V"}}, "") == "env K=V /bin/prog y");
  CHECK(reproduce_command_line({"/bin/prog"}, {}, "/w") == "cd /w && /bin/prog");
}
