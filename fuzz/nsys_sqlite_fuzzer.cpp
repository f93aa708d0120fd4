// The timeline engine (nsys SQLite reader + stage figures) on a mutated SQLite file. Most inputs are
// rejected by SQLite itself; seeds from tests/data/nsys-sqlite drive the schema checks and the passes.
//
// Invariants: no crash / leak / UB; every error names the input file; on success every stage has
// instances, ordered percentiles, a busy fraction within [0, 1] and GPU busy time within its span.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_support.hpp"
#include "llmprof/timeline.hpp"

namespace {

// SQLite reads files, not memory: one file per fuzzing process, rewritten for each input, and its
// directory removed when the process exits normally.
class InputFile {
 public:
  InputFile()
      : directory_(std::filesystem::temp_directory_path() / ("llmprof-fuzz-sqlite-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(directory_);
  }
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The input as the file's whole content. The name is kSourceName so errors can be checked for it.
  std::filesystem::path write(const std::uint8_t* data, std::size_t size) const {
    const auto file = directory_ / llmprof::fuzz::kSourceName;
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return file;
  }

 private:
  std::filesystem::path directory_;
};

void check_stage(const llmprof::TimelineStage& stage) {
  const auto& duration = stage.cpu_duration;
  const std::string name = stage.qualified_name();
  LLMPROF_FUZZ_CHECK(duration.count > 0 && static_cast<std::size_t>(duration.count) == stage.instances.size(), name);
  LLMPROF_FUZZ_CHECK(
      duration.p50_ns <= duration.p90_ns && duration.p90_ns <= duration.p99_ns && duration.p99_ns <= duration.max_ns,
      name);
  LLMPROF_FUZZ_CHECK(!stage.gpu_busy_fraction || (*stage.gpu_busy_fraction >= 0 && *stage.gpu_busy_fraction <= 1),
                     name);
  LLMPROF_FUZZ_CHECK(stage.gpu_busy_ns >= 0 && stage.gpu_busy_ns <= stage.span_ns, name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const InputFile input;
  const auto report = llmprof::analyze_timeline(input.write(data, size));
  LLMPROF_FUZZ_CHECK_ERROR(report);
  if (!report) return 0;
  for (const auto& stage : report->stages) check_stage(stage);
  return 0;
}
