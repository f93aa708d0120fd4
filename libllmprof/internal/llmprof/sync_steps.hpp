// Engine steps without NVTX ranges: engines run in production without NVTX, yet every engine step ends with the host
// waiting for the step's sampled tokens (a device-to-host copy, a synchronise call). Not every wait ends a step
// (Hugging Face generate() waits twice per forward pass, transformers 5.x on the H100), so the steps are found in
// the launch sequence between the waits, on the thread that launches the most kernels and graphs, and grouped into
// kinds by the launch configurations of their GEMMs and their graphs (a batch's composition sets the GEMMs' shapes).
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <utility>

#include "llmprof/result.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof {

// From an nsys SQLite export (CUPTI_ACTIVITY_KIND_RUNTIME and _KERNEL; _MEMCPY, _MEMSET and _GRAPH_TRACE when
// present):
// - the step thread: the thread whose runtime calls launched the most kernels and graphs;
// - its calls that launched GPU work or waited (a device-to-host copy, copyKind 2; cudaStreamSynchronize,
//   cudaDeviceSynchronize, cudaEventSynchronize, cu* alike), cut into steps by analysis/step_sequence.hpp: the
//   sequence between waits that repeats is a step, the once-per-step GEMM or graph launch checks that each wait
//   closes one forward pass;
// - a step lasts from its first call to the later of its last call's end and its last GPU end; its GPU work is the
//   kernels, copies, sets and graph executions its calls launched (a graph launch's kernels when traced per node);
// - its signature: the set of (kernel, grid) of its GEMM kernels (names with gemm, nvjet, cutlass, xmma or
//   matmul), of all its kernels when it launched none, and its graphs traced whole; steps sharing a signature that
//   holds at least a quarter of the steps are one kind each ("uniform-1", "uniform-2", ... by count), the rest one
//   kind, "varying" (the batch's shape changes step to step: continuous batching's prefill and mixed steps).
// `window` keeps steps skip .. skip + count - 1; `within`, when given, keeps only the calls that start inside
// [first, second] ns on the export's clock (a range's CPU span: the steps a `decode` range holds). nullopt when the
// export holds no kernel or no step;
// StepKindReport::inferred says how the steps were found, ::inference_check how sure that is; where the launch
// sequence and the waits disagree, ::figures_withheld is set and no kind is given.
Result<std::optional<StepKindReport>> infer_sync_steps(
    const std::filesystem::path& sqlite_export, StepWindow window = {},
    const std::optional<std::pair<std::int64_t, std::int64_t>>& within = std::nullopt);

}  // namespace llmprof
