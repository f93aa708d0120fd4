#!/bin/bash
# Applies the drafted part 4/5 of the per-rank issue to a checkout.
# Usage: apply.sh [CHECKOUT] (default: the current directory). First `git apply` sweep-executors.diff there.
# The draft was written against the tree before the tests moved to tests/e2e: adjust paths if they moved.
set -euo pipefail
draft=$(cd "$(dirname "$0")" && pwd)
cd "${1:-.}"
export LLMPROF_DRAFT_DIR=$draft
cp "$draft/cluster.sh" scripts/cluster.sh
cp "$draft/sweep_batch_test.cpp" tests/unit/sweep_batch_test.cpp
python3 "$draft/patch_sweep.py"
python3 - <<'PY'
import os
p='tests/end_to_end/ranks_test.cpp'
s=open(p).read()
s=s.replace('#include <catch2/catch.hpp>\n#include <cstdlib>\n','#include <boost/json.hpp>\n#include <catch2/catch.hpp>\n#include <chrono>\n#include <cstdlib>\n#include <map>\n#include <thread>\n')
s=s.rstrip('\n')+'\n'+open(os.path.join(os.environ['LLMPROF_DRAFT_DIR'], 'slurm_tests.cpp')).read()
open(p,'w').write(s)
p='scripts/test.sh'
s=open(p).read()
s=s.replace('''export LLMPROF_REQUIRE_CLUSTER=1''','''export LLMPROF_REQUIRE_CLUSTER=1
# A single-node Slurm (scripts/cluster.sh) for the srun and job-array end-to-end tests, stopped on exit.
eval "$(scripts/cluster.sh start)"
trap 'scripts/cluster.sh stop' EXIT''')
open(p,'w').write(s)
p='README.md'
s=open(p).read()
s=s.replace('''| `deep-profile sweep --point 'k=v,...'... \\| --plan F` | one run directory per configuration point, and an index report |''','''| `deep-profile sweep --point 'k=v,...'... \\| --plan F` | one run directory per configuration point, and an index report |
| `deep-profile sweep --plan F [--sweep-dir SWEEP] --point-index I` / `--merge` | one point into the deterministic `SWEEP/point-<I>/` (a finished point is not run again), or the index of those points (points without a run listed as failed) |
| `deep-profile sweep --plan F --executor slurm [--concurrency K] [--submit]` | writes `SWEEP/sweep.sbatch` (job array `--array=0-(N-1)%K --gpus=1`, each task `--point-index $SLURM_ARRAY_TASK_ID`) and `SWEEP/merge.sbatch`; `--submit` runs `sbatch --parsable` on both (merge with `--dependency=afterany:<array>`) and prints how to follow them. `scripts/cluster.sh start\\|stop` runs a single-node Slurm here to try it |''')
open(p,'w').write(s)
PY
sed -i 's|#include <fstream>|#include <algorithm>\n#include <fstream>\n#include <optional>|' apps/deep-profile/sweep_executors.cpp
sed -i "s/\bexit_environment\b/exit_not_ready/g; s/\bexit_input\b/exit_bad_input/g" apps/deep-profile/sweep_executors.cpp
