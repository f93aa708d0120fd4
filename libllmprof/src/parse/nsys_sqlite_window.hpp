// A window restricted out of an nsys SQLite export: a copy that holds only what a capture gated on that window
// would hold, for the analysis to read as its timeline.
#pragma once

#include <cstdint>
#include <filesystem>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// [start_ns, end_ns] on the export's clock (its timestamps), both ends inside.
struct ExportWindow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct RestrictedExport {
  std::int64_t rows_removed = 0;
  std::int64_t kernels_kept = 0;  // CUPTI_ACTIVITY_KIND_KERNEL rows left
};

// Writes `destination` (replaced when present; written beside it first, then renamed) as `source` restricted to
// `window`: host-side events (CUDA API calls, NVTX ranges, OS runtime calls, ...) that start inside it, the GPU
// work those calls launched (matched by process and correlation id, wherever it ran), GPU work no call in the
// export launched when it starts inside, and samples (GPU metrics) inside it. Tables without time stay whole.
Result<RestrictedExport> restrict_export_to_window(const std::filesystem::path& source,
                                                   const std::filesystem::path& destination, ExportWindow window);

}  // namespace llmprof::detail
