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

Result<std::string> read_input_file(const std::filesystem::path& path, const std::string& what,
                                    const std::string& missing_hint) {
  std::error_code status_error;
  if (!std::filesystem::is_regular_file(path, status_error)) {
    return make_error(ErrorCode::not_found, what + " " + path.string() + " does not exist", missing_hint,
                      path.string());
  }
  auto text = read_file_text(path);
  if (!text) {
    return make_error(ErrorCode::io_error, "cannot read " + what + " " + path.string(), "check the file's permissions",
                      path.string());
  }
  return std::move(*text);
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
