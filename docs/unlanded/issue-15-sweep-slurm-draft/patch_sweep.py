# Run from the root of the checkout being patched (apply.sh does).
p='apps/deep-profile/command_sweep.cpp'
s=open(p).read()
def rep(a,b):
    global s
    assert a in s, a[:70]
    s=s.replace(a,b,1)
rep('''    "                          [--set KEY=VALUE]... [--quiet] [-- CMD ARGS...]\\n\\n"''','''    "                          [--set KEY=VALUE]... [--quiet] [-- CMD ARGS...]\\n"
    "       deep-profile sweep --plan FILE [--sweep-dir SWEEP] --point-index I | --merge | --executor slurm [--submit]\\n\\n"''')
rep('''    "every point; a point's overrides come last.\\n\\n"''','''    "every point; a point's overrides come last.\\n"
    "With --plan, --point-index I runs point I alone into SWEEP/point-<I>/ (SWEEP: --sweep-dir, else\\n"
    "<runs_root>/sweep-<plan name>); a point already finished there is not run again. --merge writes SWEEP/index.*\\n"
    "from the point directories, listing points without a run as failed. --executor slurm writes SWEEP/sweep.sbatch\\n"
    "(a job array, one GPU per task, at most --concurrency K at once) and SWEEP/merge.sbatch; --submit submits both\\n"
    "(the merge job with --dependency=afterany on the array). --executor local (the default) runs every point here.\\n\\n"''')
rep('''  bool quiet = false;
  std::vector<std::string> workload;
};''','''  bool quiet = false;
  std::vector<std::string> workload;
  std::string sweep_directory;                // --sweep-dir
  std::optional<std::size_t> point_index;     // --point-index
  bool merge = false;                         // --merge
  std::string executor = "local";             // --executor local|slurm
  bool submit = false;                        // --submit
  std::optional<std::size_t> concurrency;     // --concurrency
};''')
rep('''      ("quiet,q", po::bool_switch(&options.quiet), "no progress lines");''','''      ("quiet,q", po::bool_switch(&options.quiet), "no progress lines")
      ("sweep-dir", po::value(&options.sweep_directory), "SWEEP for --point-index/--merge/--executor slurm")
      ("point-index", po::value<std::size_t>(), "run only this point (0-based) into SWEEP/point-<I>/")
      ("merge", po::bool_switch(&options.merge), "write SWEEP/index.* from SWEEP/point-*/")
      ("executor", po::value(&options.executor), "local (default: every point here) or slurm (a job array)")
      ("submit", po::bool_switch(&options.submit), "with --executor slurm: submit the array and the merge job")
      ("concurrency", po::value<std::size_t>(), "with --executor slurm: at most this many array tasks at once");''')
rep('''  options.base = selection.value();
  return options;
}''','''  options.base = selection.value();
  if (values.count("point-index")) options.point_index = values["point-index"].as<std::size_t>();
  if (values.count("concurrency")) options.concurrency = values["concurrency"].as<std::size_t>();
  if (options.executor != "local" && options.executor != "slurm") {
    std::cerr << "deep-profile sweep: --executor must be local or slurm, not '" << options.executor << "'\\n";
    exit = exit_usage;
    return std::nullopt;
  }
  const bool distributed = options.point_index || options.merge || options.executor == "slurm";
  if (distributed && options.plan_file.empty()) {
    std::cerr << "deep-profile sweep: --point-index, --merge and --executor slurm need --plan FILE (every task reads the same plan)\\n";
    exit = exit_usage;
    return std::nullopt;
  }
  if ((options.submit || options.concurrency) && options.executor != "slurm") {
    std::cerr << "deep-profile sweep: --submit and --concurrency go with --executor slurm\\n";
    exit = exit_usage;
    return std::nullopt;
  }
  return options;
}

// --point-index, --merge and --executor slurm: the plan's points in SWEEP/point-<I>/.
int distributed_sweep(const SweepOptions& options, const llmprof::SweepPlan& plan, const llmprof::DeepProfileConfig& base_config) {
  SweepJob job;
  job.plan = plan;
  job.plan_file = options.plan_file;
  job.sweep_directory = options.sweep_directory.empty() ? default_sweep_directory(base_config.run.runs_root, options.plan_file)
                                                        : fs::path(options.sweep_directory);
  job.sweep_directory = fs::absolute(job.sweep_directory);
  job.base = options.base;
  job.workload = options.workload;
  job.quiet = options.quiet;
  if (options.point_index) return run_sweep_point(job, *options.point_index);
  if (options.merge) return merge_sweep_points(job);
  return write_slurm_sweep(job, options.concurrency, options.submit);
}''')
rep('''  llmprof::init_logging({llmprof::LogLevel::error, options->quiet, nullptr});
  auto runner = llmprof::make_system_process_runner();''','''  llmprof::init_logging({llmprof::LogLevel::error, options->quiet, nullptr});
  if (options->point_index || options->merge || options->executor == "slurm") return distributed_sweep(*options, *plan, *base_config);
  auto runner = llmprof::make_system_process_runner();''')
rep('''#include "llmprof/sweep.hpp"''','''#include "llmprof/sweep.hpp"
#include "sweep_executors.hpp"''')
open(p,'w').write(s)
