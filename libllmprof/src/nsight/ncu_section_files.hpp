// The metric names an ncu install's section files collect (<ncu-root>/sections/*.section).
#pragma once

#include "llmprof/tool_probe.hpp"

namespace llmprof::detail {

// Finds the install's sections/ folder next to info.path and fills info.sections_directory and
// info.section_metrics; leaves both empty when there is none.
void read_section_metrics(NcuInfo& info);

}  // namespace llmprof::detail
