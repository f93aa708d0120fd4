// Rank resolution: every launcher's variables, nesting (the stale SLURM_PROCID under mpirun in an
// sbatch job), and the errors for incomplete or inconsistent sets.
#include <catch2/catch.hpp>

#include "llmprof/rank.hpp"

using llmprof::RankSource;
using Environment = std::map<std::string, std::string>;

namespace {

struct ResolvedCase {
  const char* label;
  Environment environment;
  int rank;
  int local_rank;
  int world_size;
  RankSource source;
};

struct RefusedCase {
  const char* label;
  Environment environment;
  const char* message_part;  // a phrase the message must contain
  const char* subject_part;  // a phrase the subject must contain ("" for none)
};

}  // namespace

TEST_CASE("each launcher's variables resolve to its rank and local rank and world size") {
  const ResolvedCase entry = GENERATE(values<ResolvedCase>({
      {"torchrun",
       {{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}},
       3,
       1,
       4,
       RankSource::torchrun},
      {"mpirun",
       {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
       1,
       1,
       2,
       RankSource::open_mpi},
      {"srun", {{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}}, 5, 1, 8, RankSource::slurm},
      {"srun with only SLURM_NPROCS (older Slurm)",
       {{"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "0"}, {"SLURM_NPROCS", "3"}},
       2,
       0,
       3,
       RankSource::slurm},
      {"srun --mpi=pmix",
       {{"PMIX_RANK", "1"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "2"}},
       1,
       1,
       2,
       RankSource::pmix},
      // mpirun inside sbatch: the batch step's SLURM_PROCID=0 is on every rank; Open MPI's variables win.
      {"mpirun inside sbatch (stale SLURM_PROCID)",
       {{"SLURM_PROCID", "0"},
        {"SLURM_LOCALID", "0"},
        {"SLURM_NTASKS", "1"},
        {"OMPI_COMM_WORLD_RANK", "1"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "2"},
        {"PMIX_RANK", "1"}},
       1,
       1,
       2,
       RankSource::open_mpi},
      // torchrun inside an srun step: torchrun started this process, so its variables win.
      {"torchrun inside srun",
       {{"SLURM_PROCID", "0"},
        {"SLURM_LOCALID", "0"},
        {"SLURM_NTASKS", "1"},
        {"RANK", "1"},
        {"LOCAL_RANK", "1"},
        {"WORLD_SIZE", "2"}},
       1,
       1,
       2,
       RankSource::torchrun},
      {"single rank",
       {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "1"}},
       0,
       0,
       1,
       RankSource::slurm},
  }));
  CAPTURE(entry.label);
  auto resolved = llmprof::resolve_rank(entry.environment);
  REQUIRE(resolved);
  CHECK(resolved->rank == entry.rank);
  CHECK(resolved->local_rank == entry.local_rank);
  CHECK(resolved->world_size == entry.world_size);
  CHECK(resolved->source == entry.source);
  CHECK_FALSE(resolved->evidence.empty());
}

TEST_CASE("missing or incomplete or inconsistent rank variables are refused with the variable and the fix") {
  const RefusedCase entry = GENERATE(values<RefusedCase>({
      {"nothing set", {{"HOME", "/root"}}, "no launcher rank variables", ""},
      {"torchrun without WORLD_SIZE", {{"RANK", "1"}, {"LOCAL_RANK", "1"}}, "WORLD_SIZE is not", "RANK=1"},
      {"mpirun without local rank",
       {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
       "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_RANK=0"},
      {"rank not below world size",
       {{"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "2"}},
       "inconsistent",
       "SLURM_PROCID=2"},
      {"world size zero", {{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "0"}}, "inconsistent", "WORLD_SIZE=0"},
      {"not a number",
       {{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
       "not a non-negative integer",
       "OMPI_COMM_WORLD_RANK=one"},
      {"negative",
       {{"SLURM_PROCID", "-1"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "2"}},
       "not a non-negative integer",
       "-1"},
      {"trailing text",
       {{"RANK", "1x"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}},
       "not a non-negative integer",
       "RANK=1x"},
      {"PMIX_RANK without a size",
       {{"PMIX_RANK", "0"}, {"SLURM_LOCALID", "0"}},
       "SLURM_NTASKS or SLURM_NPROCS",
       "PMIX_RANK=0"},
  }));
  CAPTURE(entry.label);
  auto resolved = llmprof::resolve_rank(entry.environment);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message.find(entry.message_part) != std::string::npos);
  CHECK(resolved.error().subject.find(entry.subject_part) != std::string::npos);
  CHECK_FALSE(resolved.error().hint.empty());
}

TEST_CASE("launcher variables that disagree are an error naming both sets") {
  // `srun -n 2` with a leftover RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 exported: torchrun's variables won, both
  // tasks became "rank 0 of 1" and the second overwrote the first's files.
  const Environment leftover = {{"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "2"},
                                {"RANK", "0"},         {"LOCAL_RANK", "0"},    {"WORLD_SIZE", "1"}};
  auto resolved = llmprof::resolve_rank(leftover);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().code == llmprof::ErrorCode::invalid_argument);
  CHECK_THAT(resolved.error().message, Catch::Contains("srun says rank 1 of 2 (SLURM_PROCID=1") &&
                                           Catch::Contains("torchrun says rank 0 of 1 (RANK=0"));
  CHECK_THAT(resolved.error().hint, Catch::Contains("env -u RANK -u LOCAL_RANK -u WORLD_SIZE"));
  // The same leftover under Open MPI's mpirun -np 4 (rank 2).
  const Environment under_mpirun = {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                    {"OMPI_COMM_WORLD_SIZE", "4"}, {"RANK", "0"},
                                    {"LOCAL_RANK", "0"},           {"WORLD_SIZE", "1"}};
  REQUIRE_FALSE(llmprof::resolve_rank(under_mpirun));
}

TEST_CASE("a nesting that spans the outer launch resolves to the inner launcher and says what was outside") {
  // srun -n 2 torchrun --nnodes 2 --nproc-per-node 4: task 1 of srun runs ranks 4-7 of torchrun's 8.
  const Environment nested = {{"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "2"},
                              {"RANK", "5"},         {"LOCAL_RANK", "1"},    {"WORLD_SIZE", "8"}};
  auto resolved = llmprof::resolve_rank(nested);
  REQUIRE(resolved);
  CHECK(resolved->rank == 5);
  CHECK(resolved->source == RankSource::torchrun);
  CHECK_THAT(resolved->evidence, Catch::Contains("RANK=5") && Catch::Contains("outside it srun: SLURM_PROCID=1"));
  // The batch step of `sbatch --ntasks 8` (rank 0 of 8) running `mpirun -np 4`: a smaller inner world is
  // a real nesting there.
  const Environment batch = {{"SLURM_PROCID", "0"},         {"SLURM_LOCALID", "0"},
                             {"SLURM_NTASKS", "8"},         {"OMPI_COMM_WORLD_RANK", "3"},
                             {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}};
  auto in_batch = llmprof::resolve_rank(batch);
  REQUIRE(in_batch);
  CHECK(in_batch->rank == 3);
}

TEST_CASE("the process environment is read through the same rules") {
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  auto resolved = llmprof::resolve_rank_from_process_environment();
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  REQUIRE(resolved);
  CHECK(resolved->rank == 1);
  CHECK(resolved->world_size == 2);
}
