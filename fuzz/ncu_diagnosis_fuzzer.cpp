// diagnose_ncu_output / ncu_output_error over arbitrary console output.
//
// Invariants: no crash / UB / stack exhaustion (std::regex); counts are consistent with the text;
// an output with ==ERROR== lines or no profiled kernel turns into an Error with a message. Each line through
// parse_ncu_connected_process: a pid is only read from a Connected line, and is one Linux can have (the pass end
// signals the processes it names).
#include <algorithm>

#include "fuzz_support.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/ncu_progress.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = llmprof::fuzz::as_text(data, size);
  const auto diagnosis = llmprof::diagnose_ncu_output(text);
  LLMPROF_FUZZ_CHECK(diagnosis.profiled_kernels >= 0 && diagnosis.connected_processes >= 0, "negative count");
  LLMPROF_FUZZ_CHECK(diagnosis.errors.empty() || text.find("==ERROR==") != std::string_view::npos,
                     "errors without ==ERROR== in the text");
  const auto error = llmprof::ncu_output_error(diagnosis, "--kernel-name regex:gemm");
  if (diagnosis.has_errors() || diagnosis.no_kernels_profiled)
    LLMPROF_FUZZ_CHECK(error.has_value() && !error->message.empty(), "errors in the output but no Error");
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    if (const auto pid = llmprof::parse_ncu_connected_process(line)) {
      LLMPROF_FUZZ_CHECK(*pid > 0 && *pid <= (1 << 22), "a pid outside Linux's range");
      LLMPROF_FUZZ_CHECK(line.find("==PROF== Connected to process ") != std::string_view::npos,
                         "a pid from a line that is not ncu's Connected line");
    }
    start = end + 1;
  }
  return 0;
}
