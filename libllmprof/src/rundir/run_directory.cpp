// RunDirectory: creating, opening and recording one MAIN directory per profiling run.
#include "llmprof/run_directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/file_text.hpp"
#include "core/json_pretty.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/run_layout.hpp"
#include "rundir/run_lock.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

constexpr int kGeneratedIdAttempts = 16;

constexpr const char* kSpaceReserveName = ".space-reserve";

// Regular files under MAIN (relative path, size), sorted; hidden names (".x": the temporaries of
// atomic writes, the space reserve) are llmprof's own scaffolding, not part of the run.
std::vector<std::pair<std::string, std::uint64_t>> files_on_disk(const fs::path& main) {
  std::vector<std::pair<std::string, std::uint64_t>> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(main, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end; it.increment(error)) {
    std::error_code size_error;
    if (it->path().filename().string().front() == '.' || !it->is_regular_file(size_error)) continue;
    const auto size = it->file_size(size_error);
    files.emplace_back(it->path().lexically_relative(main).string(), size_error ? 0 : size);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Error io_error(const std::error_code& error, const std::string& what, const fs::path& path) {
  return detail::io_error_from_errno(error.value(), what, path);
}

Result<void> check_run_id(const std::string& run_id) {
  const bool valid_chars = std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
  if (run_id.empty() || run_id.size() > 128 || !valid_chars || run_id.front() == '.') {
    return make_error(ErrorCode::invalid_argument, "run id '" + run_id + "' is not a valid directory name",
                      "use letters, digits, '-', '_' and '.' (not first), at most 128 characters", run_id);
  }
  return {};
}

// The harness that runs deep-profile owns an outputs/ directory; runs must never land in it.
Result<void> check_runs_root(const fs::path& root) {
  fs::path normal = root.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "outputs/" -> "outputs"
  std::error_code ignored;
  const fs::path resolved = fs::weakly_canonical(root, ignored);
  if (normal.filename() == "outputs" || (!ignored && resolved.filename() == "outputs")) {
    return make_error(ErrorCode::invalid_argument, "the runs root may not be a directory named outputs/",
                      "choose another runs root, e.g. runs/ (the default)", root.string());
  }
  return {};
}

// Makes <root>/<id>; already_exists when taken (never reuses a directory).
Result<void> make_run_directory(const fs::path& path) {
  std::error_code error;
  if (fs::create_directory(path, error)) return {};
  if (error) {
    Error failure = io_error(error, "could not create the run directory", path);
    if (failure.hint.empty()) failure.hint = "choose a writable runs root";
    return failure;
  }
  return make_error(ErrorCode::already_exists, "run directory " + path.string() + " already exists",
                    "choose another run id; an existing run is never overwritten", path.string());
}

Result<fs::path> make_unique_run_directory(const RunDirectoryOptions& options, const Clock& clock) {
  if (!options.run_id.empty()) {
    if (auto valid = check_run_id(options.run_id); !valid) return valid.error();
    const fs::path path = options.runs_root / options.run_id;
    if (auto made = make_run_directory(path); !made) return made.error();
    return path;
  }
  // Generated ids differ in 24 random bits; retry a few times on the rare clash.
  for (int attempt = 0; attempt < kGeneratedIdAttempts; ++attempt) {
    const fs::path path = options.runs_root / generate_run_id(clock);
    auto made = make_run_directory(path);
    if (made) return path;
    if (made.error().code != ErrorCode::already_exists) return made.error();
  }
  return make_error(ErrorCode::already_exists, "could not find an unused run id under " + options.runs_root.string(),
                    "pass an explicit run id", options.runs_root.string());
}

// Rejects relative paths that would leave MAIN ("../x", "/etc/x").
Result<fs::path> inside(const fs::path& main, const fs::path& relative) {
  const fs::path normal = relative.lexically_normal();
  if (relative.empty() || normal.is_absolute() || (!normal.empty() && *normal.begin() == "..")) {
    return make_error(ErrorCode::invalid_argument, "path '" + relative.string() + "' is not inside the run directory",
                      "pass a path relative to MAIN, e.g. nsys/cmd.txt", relative.string());
  }
  return main / normal;
}

}  // namespace

std::string generate_run_id(const Clock& clock) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(clock.wall_now());
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  static thread_local std::mt19937 generator{std::random_device{}()};
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06x", static_cast<unsigned>(generator() & 0xFFFFFFu));
  return std::string(stamp) + "-" + suffix;
}

