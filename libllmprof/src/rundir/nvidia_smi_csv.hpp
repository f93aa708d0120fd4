// The fields of one line of `nvidia-smi --format=csv,...` output, trimmed: nvidia-smi's CSV rows have no
// quoting, and fields are comma-separated with a space after each comma.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmprof::detail {

std::vector<std::string> split_nvidia_smi_fields(std::string_view line);

}  // namespace llmprof::detail
