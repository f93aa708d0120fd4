// Runs a shell-quoted line through /bin/sh and returns the words the shell saw, to prove that
// to_shell_string() output pastes back into exactly the argv it came from.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmprof::testing {

// The NUL-terminated words of `text` (what `printf '%s\0'` writes).
inline std::vector<std::string> split_nul_terminated(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == '\0') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return words;
}

// `printf '%s\0' WORDS` re-applies the format to each word, so every word comes back NUL-terminated,
// newlines included.
inline std::vector<std::string> words_seen_by_shell(const std::string& quoted_line) {
  const std::string command = "printf '%s\\0' " + quoted_line;
  FILE* pipe = ::popen(command.c_str(), "r");  // popen runs `/bin/sh -c command`
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  std::string output;
  char buffer[4096];
  std::size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, count);
  if (::pclose(pipe) != 0) throw std::runtime_error("sh failed on: " + command);
  return split_nul_terminated(output);
}

}  // namespace llmprof::testing
