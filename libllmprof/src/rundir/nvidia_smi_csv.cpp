// Splitting nvidia-smi CSV output (see nvidia_smi_csv.hpp).
#include "rundir/nvidia_smi_csv.hpp"

#include <sstream>

#include "core/text.hpp"

namespace llmprof::detail {

std::vector<std::vector<std::string>> nvidia_smi_rows(std::string_view csv, std::size_t width) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines{std::string(csv)};
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields = split(line, ',');
    if (fields.size() != width) continue;
    for (auto& field : fields) field = std::string(trim(field));
    rows.push_back(std::move(fields));
  }
  return rows;
}

}  // namespace llmprof::detail
