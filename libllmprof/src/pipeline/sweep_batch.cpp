// sweep.sbatch and merge.sbatch for `deep-profile sweep --executor slurm`, and their submission
// (see sweep_batch.hpp).
#include <sys/stat.h>

#include <sstream>

#include "core/atomic_file.hpp"
#include "core/text.hpp"
#include "llmprof/shell_quote.hpp"
#include "llmprof/sweep.hpp"
#include "llmprof/sweep_batch.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

constexpr std::chrono::seconds kSbatchTimeout{60};  // sbatch only talks to the controller

fs::path logs_of(const SweepBatchRequest& request) { return request.sweep_directory / "logs"; }

// `deep-profile sweep --plan F --sweep-dir SWEEP <shared arguments>`, what both scripts run.
std::string sweep_command(const SweepBatchRequest& request) {
  std::vector<std::string> argv = {request.deep_profile.string(), "sweep",       "--plan",
                                   request.plan_file.string(),    "--sweep-dir", request.sweep_directory.string()};
  argv.insert(argv.end(), request.shared_arguments.begin(), request.shared_arguments.end());
  return join_shell_command(argv);
}

// The #SBATCH lines both scripts share. sbatch reads these lines itself, not through a shell, so
// the paths in them are written bare (write_sweep_batch_scripts refuses paths they cannot hold).
void write_common_directives(std::ostringstream& script, const SweepBatchRequest& request, const std::string& job_name,
                             const std::string& log_name) {
  script << "#SBATCH --job-name=" << job_name << "\n"
         << "#SBATCH --chdir=" << request.working_directory.string() << "\n"
         << "#SBATCH --output=" << (logs_of(request) / log_name).string() << "\n";
}

// Where a path cannot go into an #SBATCH line: blanks end the value, and '%' starts one of
// Slurm's file name patterns (%a, %j) in --output.
Result<void> check_directive_path(const fs::path& path, const std::string& what) {
  const std::string text = path.string();
  if (!path.is_absolute()) {
    return make_error(ErrorCode::invalid_argument, what + " must be an absolute path for the batch scripts: " + text,
                      "", text);
  }
  if (text.find_first_of(" \t\n\r%\"'") != std::string::npos) {
    return make_error(ErrorCode::invalid_argument,
                      what + " '" + text + "' cannot be written into an #SBATCH line (blank, quote or %)",
                      "choose a directory whose path has none of these characters (e.g. --sweep-dir)", text);
  }
  return {};
}

Result<void> check_request(const SweepBatchRequest& request) {
  if (request.points == 0) {
    return make_error(ErrorCode::invalid_argument, "the sweep plan has no points, so there is no job array to write",
                      "add [[point]] tables to the plan");
  }
  if (request.concurrency && *request.concurrency == 0) {
    return make_error(ErrorCode::invalid_argument,
                      "--concurrency must be at least 1 (at most K array tasks run at once)", "", "0");
  }
  if (auto checked = check_directive_path(request.sweep_directory, "the sweep directory"); !checked) return checked;
  if (auto checked = check_directive_path(request.working_directory, "the working directory"); !checked) return checked;
  for (const auto& [path, what] :
       {std::pair{request.deep_profile, "deep-profile"}, std::pair{request.plan_file, "the plan file"}}) {
    if (!path.is_absolute()) {
      return make_error(ErrorCode::invalid_argument,
                        std::string(what) + " must be an absolute path for the batch scripts: " + path.string(), "",
                        path.string());
    }
  }
  return {};
}

Result<void> write_script(const fs::path& path, const std::string& text) {
  if (auto written = detail::write_file_atomically(path, text); !written) return written;
  if (::chmod(path.c_str(), 0755) != 0) {
    return make_error(ErrorCode::io_error, "could not make " + path.string() + " executable",
                      "check the permissions of its directory", path.string());
  }
  return {};
}

// `sbatch --parsable ARGS`: the job id, or why there is none.
Result<std::string> run_sbatch(ProcessRunner& runner, const std::string& sbatch,
                               const std::vector<std::string>& arguments) {
  ProcessSpec spec;
  spec.argv = {sbatch, "--parsable"};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  std::string out, err;
  spec.on_stdout_line = [&out](const std::string& line) { out += line + "\n"; };
  spec.on_stderr_line = [&err](const std::string& line) { err += line + "\n"; };
  spec.timeout = kSbatchTimeout;
  const std::string command = join_shell_command(spec.argv);
  auto outcome = runner.run(spec);
  if (!outcome) {
    return make_error(ErrorCode::process_failed, "could not run sbatch: " + outcome.error().message,
                      "install slurm-client, or submit from a login node of the cluster", command);
  }
  if (!outcome->succeeded()) {
    const std::string words = err.empty() ? out : err;
    return make_error(ErrorCode::process_failed, "sbatch refused the job (" + outcome->describe() + "): " + words,
                      "check that `sinfo` lists a partition and that the cluster can give one GPU per task (--gpus=1)",
                      command);
  }
  return parse_sbatch_job_id(out);
}

}  // namespace

