// Library ranges (llmprof/library_ranges.hpp): the built-in rules, the pattern match and run.ignore_ranges.
#include "llmprof/library_ranges.hpp"

#include <algorithm>

namespace llmprof {
namespace {

LibraryRangeRule rule(std::string library, std::string pattern, std::optional<std::string> domain, std::string source) {
  return {std::move(library), std::move(pattern), std::move(domain), std::move(source)};
}

std::vector<LibraryRangeRule> make_builtin_rules() {
  const std::string cccl = "CCCL's own NVTX domain (libcudacxx include/cuda/__nvtx/nvtx.h, CUDA 12.9 and 13)";
  const std::string cub =
      "CUB names the range after the device algorithm called (_CCCL_NVTX_RANGE_SCOPE_IF(d_temp_storage, "
      "\"cub::DeviceScan::InclusiveScan\")); a Hugging Face generate() on CUDA 13 emitted it, with and without its "
      "domain, on the H100";
  const std::string thrust = "Thrust algorithms (_CCCL_NVTX_RANGE_SCOPE(\"thrust::reduce\"), CCCL 3)";
  const std::string emit_nvtx =
      "torch.autograd.profiler.emit_nvtx: getNvtxStr writes \"<op>, seq = N\", then \", op_id = N\", \", sizes = "
      "[...]\", \", input_op_ids = [...]\" (torch/csrc/profiler/util.cpp); every record_function scope under it, "
      "the user's included, carries its op_id, a new name per call";
  return {
      rule("CCCL", "*", "CCCL", cccl),
      rule("CCCL", "cub::*", std::nullopt, cub),
      rule("CCCL", "thrust::*", std::nullopt, thrust),
      rule("NCCL", "*", "NCCL", "NCCL's NVTX domain (src/include/nvtx.h: nccl_domain \"NCCL\"), one range per API call"),
      rule("cuBLAS", "*", "cuBLAS", "the domain Nsight Systems shows cuBLAS calls under"),
      rule("cuBLASLt", "*", "cuBLASLt", "the domain Nsight Systems shows cuBLASLt calls under"),
      rule("cuDNN", "*", "cuDNN", "the domain Nsight Systems shows cuDNN calls under"),
      rule("TensorRT", "*", "TensorRT", "TensorRT marks every engine layer with an NVTX range in its own domain"),
      rule("RAPIDS", "*", "libcudf", "libcudf's NVTX domain (cudf/utilities/nvtx ranges)"),
      rule("RAPIDS", "*", "librmm", "librmm's NVTX domain (rmm nvtx ranges)"),
      rule("Hugging Face tokenizers", "*", "tokenizers",
           "ranges opened around Hugging Face tokenizers' calls in a domain named after it: its `decode` is "
           "detokenisation, not an engine's decode step"),
      rule("PyTorch", "aten::*", std::nullopt, "ATen operators' RecordFunction names, as NVTX under emit_nvtx"),
      rule("PyTorch", "prim::*", std::nullopt, "TorchScript primitives' RecordFunction names"),
      rule("PyTorch", "c10d::*", std::nullopt, "torch.distributed collectives' RecordFunction names"),
      rule("PyTorch", "autograd::*", std::nullopt,
           "the autograd engine's RecordFunction names (\"autograd::engine::evaluate_function: MmBackward0\")"),
      rule("PyTorch", "*, seq = *", std::nullopt, emit_nvtx),
      rule("PyTorch", "*, op_id = *", std::nullopt, emit_nvtx),
      rule("PyTorch", "*, sizes = *", std::nullopt, emit_nvtx + " (record_shapes=True)"),
      rule("PyTorch", "Torch-Compiled Region*", std::nullopt, "torch.compile's record_function around a compiled frame"),
      rule("PyTorch", "CompiledFunction*", std::nullopt, "torch.compile's autograd function's record_function"),
      rule("PyTorch", "## Call CompiledFxGraph*", std::nullopt, "Inductor's record_function around a compiled graph"),
      rule("Triton", "triton_*", std::nullopt,
           "Inductor names the record_function of each generated Triton kernel after it (triton_poi_, triton_red_, "
           "triton_per_, triton_tem_: torch/_inductor/runtime/triton_heuristics.py)"),
  };
}

}  // namespace

bool matches_name_pattern(std::string_view pattern, std::string_view name) {
  // Greedy with one backtrack point, the last `*` seen: linear in practice, never exponential.
  std::size_t p = 0, n = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<LibraryRangeRule> parse_ignore_range(std::string_view entry) {
  const auto fail = [&](const std::string& why) -> Result<LibraryRangeRule> {
    return make_error(ErrorCode::invalid_argument, "run.ignore_ranges entry \"" + std::string(entry) + "\" " + why,
                      "write NAME or NAME@DOMAIN, * for any run of characters: \"warmup\", \"helper_*\", \"*@mylib\"",
                      "run.ignore_ranges");
  };
  const auto at = entry.find('@');
  const std::string_view name = entry.substr(0, at);
  if (name.empty()) return fail("has no range name (use * for every name)");
  LibraryRangeRule parsed{"run.ignore_ranges", std::string(name), std::nullopt, "run.ignore_ranges"};
  if (at == std::string_view::npos) return parsed;
  const std::string_view domain = entry.substr(at + 1);
  if (domain.empty()) return fail("ends in '@' without a domain (use NAME@* for any domain, NAME alone too)");
  if (domain.find('@') != std::string_view::npos) return fail("has more than one '@'");
  if (domain != "*") parsed.domain = std::string(domain);
  return parsed;
}

const std::vector<LibraryRangeRule>& builtin_library_range_rules() {
  static const std::vector<LibraryRangeRule> rules = make_builtin_rules();
  return rules;
}

LibraryRanges::LibraryRanges() : rules_(builtin_library_range_rules()) {}

Result<LibraryRanges> LibraryRanges::with_ignored(const std::vector<std::string>& ignore_ranges) {
  LibraryRanges ranges;
  for (const auto& entry : ignore_ranges) {
    auto parsed = parse_ignore_range(entry);
    if (!parsed) return parsed.error();
    ranges.rules_.push_back(std::move(parsed.value()));
  }
  return ranges;
}

std::optional<std::string> LibraryRanges::library_of(std::string_view name, std::string_view domain) const {
  const auto found = std::find_if(rules_.begin(), rules_.end(), [&](const LibraryRangeRule& one) {
    return (!one.domain || *one.domain == domain) && matches_name_pattern(one.name_pattern, name);
  });
  if (found == rules_.end()) return std::nullopt;
  return found->library;
}

}  // namespace llmprof
