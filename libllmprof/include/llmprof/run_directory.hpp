// RunDirectory: one self-describing MAIN directory per profiling run, and its manifest run.json.
//
// Layout: <root>/<run-id>/ holds the files RunLayout names (run_layout.hpp). run.json is rewritten atomically (temp
// file + rename) after every stage change so a crash or Ctrl-C never leaves a run without its manifest.
//
// Order of this header: the calls a harness reading a run needs come first (read_manifest; the paths are
// RunLayout's), then the manifest's types, then RunDirectory (the pipeline's writer of a run, its lock and
// retention), then the JSON converters and environment readers those are built from.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <string_view>

#include "llmprof/capture_record.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/export.hpp"
#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/stage.hpp"  // StageStatus, StageRecord, RunStatus

namespace llmprof {

struct RunManifest;

// The calls a harness needs:
//   auto manifest = read_manifest(main);                           // status, each stage's record, the capture
//   const RunLayout layout(main);                                  // every file of MAIN by name
//   const auto report = layout.resolve(RunLayout::report_markdown());  // MAIN/report.md
//
// MAIN/run.json read and checked: the one reader of a run's manifest. Errors: not_found without a
// run.json, io_error when it cannot be read, parse_error (subject: the file) when it is not llmprof.run/1.
LLMPROF_API Result<RunManifest> read_manifest(const std::filesystem::path& main_directory);

// ---- The manifest (run.json) and its records. ----

// A file the workload consists of (its executable, a script named in argv), as it was when the run started:
// `run --resume` refuses to continue a run whose workload changed since.
struct LLMPROF_API FileFingerprint {
  std::string path;  // absolute
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;  // last modification, ns since the epoch
  bool operator==(const FileFingerprint&) const = default;
};

struct LLMPROF_API WorkloadRecord {
  std::vector<std::string> argv;
  std::filesystem::path working_directory;
  std::map<std::string, std::string> environment;  // overrides only
  // nullopt: recorded before fingerprints existed (such a run cannot be resumed).
  std::optional<std::vector<FileFingerprint>> files;
};

// One `deep-profile run --resume`: where it continued and what the stages it ran again had said before.
struct LLMPROF_API ResumptionRecord {
  std::string resumed_utc;
  std::string from_stage;
  std::string attempts_directory;  // relative to MAIN: the earlier files of the stages run again
  struct PreviousStage {
    std::string name;
    StageStatus status = StageStatus::pending;
    std::string reason;
  };
  std::vector<PreviousStage> previous;
};

struct LLMPROF_API RunManifest {
  std::string run_id;
  std::string created_utc;
  std::string updated_utc;
  RunStatus status = RunStatus::running;
  WorkloadRecord workload;
  std::vector<StageRecord> stages;
  std::uint64_t total_bytes = 0;  // size of everything under MAIN at the last write
  // Every file under MAIN at the last write (relative paths, sorted), whichever stage made it and
  // however the run ended; llmprof's own hidden temporaries (".name") are left out.
  std::vector<std::string> files;
  std::vector<ResumptionRecord> resumptions;  // in order; empty for a run never resumed
  // What the nsys stage captured (run.json "capture"); unset until it captured, and in runs recorded before
  // the record existed.
  std::optional<CaptureRecord> capture;
};

// ---- RunDirectory: the pipeline's writer of a run, with its lock and retention. ----

struct EnvironmentRecord;

struct LLMPROF_API RunDirectoryOptions {
  std::filesystem::path runs_root = "runs";  // must not be outputs/ (reserved by the harness)
  std::string run_id;                        // empty: generate "20261122T153122Z-a1b2c3"
  std::optional<int> keep_newest_runs;       // retention: delete older run directories under root
};

// What retention did: the old runs it deleted, and the old runs it kept because they are not
// finished (another deep-profile still holds their run.lock).
struct LLMPROF_API RetentionOutcome {
  std::vector<std::filesystem::path> removed;
  std::vector<std::filesystem::path> kept_unfinished;
  std::vector<std::string> problems;  // runs it could not remove, and why
};

class LLMPROF_API RunDirectory {
 public:
  // Creates <root>/<run-id> and its subdirectories, and locks MAIN/run.lock for as long as this
  // object (or a copy) lives, which marks the run as unfinished for retention. Errors: unwritable
  // root, run id taken (never overwritten), invalid run id characters, root named outputs/.
  static Result<RunDirectory> create(const RunDirectoryOptions& options, const Clock& clock);
  // Opens an existing run directory (for analyze/report); reads run.json when present.
  static Result<RunDirectory> open(const std::filesystem::path& main_directory);
  // open() with MAIN/run.lock taken, to continue the run (`run --resume`); Error(busy) when another
  // deep-profile still holds it, Error(not_found) without a run.json.
  static Result<RunDirectory> open_to_resume(const std::filesystem::path& main_directory);

