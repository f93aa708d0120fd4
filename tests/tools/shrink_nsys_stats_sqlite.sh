#!/bin/sh
# Copies an nsys SQLite export keeping only what `nsys stats` (2022.4 and 2025.3) reads for cuda_gpu_kern_sum,
# nvtx_sum, nvtx_kern_sum, nvtx_gpu_proj_sum, cuda_api_sum and cuda_gpu_mem_time_sum: every row of the NVTX,
# kernel, runtime, memcpy, memset and graph-trace tables, the columns those reports read, the strings they name.
# Usage: tests/tools/shrink_nsys_stats_sqlite.sh IN.sqlite OUT.sqlite   (sqlite3 3.35 or later: DROP COLUMN)
set -eu
in=$1 out=$2
cp "$in" "$out"
chmod u+w "$out"
keep=" META_DATA_EXPORT EXPORT_META_DATA StringIds NVTX_EVENTS CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_RUNTIME \
CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET CUPTI_ACTIVITY_KIND_GRAPH_TRACE "
for table in $(sqlite3 "$out" "SELECT name FROM sqlite_master WHERE type = 'table'"); do
  case "$keep" in *" $table "*) ;; *) sqlite3 "$out" "DROP TABLE $table" ;; esac
done
for spec in \
  "CUPTI_ACTIVITY_KIND_KERNEL start end correlationId globalPid demangledName graphNodeId gridX gridY gridZ blockX blockY blockZ" \
  "CUPTI_ACTIVITY_KIND_RUNTIME start end globalTid correlationId nameId" \
  "CUPTI_ACTIVITY_KIND_MEMCPY start end correlationId globalPid copyKind graphNodeId" \
  "NVTX_EVENTS start end eventType text globalTid endGlobalTid textId domainId"; do
  set -- $spec
  table=$1
  shift
  wanted=" $* "
  for column in $(sqlite3 "$out" "SELECT name FROM pragma_table_info('$table')"); do
    case "$wanted" in *" $column "*) ;; *) sqlite3 "$out" "ALTER TABLE $table DROP COLUMN $column" ;; esac
  done
done
sqlite3 "$out" "DELETE FROM StringIds WHERE id NOT IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT textId FROM NVTX_EVENTS WHERE textId IS NOT NULL);
  VACUUM;"
