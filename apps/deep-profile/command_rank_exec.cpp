// deep-profile rank-exec: one rank's share of a stage, started by `deep-profile run --launcher`
// (or by hand under a launcher) as `LAUNCHER deep-profile rank-exec --run-directory MAIN --stage S -- CMD`.
#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>

#include "command.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/rank.hpp"
#include "llmprof/rank_launch.hpp"
#include "llmprof/stop_signal_watcher.hpp"

namespace deep_profile {
namespace po = boost::program_options;
namespace {

const char* usage_text =
    "usage: deep-profile rank-exec --run-directory MAIN --stage stage1|nsys|ncu [--ranks LIST] -- CMD ARGS...\n\n"
    "Runs this rank's share of a stage that `deep-profile run --launcher` planned: resolves the rank from the\n"
    "launcher's variables (RANK/LOCAL_RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, PMIX_RANK, SLURM_PROCID/LOCALID/NTASKS),\n"
    "runs the stage's profiler when the rank is in --ranks (all ranks when absent) and CMD bare otherwise, and\n"
    "writes MAIN/ranks/r<rank>/<stage>/{cmd.txt,output.log,status.json}. Where the plan samples GPU metrics,\n"
    "the rank claims one GPU under a lock per host (MAIN/ranks/gpu-metrics/): the one CUDA_VISIBLE_DEVICES names\n"
    "alone, else the one nsys lists under its local rank; status.json says which, or who samples it instead.\n\n"
    "exit codes: the workload's or profiler's; 2 bad request (no plan, no rank variables, rank outside the world);\n"
    "124 the rank ran past the stage timeout (its process tree was killed); 130 stopped by SIGINT/SIGTERM.\n";

int rank_exec_command(const std::vector<std::string>& args) {
  auto separator = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> own(args.begin(), separator);
  llmprof::RankExecRequest request;
  if (separator != args.end()) request.workload.assign(separator + 1, args.end());
  std::string main_directory, ranks;
  po::options_description description("options");
  description.add_options()("help,h", "this help")("run-directory", po::value(&main_directory)->required(),
                                                   "the run directory (MAIN)")(
      "stage", po::value(&request.stage)->required(), "stage1, nsys or ncu")("ranks", po::value(&ranks),
                                                                             "ranks that run the profiler");
  po::variables_map values;
  try {
    po::store(po::command_line_parser(own).options(description).run(), values);
    if (values.count("help")) {
      std::cout << usage_text << "\n" << description;
      return exit_ok;
    }
    po::notify(values);
  } catch (const po::error& error) {
    std::cerr << "deep-profile rank-exec: " << error.what() << "\n\n" << usage_text << description;
    return exit_usage;
  }
  if (request.workload.empty()) {
    std::cerr << "deep-profile rank-exec: no workload after --\n";
    return exit_usage;
  }
  request.main_directory = main_directory;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) request.cuda_visible_devices = visible;
  if (!ranks.empty()) {
    auto parsed = llmprof::parse_rank_list(ranks);
    if (!parsed) {
      std::cerr << "deep-profile rank-exec: " << parsed.error().describe() << "\n";
      return exit_usage;
    }
    request.ranks = parsed.value();
  }
  auto identity = llmprof::resolve_rank_from_process_environment();
  if (!identity) {
    std::cerr << "deep-profile rank-exec: " << identity.error().describe() << "\n";
    return exit_usage;
  }
  auto runner = llmprof::make_system_process_runner();
  // The launcher ends the other ranks with SIGTERM when one fails: stop the workload's tree and record it.
  auto watcher = llmprof::StopSignalWatcher::start([&runner](int) { runner->request_stop(); });
  if (!watcher) {
    std::cerr << "deep-profile rank-exec: " << watcher.error().describe() << "\n";
    return exit_not_ready;
  }
  auto result = llmprof::run_rank_exec(request, identity.value(), *runner);
  if (!result) {
    std::cerr << "deep-profile rank-exec (rank " << identity->rank << "): " << result.error().describe() << "\n";
    return exit_usage;
  }
  if (result->exit_code != 0) std::cerr << "deep-profile rank-exec: " << result->summary << "\n";
  return result->exit_code;
}

const CommandRegistrar registrar({"rank-exec",
                                  "one rank's share of a stage under a launcher (started by run --launcher)",
                                  rank_exec_command});

}  // namespace
}  // namespace deep_profile
