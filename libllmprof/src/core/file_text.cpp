// Whole-file reads (see file_text.hpp).
#include "core/file_text.hpp"

#include <fstream>
#include <sstream>

namespace llmprof::detail {

std::optional<std::string> read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace llmprof::detail
