// Engine steps without NVTX ranges (issue 34): engines run in production without NVTX, yet every engine step
// ends with the host waiting for the step's sampled tokens, a device-to-host copy (or, where no step copies, a
// stream or device synchronisation). The steps are cut there, on the thread that launches the most kernels, and
// grouped into kinds by the launch configurations of their GEMMs (a batch's composition sets the GEMMs' shapes).
#pragma once

#include <filesystem>
#include <optional>

#include "llmprof/result.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof {

// From an nsys SQLite export (CUPTI_ACTIVITY_KIND_RUNTIME and _KERNEL; _MEMCPY when present):
// - the step thread: the thread whose runtime calls launched the most kernels;
// - a cut at the end of each of its calls that launched a device-to-host copy (copyKind 2), else of each of its
//   cudaStreamSynchronize / cudaDeviceSynchronize / cudaEventSynchronize (cu* alike) calls;
// - step k: its launches after cut k-1 up to cut k (the first from the thread's first launch); a step lasts from
//   its first launch to the later of its cut's end and its last GPU end; steps without a kernel are dropped;
// - its signature: the set of (kernel, grid) of its GEMM kernels (names with gemm, nvjet, cutlass, xmma or
//   matmul), of all its kernels when it launched none; steps sharing a signature that holds at least a quarter
//   of the steps are one kind each ("uniform-1", "uniform-2", ... by count), the rest one kind, "varying" (the
//   batch's shape changes step to step: continuous batching's prefill and mixed steps).
// `window` keeps steps skip .. skip + count - 1. nullopt when the export holds no kernel or no cut;
// StepKindReport::inferred says how the steps were found.
Result<std::optional<StepKindReport>> infer_sync_steps(const std::filesystem::path& sqlite_export,
                                                       StepWindow window = {});

}  // namespace llmprof
