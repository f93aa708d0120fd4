// Whole-file reads (see file_text.hpp).
#include "core/file_text.hpp"

#include <fstream>
#include <sstream>
#include <vector>

#include "core/text.hpp"

namespace llmprof::detail {

std::optional<std::string> read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::string read_text(const std::filesystem::path& path) { return read_file_text(path).value_or(std::string()); }

std::string tail_lines(const std::filesystem::path& path, std::size_t count) {
  std::istringstream text(read_text(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_blank(line)) lines.push_back(line);
  }
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  return join(lines, " | ");
}

}  // namespace llmprof::detail
