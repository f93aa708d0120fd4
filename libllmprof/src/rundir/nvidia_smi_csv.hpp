// The rows of `nvidia-smi --format=csv,...` output, their fields trimmed: nvidia-smi's CSV rows have no quoting,
// and fields are comma-separated with a space after each comma.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmprof::detail {

// The rows of `csv` that have exactly `width` fields, the number the query asked for; any other line (a header, a
// message such as "No devices were found") is passed over.
std::vector<std::vector<std::string>> nvidia_smi_rows(std::string_view csv, std::size_t width);

}  // namespace llmprof::detail