  const std::filesystem::path& path() const { return path_; }
  RunLayout layout() const { return RunLayout(path_); }
  std::filesystem::path stage1_dir() const { return path_ / RunLayout::stage1_directory(); }
  std::filesystem::path nsys_dir() const { return path_ / RunLayout::nsys_directory(); }
  std::filesystem::path ncu_dir() const { return path_ / RunLayout::ncu_directory(); }
  std::filesystem::path analysis_dir() const { return path_ / RunLayout::analysis_directory(); }

  RunManifest& manifest() { return manifest_; }
  const RunManifest& manifest() const { return manifest_; }
  StageRecord& stage(const std::string& name);  // adds a pending record when absent
  StageRecord& stage(Stage stage) { return this->stage(std::string(to_string(stage))); }

  // Writes run.json atomically (temp + fsync + rename), refreshing updated_utc, total_bytes and
  // files. When the disk is full it gives up the space reserve (below) and tries once more, so the
  // run's last state still reaches run.json.
  Result<void> write_manifest(const Clock& clock);
  // Sets aside `bytes` on MAIN's file system (MAIN/.space-reserve) for write_manifest to fall back
  // on; release_space_reserve() gives it back at the end of the run.
  Result<void> reserve_space(std::uint64_t bytes) const;
  void release_space_reserve() const;
  // Writes a text file atomically under MAIN (relative path), e.g. "nsys/cmd.txt".
  Result<void> write_text(const std::filesystem::path& relative, const std::string& content) const;
  // JSON text is checked (invalid JSON is an invalid_argument error) and written indented.
  Result<void> write_json(const std::filesystem::path& relative, const std::string& json_text) const;
  // inputs.json ({"schema":"llmprof.inputs/1","argv","cwd","env"}); also records it in the manifest.
  Result<void> write_inputs(const WorkloadRecord& workload);
  // env.json (see environment_to_json).
  Result<void> write_environment(const EnvironmentRecord& environment) const;

  std::uint64_t total_bytes() const;
  // What retention did when create() was given keep_newest_runs (nothing otherwise), or why it
  // could not complete.
  const std::optional<Result<RetentionOutcome>>& retention() const { return retention_; }

 private:
  std::filesystem::path path_;
  RunManifest manifest_;
  std::shared_ptr<void> lock_;  // the run's run.lock, held while any copy of this object lives
  std::optional<Result<RetentionOutcome>> retention_;
};

// "20261122T153122Z-a1b2c3": UTC timestamp (sortable) + 6 hex characters.
LLMPROF_API std::string generate_run_id(const Clock& clock);
// True for names generate_run_id makes ("20261122T153122Z-a1b2c3"); retention touches only these.
LLMPROF_API bool is_generated_run_id(std::string_view name);
// Deletes the oldest run directories under root beyond `keep` (>= 1). Only directories with a
// generated-run-id name and a run.json are considered, `protect` never is, and a run whose
// run.lock is held (it is still going) is kept; it is locked while it is removed.
LLMPROF_API Result<RetentionOutcome> apply_retention(const std::filesystem::path& runs_root, int keep,
                                         const std::filesystem::path& protect = {});

// env.json: host, OS, GPUs (from nvidia-smi when present), CUDA_VISIBLE_DEVICES, tools.
struct LLMPROF_API GpuRecord {
  int index = 0;
  std::string name;
  std::string driver;
  std::int64_t memory_mib = 0;
};
struct LLMPROF_API EnvironmentRecord {
  std::string host;
  std::string os;
  std::vector<GpuRecord> gpus;
  std::optional<std::string> cuda_visible_devices;
  std::string tools_json = "{}";      // the probe's JSON, embedded as "tools"
  std::vector<std::string> problems;  // what could not be gathered, e.g. "nvidia-smi not found"
};
}  // namespace llmprof
