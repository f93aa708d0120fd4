// POSIX shell quoting for cmd.txt: the exact argv a profiler or workload ran, as a line a user can paste.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

// Quotes one argument for a POSIX shell only when needed ('it'"'"'s' style).
std::string quote_shell_argument(const std::string& argument);
// The argv as one copy-pasteable line; a first word that looks like "FOO=bar" is quoted.
std::string join_shell_command(const std::vector<std::string>& argv);
// The one form of every recorded command (cmd.txt, run.json, the report): a line that, pasted into a
// POSIX shell, runs `argv` in `working_directory` (when not empty) with `environment` added to the
// shell's: `cd DIR && env K=V ... PROG ARGS`. `env` takes every word with a '=' before the program for
// an assignment (GNU coreutils 9.1; `env --` does not change that), so a program whose path holds a '='
// is started through `sh -c 'exec "$0" "$@"' PROG ARGS`, which `env` sees as the program `sh`.
std::string reproduce_command_line(const std::vector<std::string>& argv,
                                   const std::map<std::string, std::string>& environment,
                                   const std::filesystem::path& working_directory);

// Splits a command line typed by a user (e.g. `--launcher 'srun -n 2 --gpus-per-task=1'`) into
// words the way a POSIX shell would, without expansions: blanks separate words, '...' and "..."
// quote (a backslash escapes \ " $ ` inside double quotes), a backslash outside quotes escapes the
// next character. An unterminated quote or a trailing backslash is an invalid_argument Error.
Result<std::vector<std::string>> split_shell_words(std::string_view line);

}  // namespace llmprof
