// The metric names an ncu install's section files collect (<ncu-root>/sections/*.section).
#pragma once

#include "llmprof/tool_probe.hpp"

namespace llmprof::detail {

// Where standalone Nsight Compute installs live, one folder per version: <root>/<version>/sections.
// NVIDIA's installer uses /opt/nvidia/nsight-compute/<version> (the H100 machine: 2025.3.1, with
// /usr/local/cuda/bin/ncu a wrapper script). Tests point this at a fake tree.
struct SectionSearch {
  std::vector<std::filesystem::path> install_roots = {"/opt/nvidia/nsight-compute"};
};

// Finds the install's sections/ folder and fills info.sections_directory and info.section_metrics;
// leaves both empty when there is none. Looks next to info.path and its realpath, at the ncu a wrapper
// script (#!) execs, then in search.install_roots. A versioned folder (nsight-compute-<v>, <root>/<v>) is
// used only when <v> is info.version: another version's sections would describe another ncu, so when
// only those exist, info.sections_note says which were found and not used.
void read_section_metrics(NcuInfo& info, const SectionSearch& search = {});

}  // namespace llmprof::detail
