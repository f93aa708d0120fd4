// Rank resolution from launcher variables (see rank.hpp for the precedence and why).
#include "llmprof/rank.hpp"
#include "llmprof/choice.hpp"

#include <charconv>
#include <optional>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace llmprof {
namespace {

// The variables of one launcher family; local rank and size may have fallbacks.
struct RankVariables {
  RankSource source;
  const char* rank;
  std::vector<const char*> local_rank;  // first present wins
  std::vector<const char*> world_size;  // first present wins
  const char* fix;                      // how to get a consistent set
};

const std::vector<RankVariables>& families() {
  static const std::vector<RankVariables> table = {
      {RankSource::torchrun,
       "RANK",
       {"LOCAL_RANK"},
       {"WORLD_SIZE"},
       "launch with torchrun, which sets RANK, LOCAL_RANK and WORLD_SIZE together"},
      {RankSource::open_mpi,
       "OMPI_COMM_WORLD_RANK",
       {"OMPI_COMM_WORLD_LOCAL_RANK"},
       {"OMPI_COMM_WORLD_SIZE"},
       "launch with Open MPI's mpirun, which sets OMPI_COMM_WORLD_RANK, _LOCAL_RANK and _SIZE together"},
      // PMIx exports no size variable of its own; under `srun --mpi=pmix` Slurm's describe the job step.
      {RankSource::pmix,
       "PMIX_RANK",
       {"SLURM_LOCALID"},
       {"SLURM_NTASKS", "SLURM_NPROCS"},
       "launch with `srun --mpi=pmix`, which sets PMIX_RANK with SLURM_LOCALID and SLURM_NTASKS"},
      {RankSource::slurm,
       "SLURM_PROCID",
       {"SLURM_LOCALID"},
       {"SLURM_NTASKS", "SLURM_NPROCS"},
       "launch each rank with srun, which sets SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS together"},
  };
  return table;
}

std::optional<std::string> lookup(const std::map<std::string, std::string>& environment, const char* name) {
  auto found = environment.find(name);
  if (found == environment.end()) return std::nullopt;
  return found->second;
}

Result<int> parse_count(const std::string& name, const std::string& value, const RankVariables& family) {
  int parsed = -1;
  const auto* end = value.data() + value.size();
  auto [pointer, error] = std::from_chars(value.data(), end, parsed);
  if (error != std::errc() || pointer != end || parsed < 0) {
    return make_error(ErrorCode::invalid_argument,
                      name + "='" + value + "' is not a non-negative integer, so the rank cannot be resolved",
                      family.fix, name + "=" + value);
  }
  return parsed;
}

struct FoundVariable {
  std::string name;
  std::string value;
};

std::optional<FoundVariable> first_present(const std::map<std::string, std::string>& environment,
                                           const std::vector<const char*>& names) {
  for (const char* name : names) {
    if (auto value = lookup(environment, name)) return FoundVariable{name, *value};
  }
  return std::nullopt;
}

std::string names_of(const std::vector<const char*>& names) {
  std::string joined;
  for (const char* name : names) joined += (joined.empty() ? "" : " or ") + std::string(name);
  return joined;
}

Result<RankIdentity> resolve_family(const std::map<std::string, std::string>& environment, const RankVariables& family,
                                    const std::string& rank_value) {
  const auto size = first_present(environment, family.world_size);
  const auto local = first_present(environment, family.local_rank);
  if (!size || !local) {
    const std::string missing = !size ? names_of(family.world_size) : names_of(family.local_rank);
    return make_error(ErrorCode::invalid_argument,
                      std::string(family.rank) + " is set but " + missing + " is not, so the " +
                          to_string(family.source) + " rank variables are incomplete",
                      family.fix, std::string(family.rank) + "=" + rank_value);
  }
  auto rank = parse_count(family.rank, rank_value, family);
  if (!rank) return rank.error();
  auto world = parse_count(size->name, size->value, family);
  if (!world) return world.error();
  auto local_rank = parse_count(local->name, local->value, family);
  if (!local_rank) return local_rank.error();
  const std::string evidence = std::string(family.rank) + "=" + rank_value + " " + local->name + "=" + local->value +
                               " " + size->name + "=" + size->value;
  if (world.value() == 0 || rank.value() >= world.value() || local_rank.value() >= world.value()) {
    return make_error(ErrorCode::invalid_argument,
                      "inconsistent " + std::string(to_string(family.source)) +
                          " rank variables: the rank and local rank must be below the world size",
                      family.fix, evidence);
  }
  return RankIdentity{rank.value(), local_rank.value(), world.value(), family.source, evidence};
}

// "-u RANK -u LOCAL_RANK -u WORLD_SIZE": env(1) words that unset one family's variables.
std::string unset_words(RankSource source) {
  std::string words;
  for (const auto& family : families()) {
    if (family.source != source) continue;
    words = std::string("-u ") + family.rank;
    for (const char* name : family.local_rank) words += std::string(" -u ") + name;
    for (const char* name : family.world_size) words += std::string(" -u ") + name;
  }
  return words;
}

// Two launchers' variables in one process are a nesting (mpirun inside an sbatch job, torchrun inside
// an srun step) only when the inner launch spans at least the outer one's ranks: every process the
// outer launcher started runs the inner one. An outer rank above 0 proves that the outer launcher
// started several processes and this is one of them, so an inner world smaller than the outer one
// is a set left over in the environment (an exported RANK=0 WORLD_SIZE=1 under `srun -n 2` made both
// tasks "rank 0 of 1", and the second overwrote the first's files). Rank 0 of a larger outer world is
// let through: the batch step of `sbatch --ntasks 8` is rank 0 of 8 and may run `mpirun -np 4`.
std::optional<Error> nesting_conflict(const RankIdentity& inner, const RankIdentity& outer) {
  if (inner.world_size >= outer.world_size || outer.rank == 0) return std::nullopt;
  return make_error(ErrorCode::invalid_argument,
                    std::string("the launcher variables disagree: ") + to_string(outer.source) + " says rank " +
                        std::to_string(outer.rank) + " of " + std::to_string(outer.world_size) + " (" +
                        outer.evidence + ") but " + to_string(inner.source) + " says rank " +
                        std::to_string(inner.rank) + " of " + std::to_string(inner.world_size) + " (" +
                        inner.evidence + "); an inner launcher spans at least the ranks of the one outside it, so " +
                        "one set is left over from another launch",
                    "unset the stale variables before launching (`env " + unset_words(inner.source) +
                        " ...`), or launch with the launcher that set them",
                    inner.evidence + " / " + outer.evidence);
}

}  // namespace

