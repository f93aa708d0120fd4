// Each helper here already has its home in libllmprof/src/core: check_one_home.py refuses every one.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace llmprof {

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim_cell(const std::string& cell) {
  const auto first = cell.find_first_not_of(" \t"), last = cell.find_last_not_of(" \t");
  return first == std::string::npos ? "" : cell.substr(first, last - first + 1);
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

}  // namespace llmprof
