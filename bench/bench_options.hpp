// What the benchmark programs share: their command-line flags (each named once, with a usage line
// and exit status 2 for anything else) and the peak memory they report.
#pragma once

#include <sys/resource.h>

#include <charconv>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::bench {

// The program's name and its usage line after the name ("[--rows N] [--keep]").
struct Usage {
  std::string program;
  std::string synopsis;

  // Prints the problem and the usage line to stderr and exits with status 2.
  [[noreturn]] void fail(const std::string& problem) const {
    std::cerr << program << ": " << problem << "\nusage: " << program << " " << synopsis << "\n";
    std::exit(2);
  }
};

// A flag: `--name VALUE` when `set` takes the value, `--name` alone when it is a switch.
struct Flag {
  std::string name;
  std::function<void(const std::string& value)> set;
  bool takes_value = true;
};

inline Flag switch_flag(std::string name, std::function<void()> set) {
  return {std::move(name), [set = std::move(set)](const std::string&) { set(); }, false};
}

// Applies every flag of argv[1..argc) in order; an unknown word or a flag without its value fails.
inline void parse_flags(int argc, char** argv, const Usage& usage, const std::vector<Flag>& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const Flag* flag = nullptr;
    for (const auto& candidate : flags) {
      if (candidate.name == word) flag = &candidate;
    }
    if (flag == nullptr) usage.fail("unknown argument " + word);
    if (!flag->takes_value) {
      flag->set({});
      continue;
    }
    if (i + 1 >= argc) usage.fail(word + " needs a value");
    flag->set(argv[++i]);
  }
}

// A whole non-negative number, or a usage failure naming the flag (std::stoull would throw, or read "12x" as 12).
template <typename Unsigned>
Unsigned count_value(const Usage& usage, std::string_view flag, const std::string& text) {
  Unsigned value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    usage.fail(std::string(flag) + " needs a whole number, not '" + text + "'");
  return value;
}

// Peak resident memory of this process so far, in MB (ru_maxrss is in KiB on Linux).
inline double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace llmprof::bench