bool is_generated_run_id(std::string_view name) {
  // YYYYMMDDTHHMMSSZ-xxxxxx
  if (name.size() != 23 || name[8] != 'T' || name[15] != 'Z' || name[16] != '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i == 8 || i == 15 || i == 16) continue;
    const char c = name[i];
    const bool digit = c >= '0' && c <= '9';
    if (i < 15 ? !digit : !(digit || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Result<RunDirectory> RunDirectory::create(const RunDirectoryOptions& options, const Clock& clock) {
  if (auto root_ok = check_runs_root(options.runs_root); !root_ok) return root_ok.error();
  if (options.keep_newest_runs && *options.keep_newest_runs < 1) {
    return make_error(ErrorCode::invalid_argument, "keep_newest_runs must be at least 1 (it counts the new run)",
                      "set it to 1 or more, or leave it unset to keep every run");
  }
  std::error_code error;
  fs::create_directories(options.runs_root, error);
  if (error) {
    Error failure = io_error(error, "could not create the runs root", options.runs_root);
    failure.hint =
        "choose a writable runs root (" + (failure.hint.empty() ? std::string("check the path") : failure.hint) + ")";
    return failure;
  }
  auto path = make_unique_run_directory(options, clock);
  if (!path) return path.error();

  RunDirectory run;
  run.path_ = std::move(path.value());
  // Locked before run.json exists: retention only considers directories with a run.json, so it
  // can never see this run unlocked.
  auto lock = detail::RunLock::acquire(run.path_ / detail::kRunLockName);
  if (!lock) return lock.error();
  run.lock_ = std::make_shared<detail::RunLock>(std::move(lock.value()));
  for (const fs::path& sub : {RunLayout::stage1_directory(), RunLayout::nsys_directory(), RunLayout::ncu_directory(),
                              RunLayout::analysis_directory()}) {
    fs::create_directory(run.path_ / sub, error);
    if (error) return io_error(error, "could not create", run.path_ / sub);
  }
  run.manifest_.run_id = run.path_.filename().string();
  run.manifest_.created_utc = format_utc_iso8601(clock.wall_now());
  if (auto written = run.write_manifest(clock); !written) return written.error();

  if (options.keep_newest_runs)
    run.retention_ = apply_retention(options.runs_root, *options.keep_newest_runs, run.path_);
  return run;
}

Result<void> check_main_directory(const fs::path& main_directory, const std::string& what_for) {
  std::error_code error;
  const auto status = fs::status(main_directory, error);
  const std::string hint = "pass the MAIN directory a deep-profile run created (runs/<run-id>) " + what_for;
  if (status.type() == fs::file_type::not_found)
    return make_error(ErrorCode::not_found, "run directory " + main_directory.string() + " does not exist", hint,
                      main_directory.string());
  if (error)
    return make_error(ErrorCode::io_error, "cannot read run directory " + main_directory.string() + ": " + error.message(),
                      "check its permissions and those of the directories above it", main_directory.string());
  if (status.type() != fs::file_type::directory) {
    const std::string parent = main_directory.parent_path().empty() ? "." : main_directory.parent_path().string();
    return make_error(ErrorCode::not_found,
                      main_directory.string() + " is a file, not a run directory",
                      hint + "; a file inside a run names its run as its directory, here " + parent,
                      main_directory.string());
  }
  return {};
}

Result<RunDirectory> RunDirectory::open(const fs::path& main_directory) {
  if (auto checked = check_main_directory(main_directory, "to open"); !checked) return checked.error();
  RunDirectory run;
  run.path_ = main_directory;
  auto manifest = read_manifest(main_directory);
  if (!manifest && manifest.error().code == ErrorCode::not_found) {
    run.manifest_.run_id = main_directory.filename().string();
    return run;
  }
  if (!manifest) return manifest.error();
  run.manifest_ = std::move(manifest.value());
  return run;
}

Result<RunManifest> read_manifest(const fs::path& main_directory) {
  const fs::path manifest_path = main_directory / RunLayout::manifest();
  std::error_code error;
  if (!fs::exists(manifest_path, error)) {
    return make_error(ErrorCode::not_found, main_directory.string() + " has no run.json",
                      "pass the MAIN directory of a deep-profile run (runs/<run-id>)", manifest_path.string());
  }
  const std::optional<std::string> text = detail::read_file_text(manifest_path);
  if (!text) return detail::io_error_from_errno(errno, "could not read", manifest_path);
  auto manifest = manifest_from_json(*text);
  if (!manifest) {
    Error failure = manifest.error();
    failure.subject = manifest_path.string();
    return failure;
  }
  return manifest;
}

Result<RunDirectory> RunDirectory::open_to_resume(const fs::path& main_directory) {
  std::error_code error;
  if (!fs::is_regular_file(main_directory / RunLayout::manifest(), error)) {
    return make_error(ErrorCode::not_found, main_directory.string() + " has no run.json, so it is not a run to resume",
                      "pass the MAIN directory of a deep-profile run (runs/<run-id>)", main_directory.string());
  }
  detail::RunLock lock;
  if (detail::try_lock_finished_run(main_directory, lock) == detail::RunLockState::held_elsewhere) {
    return make_error(ErrorCode::invalid_argument,
                      "another deep-profile still holds " + (main_directory / detail::kRunLockName).string() +
                          ": that run is still going",
                      "wait for it to finish or stop it (Ctrl-C keeps its artifacts), then resume",
                      main_directory.string());
  }
  auto run = open(main_directory);
  if (!run) return run.error();
  if (!lock.held()) {  // a run from before run.lock existed: lock it now, as create() does
    auto acquired = detail::RunLock::acquire(main_directory / detail::kRunLockName);
    if (!acquired) return acquired.error();
    lock = std::move(acquired.value());
  }
  run->lock_ = std::make_shared<detail::RunLock>(std::move(lock));
  return run;
}

StageRecord& RunDirectory::stage(const std::string& name) {
  auto found = std::find_if(manifest_.stages.begin(), manifest_.stages.end(),
                            [&](const StageRecord& stage) { return stage.name == name; });
  if (found != manifest_.stages.end()) return *found;
  StageRecord record;
  record.name = name;
  manifest_.stages.push_back(std::move(record));
  return manifest_.stages.back();
}

Result<void> RunDirectory::write_manifest(const Clock& clock) {
  manifest_.updated_utc = format_utc_iso8601(clock.wall_now());
  manifest_.total_bytes = 0;
  manifest_.files.clear();
  for (const auto& [relative, bytes] : files_on_disk(path_)) {
    manifest_.total_bytes += bytes;
    manifest_.files.push_back(relative);
  }
  auto written = detail::write_file_atomically(path_ / RunLayout::manifest(), manifest_to_json(manifest_));
  if (written || written.error().code != ErrorCode::no_space) return written;
  std::error_code ignored;
  if (!fs::remove(path_ / kSpaceReserveName, ignored)) return written;
  return detail::write_file_atomically(path_ / RunLayout::manifest(), manifest_to_json(manifest_));
}

Result<void> RunDirectory::reserve_space(std::uint64_t bytes) const {
  const fs::path reserve = path_ / kSpaceReserveName;
  const int fd = ::open(reserve.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return detail::io_error_from_errno(errno, "could not create the space reserve", reserve);
  const int error_number = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  ::close(fd);
  if (error_number != 0) {
    ::unlink(reserve.c_str());
    return detail::io_error_from_errno(error_number, "could not reserve space in", reserve);
  }
  return {};
}

void RunDirectory::release_space_reserve() const {
  std::error_code ignored;
  fs::remove(path_ / kSpaceReserveName, ignored);
}

Result<void> RunDirectory::write_text(const fs::path& relative, const std::string& content) const {
  auto target = inside(path_, relative);
  if (!target) return target.error();
  std::error_code error;
  fs::create_directories(target->parent_path(), error);
  if (error) return io_error(error, "could not create", target->parent_path());
  return detail::write_file_atomically(*target, content);
}

Result<void> RunDirectory::write_json(const fs::path& relative, const std::string& json_text) const {
  boost::system::error_code error;
  const boost::json::value value = detail::parse_json_text(json_text, error);
  if (error) {
    return make_error(ErrorCode::invalid_argument,
                      "refusing to write invalid JSON to " + relative.string() + ": " + error.message(),
                      "this is a bug in the caller that produced the JSON", relative.string());
  }
  return write_text(relative, detail::pretty_json(value));
}

Result<void> RunDirectory::write_inputs(const WorkloadRecord& workload) {
  manifest_.workload = workload;
  return write_text(RunLayout::inputs(), inputs_to_json(workload));
}

Result<void> RunDirectory::write_environment(const EnvironmentRecord& environment) const {
  return write_text(RunLayout::environment(), environment_to_json(environment));
}

std::uint64_t RunDirectory::total_bytes() const {
  std::uint64_t total = 0;
  for (const auto& file : files_on_disk(path_)) total += file.second;
  return total;
}

// `protect` (the run being created) is never removed, even when a skewed clock makes it look oldest.
Result<RetentionOutcome> apply_retention(const fs::path& runs_root, int keep, const fs::path& protect) {
  if (keep < 1)
    return make_error(ErrorCode::invalid_argument, "retention must keep at least one run", "pass keep >= 1");
  std::vector<fs::path> runs;
  std::error_code error;
  for (fs::directory_iterator it(runs_root, error), end; !error && it != end; it.increment(error)) {
    std::error_code ignored;
    if (it->is_directory(ignored) && !it->is_symlink(ignored) && is_generated_run_id(it->path().filename().string()) &&
        fs::is_regular_file(it->path() / RunLayout::manifest(), ignored)) {
      runs.push_back(it->path());
    }
  }
  if (error) return io_error(error, "could not list", runs_root);
  // Names start with the UTC timestamp, so name order is age order; newest last.
  std::sort(runs.begin(), runs.end());
  if (!protect.empty()) {
    const auto current = std::find(runs.begin(), runs.end(), protect);
    if (current != runs.end()) std::rotate(current, current + 1, runs.end());  // count it as newest
  }
  RetentionOutcome outcome;
  const std::size_t excess = runs.size() > static_cast<std::size_t>(keep) ? runs.size() - keep : 0;
  for (std::size_t i = 0; i < excess; ++i) {
    if (runs[i] == protect) continue;
    // Held while removing, so a run cannot be (re)opened for writing half-deleted.
    detail::RunLock lock;
    if (detail::try_lock_finished_run(runs[i], lock) == detail::RunLockState::held_elsewhere) {
      outcome.kept_unfinished.push_back(runs[i]);
      continue;
    }
    std::error_code remove_error;
    fs::remove_all(runs[i], remove_error);
    if (remove_error) {
      outcome.problems.push_back(io_error(remove_error, "could not remove old run", runs[i]).describe());
      continue;
    }
    outcome.removed.push_back(runs[i]);
  }
  return outcome;
}

}  // namespace llmprof
