// POSIX shell quoting for cmd.txt: the exact argv a profiler ran, as a line a user can paste.
#include <string>
#include <vector>

#include "llmprof/shell_quote.hpp"

namespace llmprof {
namespace {

// Characters no POSIX shell treats specially anywhere in a word. '~' (tilde expansion at the
// start), '{' '}' (bash brace expansion), '!' (interactive history) and '^' (old Bourne pipe)
// are deliberately left out, so such words get quoted.
bool is_shell_safe(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_': case '-': case '.': case '/': case ',': case ':': case '=': case '+': case '@': case '%':
      return true;
    default:
      return false;
  }
}

// A first word like "FOO=bar" would be taken by the shell as a variable assignment.
bool looks_like_assignment(const std::string& word) {
  const auto equals = word.find('=');
  if (equals == std::string::npos || equals == 0) return false;
  for (std::size_t i = 0; i < equals; ++i) {
    const char c = word[i];
    const bool name_char = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
    if (!name_char) return false;
  }
  return true;
}

std::string single_quote(const std::string& argument) {
  std::string quoted = "'";
  for (char c : argument) {
    if (c == '\'') {
      quoted += "'\"'\"'";  // close, a double-quoted ', reopen
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

}  // namespace

std::string quote_shell_argument(const std::string& argument) {
  if (argument.empty()) return "''";
  for (char c : argument) {
    if (!is_shell_safe(c)) return single_quote(argument);
  }
  return argument;
}

std::string join_shell_command(const std::vector<std::string>& argv) {
  std::string line;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) line += ' ';
    if (i == 0 && looks_like_assignment(argv[i])) {
      line += single_quote(argv[i]);
    } else {
      line += quote_shell_argument(argv[i]);
    }
  }
  return line;
}

}  // namespace llmprof