// RankSource's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(RankSource) noexcept {
  static constexpr std::string_view names[] = {"torchrun", "mpirun", "pmix", "srun"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(RankSource source) noexcept { return choice_name(source).data(); }

Result<RankIdentity> resolve_rank(const std::map<std::string, std::string>& environment) {
  std::optional<RankIdentity> innermost;
  for (const auto& family : families()) {
    const auto rank = lookup(environment, family.rank);
    if (!rank) continue;
    auto identity = resolve_family(environment, family, *rank);
    if (!innermost) {
      if (!identity) return identity.error();
      innermost = std::move(identity.value());
      continue;
    }
    // An outer launcher's set that is incomplete (a lone SLURM_PROCID) says nothing about this rank.
    if (!identity) continue;
    if (auto conflict = nesting_conflict(*innermost, *identity)) return *conflict;
    innermost->evidence += "; outside it " + std::string(to_string(identity->source)) + ": " + identity->evidence;
  }
  if (innermost) return *innermost;
  return make_error(
      ErrorCode::not_found,
      "no launcher rank variables are set (looked for RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID)",
      "run this under a launcher: `srun -n N`, `mpirun -np N` or `torchrun --nproc-per-node N --no-python`; "
      "deep-profile run --launcher '<launcher words>' does that for every stage");
}

Result<RankIdentity> resolve_rank_from_process_environment() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string::npos) environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return resolve_rank(environment);
}

}  // namespace llmprof
