// The check of the files a stage hands on before it counts as ok.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "llmprof/run_directory.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// Why `file` (relative to `main`) is unusable, naming it: missing, 0 bytes, a CSV without a header line, an
// .sqlite without the SQLite magic, a .json that does not parse; nullopt when usable. Logs (.log, .txt)
// are not checked: a quiet program's output is legitimately empty.
std::optional<std::string> unusable_artifact(const std::filesystem::path& main, const std::string& file);
// `result`, or a failed result naming every unusable artifact of `record` when `result` is ok.
StageResult check_artifacts(const std::filesystem::path& main, const StageRecord& record, StageResult result);

}  // namespace llmprof::detail
