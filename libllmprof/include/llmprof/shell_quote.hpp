// POSIX shell quoting for cmd.txt: the exact argv a profiler or workload ran, as a line a user can paste.
#pragma once

#include <string>
#include <vector>

namespace llmprof {

// Quotes one argument for a POSIX shell only when needed ('it'"'"'s' style).
std::string quote_shell_argument(const std::string& argument);
// The argv as one copy-pasteable line; a first word that looks like "FOO=bar" is quoted.
std::string join_shell_command(const std::vector<std::string>& argv);

}  // namespace llmprof
