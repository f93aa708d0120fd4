// A stage is ok only when every file it hands on (its record's artifacts) is usable: a profiler that
// exits 0 on a full disk leaves 0-byte exports behind (nsys 2022.4 on a 1.5 MB tmpfs: profile.sqlite and
// every summary_*.csv at 0 bytes, the write errors only in its log), and the stages after it would
// read nothing and say so far from the cause.
#include <fstream>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/text.hpp"
#include "pipeline/artifact_checks.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// Logs and command lists are a program's own output, which may be empty; they are not handed on.
bool may_be_empty(const fs::path& file) {
  const std::string extension = file.extension().string();
  return extension == ".log" || extension == ".txt";
}

bool is_nsys_summary(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.starts_with("summary_") && file.extension() == ".csv";
}

std::string first_bytes(const fs::path& file, std::size_t count) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(count, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

std::optional<std::string> unusable_artifact(const fs::path& main, const std::string& file) {
  const fs::path path = main / file;
  if (may_be_empty(path)) return std::nullopt;
  std::error_code error;
  if (fs::is_directory(path, error)) return std::nullopt;
  const auto size = fs::file_size(path, error);
  if (error) return file + " is missing (" + error.message() + ")";
  // nsys writes a zero-byte summary_<report>.csv for a report without rows: 2025.3.1 says "PROCESSED (EMPTY
  // RESULTS)" (cuda_gpu_mem_time_sum of a decode without memcpy, H100), 2022.4 "SKIPPED: ... does not contain
  // CUDA kernel data" (no GPU). A full disk leaves profile.sqlite at 0 bytes too, which is caught below.
  if (size == 0 && is_nsys_summary(path)) return std::nullopt;
  if (size == 0) return file + " is empty (0 bytes)";
  const std::string extension = path.extension().string();
  if (extension == ".csv") {
    const std::string head = first_bytes(path, 4096);
    if (is_blank(head.substr(0, head.find('\n')))) return file + " has no header line";
  } else if (extension == ".sqlite") {
    // Every SQLite 3 database starts with this 16-byte magic string (sqlite.org/fileformat.html).
    if (first_bytes(path, 16) != std::string("SQLite format 3\0", 16)) return file + " is not an SQLite database";
  } else if (extension == ".json") {
    const auto text = read_file_text(path);
    if (!text) return file + " cannot be read";
    if (auto parsed = parse_json_object(*text, path); !parsed) return file + " is not valid JSON";
  }
  return std::nullopt;
}

StageResult check_artifacts(const fs::path& main, const StageRecord& record, StageResult result) {
  if (result.status != StageStatus::ok) return result;
  std::string problems;
  for (const auto& file : record.artifacts) {
    if (auto problem = unusable_artifact(main, file)) problems += (problems.empty() ? "" : "; ") + *problem;
  }
  if (problems.empty()) return result;
  return StageResult::failed("the stage wrote nothing usable: " + problems +
                             " (a full disk does this: check the free space of run.runs_root and the stage's log)");
}

}  // namespace llmprof::detail
