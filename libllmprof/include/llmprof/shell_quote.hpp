// POSIX shell quoting for cmd.txt: the exact argv a profiler or workload ran, as a line a user can paste.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

// Quotes one argument for a POSIX shell only when needed ('it'"'"'s' style).
std::string quote_shell_argument(const std::string& argument);
// The argv as one copy-pasteable line; a first word that looks like "FOO=bar" is quoted.
std::string join_shell_command(const std::vector<std::string>& argv);

// Splits a command line typed by a user (e.g. `--launcher 'srun -n 2 --gpus-per-task=1'`) into
// words the way a POSIX shell would, without expansions: blanks separate words, '...' and "..."
// quote (a backslash escapes \ " $ ` inside double quotes), a backslash outside quotes escapes the
// next character. An unterminated quote or a trailing backslash is an invalid_argument Error.
Result<std::vector<std::string>> split_shell_words(std::string_view line);

}  // namespace llmprof
