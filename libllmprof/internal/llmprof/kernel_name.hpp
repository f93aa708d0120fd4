// CUDA kernel names as the Nsight tools print them, and the forms libllmprof compares them in.
//
// nsys prints the demangler's full name ("void at::native::reduce_kernel<(int)512, ...>(T3)").
// ncu 2025.3 simplifies names by default (--rename-kernels 1): it drops namespace qualifiers such
// as "native::" and "detail::" and the C-style casts on template literals ("(int)512" -> "512"),
// so the same kernel is spelled differently by the two tools (see tests/data/h100-nsight-2025.3:
// ns1_st_cuda_gpu_kern_sum.csv vs nc1_raw.csv). These helpers give the comparable forms.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/choice.hpp"

namespace llmprof {

// How ncu's --kernel-name / --kernel-name-base should see a kernel.
enum class KernelNameBase {
  demangled,  // the full demangled name, with template arguments and parameters
  function,   // ncu's "function" base: the bare function identifier ("reduce_kernel")
};

inline std::span<const std::string_view> choice_names(KernelNameBase) noexcept {
  static constexpr std::string_view names[] = {"demangled", "function"};
  return names;
}
const char* to_string(KernelNameBase base) noexcept;

// The bare function identifier of a demangled name: no return type, namespaces, template
// arguments or parameter list ("void at::native::<unnamed>::f<int>(int)" -> "f"). This is what
// ncu's --kernel-name-base function matches against (its "Available Kernels" list shows the same).
// A name that is already bare ("nvjet_sm90_...") is returned unchanged.
std::string kernel_function_name(std::string_view demangled);

// A spelling-independent key for joining nsys and ncu names of one kernel: C-style casts on
// literals removed, namespace qualifiers removed, whitespace collapsed. Equal keys are treated as
// the same kernel.
std::string kernel_name_join_key(std::string_view name);

// Escapes `text` so that it matches itself literally in an ECMAScript (std::regex) or PCRE regex:
// ( ) [ ] { } * + ? . | ^ $ \ get a backslash; < and > become [<] and [>] because "\<" and "\>"
// are word boundaries in GNU-derived flavours, while a one-character class is literal everywhere.
std::string escape_regex(std::string_view text);

// A pattern matching `demangled` both as nsys spells it and as ncu's renaming spells it: each
// namespace qualifier and each cast on a literal is an optional group, the rest escaped literally.
// Not anchored.
std::string demangled_name_pattern(std::string_view demangled);

// "regex:^(?:a|b)$" for ncu --kernel-name, anchored so that no longer name matches by accident.
// Duplicates (several kernels sharing a function name) appear once.
std::string kernel_name_regex(const std::vector<std::string>& demangled_names, KernelNameBase base);

// "regex:^(?:a|b)$" of mangled names, each escaped literally, for ncu --kernel-name-base mangled. The
// mangled name is the one spelling nsys and ncu share: ncu 2025.3 renames demangled names (--rename-kernels)
// but never mangled ones. Duplicates appear once.
std::string mangled_name_regex(const std::vector<std::string>& mangled_names);

// A kernel that takes part in a collective across GPUs or processes (NCCL, NVSHMEM, the custom
// all-reduce kernels of vLLM/TensorRT-LLM, symmetric-memory multimem kernels), by its demangled name.
// It waits for its peers, so ncu, which replays one kernel at a time, must never be pointed at it (it
// would hang), and the cross-rank view counts its time as communication.
bool is_collective_kernel(std::string_view demangled);

}  // namespace llmprof
