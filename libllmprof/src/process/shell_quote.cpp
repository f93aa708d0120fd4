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
    case '_':
    case '-':
    case '.':
    case '/':
    case ',':
    case ':':
    case '=':
    case '+':
    case '@':
    case '%':
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
    const bool name_char =
        c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
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

std::string reproduce_command_line(const std::vector<std::string>& argv,
                                   const std::map<std::string, std::string>& environment,
                                   const std::filesystem::path& working_directory) {
  std::string line;
  if (!working_directory.empty()) line += "cd " + quote_shell_argument(working_directory.string()) + " && ";
  if (environment.empty()) return line + join_shell_command(argv);
  line += "env";
  for (const auto& [name, value] : environment) line += " " + quote_shell_argument(name + "=" + value);
  if (!argv.empty() && argv.front().find('=') != std::string::npos) line += " sh -c 'exec \"$0\" \"$@\"'";
  return line + " " + join_shell_command(argv);
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

namespace {

// The state of split_shell_words between characters.
struct WordSplitter {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;

  void add(char c) {
    word += c;
    in_word = true;
  }
  void end_word() {
    if (in_word) words.push_back(word);
    word.clear();
    in_word = false;
  }
};

Error unterminated(std::string_view line, const char* what) {
  return make_error(ErrorCode::invalid_argument, std::string("the command line has ") + what,
                    "close the quote or drop the trailing backslash", std::string(line));
}

}  // namespace

Result<std::vector<std::string>> split_shell_words(std::string_view line) {
  WordSplitter splitter;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      splitter.end_word();
    } else if (c == '\\') {
      if (++i == line.size()) return unterminated(line, "a trailing backslash");
      splitter.add(line[i]);
    } else if (c == '\'') {
      const auto close = line.find('\'', i + 1);
      if (close == std::string_view::npos) return unterminated(line, "an unterminated single quote");
      splitter.in_word = true;
      splitter.word.append(line.substr(i + 1, close - i - 1));
      i = close;
    } else if (c == '"') {
      splitter.in_word = true;
      for (++i;; ++i) {
        if (i >= line.size()) return unterminated(line, "an unterminated double quote");
        if (line[i] == '"') break;
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\\\"$`").find(line[i + 1]) != std::string_view::npos)
          ++i;
        splitter.word += line[i];
      }
    } else {
      splitter.add(c);
    }
  }
  splitter.end_word();
  return splitter.words;
}

}  // namespace llmprof
