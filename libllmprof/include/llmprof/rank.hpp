// Which rank of a multi-process launch this process is, from the variables launchers set.
//
// Launchers name ranks differently: torchrun sets RANK/LOCAL_RANK/WORLD_SIZE, mpirun (Open MPI)
// OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE, PMIx-based launches PMIX_RANK, and srun
// SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS. They also nest: `mpirun` inside an `sbatch` job
// inherits the batch step's SLURM_PROCID (0 on every rank), so the innermost launcher must win.
#pragma once

#include <map>
#include <string>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// The launcher family whose variables named the rank.
enum class RankSource { torchrun, open_mpi, pmix, slurm };
LLMPROF_API const char* to_string(RankSource source) noexcept;

struct LLMPROF_API RankIdentity {
  int rank = 0;        // global rank, 0 <= rank < world_size
  int local_rank = 0;  // rank on this host (the GPU a launcher usually maps it to)
  int world_size = 1;
  RankSource source = RankSource::slurm;
  // The variables read, e.g. "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=2".
  std::string evidence;
};

// Resolves the rank from `environment` (name -> value). Precedence, innermost launcher first:
// torchrun (RANK + WORLD_SIZE) > Open MPI (OMPI_COMM_WORLD_RANK) > PMIX_RANK > SLURM_PROCID.
// A family that is present must be complete and consistent (integers, rank < world size);
// otherwise, and when no family is present, the Error names the variables and the fix.
LLMPROF_API Result<RankIdentity> resolve_rank(const std::map<std::string, std::string>& environment);

// The same over this process's environment (::environ).
LLMPROF_API Result<RankIdentity> resolve_rank_from_process_environment();

}  // namespace llmprof