std::string render_sweep_array_script(const SweepBatchRequest& request) {
  const fs::path sweep = request.sweep_directory;
  std::ostringstream script;
  script
      << "#!/bin/bash\n"
      << "# deep-profile sweep as a Slurm job array: task I runs point I of the plan into "
      << (sweep / "point-I").string() << "/.\n"
      << "# A finished point is not run again, so submitting this script again resumes the sweep. Submit it with the\n"
      << "# merge job, which indexes the points once every task has ended, failed ones included (afterany):\n"
      << "#   array=$(sbatch --parsable " << quote_shell_argument((sweep / "sweep.sbatch").string())
      << ") && sbatch --dependency=afterany:$array " << quote_shell_argument((sweep / "merge.sbatch").string()) << "\n";
  write_common_directives(script, request, request.job_name, "point-%a.out");
  script << "#SBATCH --array=0-" << request.points - 1;
  if (request.concurrency) script << "%" << *request.concurrency;
  script << "\n#SBATCH --gpus=1\n"
         << "exec " << sweep_command(request) << " --point-index \"$SLURM_ARRAY_TASK_ID\"";
  if (!request.workload.empty()) script << " -- " << join_shell_command(request.workload);
  script << "\n";
  return script.str();
}

std::string render_sweep_merge_script(const SweepBatchRequest& request) {
  std::ostringstream script;
  script << "#!/bin/bash\n"
         << "# Writes " << (request.sweep_directory / "index.md").string()
         << " (and .html, .json) from the point directories once\n"
         << "# every task of the sweep's job array has ended (submitted with --dependency=afterany:<array id>).\n";
  write_common_directives(script, request, request.job_name + "-merge", "merge.out");
  script << "exec " << sweep_command(request) << " --merge\n";
  return script.str();
}

Result<SweepBatchScripts> write_sweep_batch_scripts(const SweepBatchRequest& request) {
  if (auto checked = check_request(request); !checked) return checked.error();
  SweepBatchScripts scripts{request.sweep_directory / "sweep.sbatch", request.sweep_directory / "merge.sbatch",
                            logs_of(request)};
  std::error_code error;
  fs::create_directories(scripts.logs_directory, error);
  if (error) {
    return make_error(ErrorCode::io_error,
                      "could not create " + scripts.logs_directory.string() + ": " + error.message(),
                      "choose a writable --sweep-dir (on a cluster: a file system every node shares)",
                      scripts.logs_directory.string());
  }
  if (auto written = write_script(scripts.array_script, render_sweep_array_script(request)); !written)
    return written.error();
  if (auto written = write_script(scripts.merge_script, render_sweep_merge_script(request)); !written)
    return written.error();
  return scripts;
}

Result<std::string> parse_sbatch_job_id(std::string_view output) {
  const std::string id(detail::trim(output.substr(0, output.find_first_of(";\n"))));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return make_error(ErrorCode::parse_error, "sbatch --parsable printed no job id: '" + std::string(output) + "'",
                      "check that sbatch works here (`sinfo` lists a partition) and what `squeue --me` shows",
                      std::string(output));
  }
  return id;
}

Result<SweepSubmission> submit_sweep_batch(const SweepBatchScripts& scripts, ProcessRunner& runner,
                                           const std::string& sbatch) {
  if (find_executable(sbatch).empty()) {
    return make_error(ErrorCode::process_failed, "sbatch (Slurm's submit command) is not on PATH",
                      "install slurm-client or submit from a login node of the cluster; the scripts are written: " +
                          scripts.array_script.string() + ", " + scripts.merge_script.string() +
                          " (without Slurm, `--executor local` runs every point here)",
                      sbatch);
  }
  SweepSubmission submission;
  auto array = run_sbatch(runner, sbatch, {scripts.array_script.string()});
  if (!array) return array.error();
  submission.array_job_id = array.value();
  auto merge =
      run_sbatch(runner, sbatch, {"--dependency=afterany:" + submission.array_job_id, scripts.merge_script.string()});
  if (!merge) {
    Error error = merge.error();
    error.message =
        "the job array " + submission.array_job_id + " was submitted, but its merge job was not: " + error.message;
    error.hint = "submit it by hand: sbatch --dependency=afterany:" + submission.array_job_id + " " +
                 scripts.merge_script.string() + " (or stop the array: scancel " + submission.array_job_id + ")";
    return error;
  }
  submission.merge_job_id = merge.value();
  return submission;
}

}  // namespace llmprof
