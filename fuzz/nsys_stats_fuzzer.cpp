// Every `nsys stats` report parser (2025.3 and 2022.4 layouts) over the same input. Each parser looks for its own
// header, so a seed from one report drives that parser deep while the others exercise header rejection.
//
// Invariants: no crash / leak / UB; every error names the input.
#include "fuzz_support.hpp"
#include "llmprof/nsys_stats.hpp"

namespace {

template <typename Parse>
void run(const std::uint8_t* data, std::size_t size, Parse parse) {
  auto in = llmprof::fuzz::as_stream(data, size);
  const auto rows = parse(in, llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(rows);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(data, size,
      [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_kernel_summary(in, name); });
  run(data, size, [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_nvtx_summary(in, name); });
  run(data, size,
      [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_nvtx_kernel_summary(in, name); });
  run(data, size,
      [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_nvtx_gpu_projection(in, name); });
  run(data, size,
      [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_cuda_api_summary(in, name); });
  run(data, size,
      [](std::istream& in, const std::string& name) { return llmprof::parse_nsys_gpu_memory_time(in, name); });
  run(data, size,  // nsys 2022.4's per-instance nvtxgpuproj
      [](std::istream& in, const std::string& name) {
        return llmprof::parse_nsys_nvtx_gpu_projection_trace(in, name);
      });
  return 0;
}
