// Splitting nvidia-smi CSV lines (see nvidia_smi_csv.hpp).
#include "rundir/nvidia_smi_csv.hpp"

#include "core/text.hpp"

namespace llmprof::detail {

std::vector<std::string> split_nvidia_smi_fields(std::string_view line) {
  std::vector<std::string> fields = split(line, ',');
  for (auto& field : fields) field = std::string(trim(field));
  return fields;
}

}  // namespace llmprof::detail
