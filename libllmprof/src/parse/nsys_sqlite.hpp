// Reads the nsys SQLite export (`nsys export --type sqlite`) row by row for the timeline engine.
//
// Two schema generations are read: nsys 2022.4 (export schema 3.0, metadata in EXPORT_META_DATA)
// and nsys 2023+ up to 2025.3 (schema 3.x, META_DATA_EXPORT; CUPTI_ACTIVITY_KIND_GRAPH_TRACE holds
// graph executions traced with --cuda-graph-trace=graph, the default). The schema is recognised by
// the tables and columns present, never by the version string alone; an export lacking a column the
// engine needs is refused with the table and column named.
//
// NVTX ranges are returned whole (they are the stage instances, a few per step); API calls and GPU
// activities are streamed in start order through a callback, so memory does not grow with rows.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/nsys_stats.hpp"
#include "llmprof/result.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof::detail {

// The export's tables the readers query (nsys_sqlite.cpp, nsys_sqlite_summaries.cpp).
inline constexpr std::string_view kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kGraphTraceTable = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

// ENUM_NSYS_EVENT_TYPE ids, the same in the 2022.4 and 2025.3 exports.
inline constexpr int kNvtxPushPopRange = 59;
inline constexpr int kNvtxStartEndRange = 60;
inline constexpr int kNvtxtPushPopRange = 70;
inline constexpr int kNvtxtStartEndRange = 71;
inline constexpr int kNvtxDomainCreate = 75;

struct NsysSqliteSchema {
  std::string product_version;  // "2025.3.2.0", from the export's metadata table
  std::string schema_version;   // "3.20.3"
  bool has_nvtx = false;
  bool has_runtime_api = false;  // CUPTI_ACTIVITY_KIND_RUNTIME (CUDA runtime and driver calls)
  bool has_kernels = false;
  bool has_memcpy = false;
  bool has_memset = false;
  bool has_graph_trace = false;          // graph executions as one row each (--cuda-graph-trace=graph)
  bool kernels_have_graph_node = false;  // graphNodeId column: graph kernels when traced per node
  bool has_gpu_metrics = false;          // GPU_METRICS: nsys sampled a GPU's counters, so there was a GPU
};

// An NVTX push/pop or start/end range. Start/end ranges may end on another thread; they belong to the
// thread that started them (the one whose launches they enclose).
struct NvtxRangeRow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t thread = 0;  // nsys globalTid
  std::string name;
  std::string domain;  // empty for the default domain
  bool push_pop = true;
};

enum class ApiCallKind { kernel_launch, graph_launch, memory_copy, memory_set, synchronize };

struct ApiCallRow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t thread = 0;
  std::int64_t correlation_id = 0;
  ApiCallKind kind = ApiCallKind::kernel_launch;
  bool has_gpu_record = false;  // some GPU activity row carries this call's correlation id
};

enum class GpuActivityKind { kernel, memory_copy, memory_set, graph_execution };

struct GpuActivityRow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  GpuActivityKind kind = GpuActivityKind::kernel;
  bool in_graph = false;                      // a graph execution, or a node of one (kernel/memcpy with graphNodeId)
  std::int64_t name_id = -1;                  // StringIds id of the kernel name; -1 for copies, sets, graphs
  std::optional<std::int64_t> launch_thread;  // absent when no API call carries the correlation id
  std::int64_t launch_start_ns = 0;
  std::int64_t launch_end_ns = 0;
};

// One kernel with its launch configuration, the key ncu 2025.3's --filter-mode per-launch-config counts
// launches by (grid size, block size, shared memory).
struct KernelLaunchRow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t name_id = -1;          // StringIds id of the demangled name
  std::int64_t mangled_name_id = -1;  // StringIds id of the mangled name; -1 when the export has none
  std::array<std::int64_t, 3> grid{};
  std::array<std::int64_t, 3> block{};
  std::int64_t shared_memory_bytes = 0;  // static + dynamic
};

// What nsys stats' summaries group (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum): kernels by
// demangled name, CUDA API calls by function name, memory copies by copy kind, memory sets as one group.
enum class DurationGroups { kernel_names, api_functions, copy_kinds, memory_sets };

// An NVTX range as nsys stats 2022.4/2025.3 read it: unclosed ranges end at the export's last NVTX
// timestamp, and the range is named "domain:name" only when its domain was created by name.
struct NvtxRangeInstance {
  std::int64_t id = 0;  // NVTX_EVENTS rowid
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t thread = 0;  // nsys globalTid (process id in bits 24 and up)
  NvtxRangeName range;
  bool push_pop = true;
  bool ends_on_start_thread = true;  // endGlobalTid is NULL: nvtx_kern_sum and nvtx_gpu_proj_sum read only these
};

// A kernel, copy or set joined with one CUDA API call of its process and correlation id (one row per such
// call; none when no call carries the id).
struct LaunchedGpuOperation {
  std::int64_t row_id = 0;  // rowid within its table
  GpuActivityKind kind = GpuActivityKind::kernel;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation_id = 0;
  std::int64_t name_id = -1;  // StringIds id of a kernel's demangled name; -1 for copies and sets
  std::optional<std::int64_t> call_thread;
  std::int64_t call_start_ns = 0;
  std::int64_t call_end_ns = 0;
};

// Error for a row that runs backwards or outside any capture (see kLatestTimeNs in nsys_sqlite.cpp).
std::optional<Error> check_nsys_interval(const std::filesystem::path& file, std::string_view table,
                                         std::int64_t start_ns, std::int64_t end_ns);

// Classifies a CUDA runtime/driver function name; nullopt for calls that neither launch nor wait.
std::optional<ApiCallKind> classify_api_call(std::string_view function_name);

class NsysSqliteReader {
 public:
  // Opens the export and checks its schema: Error(not_found) when missing, Error(parse_error) for a
  // file that is not SQLite, not an nsys export, or an export without a column the engine reads.
  static Result<NsysSqliteReader> open(const std::filesystem::path& file);

  const NsysSqliteSchema& schema() const { return schema_; }
  const std::filesystem::path& file() const { return database_.file(); }

  // Every closed push/pop and start/end range, in start order; `unclosed` counts the ranges without end by name
  // ("name", or "domain:name" in a named domain).
  Result<std::vector<NvtxRangeRow>> read_nvtx_ranges(std::map<std::string, std::int64_t>& unclosed) const;
  // Launch and synchronise calls, in start order.
  Result<void> for_each_api_call(const std::function<void(const ApiCallRow&)>& visit) const;
  // Kernels, copies, sets and graph executions with their launching call (the call of the same process
  // and correlation id), in GPU start order.
  Result<void> for_each_gpu_activity(const std::function<void(const GpuActivityRow&)>& visit) const;
  // Every kernel in GPU start order with its launch configuration; false when the kernel table lacks
  // the grid/block/shared-memory columns (nothing is visited then).
  Result<bool> for_each_kernel_launch(const std::function<void(const KernelLaunchRow&)>& visit) const;
  // The durations (end - start) of one table's rows, one call per group in key order: `key` is the kernel
  // name, the API function name, the copy kind's number ("8") or "" for memory sets. Nothing is visited
  // when the table is absent. (nsys_sqlite_summaries.cpp)
  Result<void> for_each_duration_group(
      DurationGroups groups,
      const std::function<void(std::string_view key, std::vector<std::int64_t>& durations_ns)>& visit) const;
  // Every push/pop and start/end range, unclosed ones included, in NVTX_EVENTS order.
  Result<std::vector<NvtxRangeInstance>> read_nvtx_range_instances() const;
  // Kernels (and copies and sets unless `kernels_only`) with their API calls, ordered by calling thread
  // and call start (operations without a call first).
  Result<void> for_each_launched_gpu_operation(bool kernels_only,
                                               const std::function<void(const LaunchedGpuOperation&)>& visit) const;
  // The string behind a StringIds id (kernel names); "" when absent.
  std::string string_value(std::int64_t id) const;

 private:
  NsysSqliteReader(SqliteDatabase database, NsysSqliteSchema schema)
      : database_(std::move(database)), schema_(std::move(schema)) {}
  Result<void> load_api_kinds();
  std::string gpu_activity_sql() const;
  SqliteDatabase database_;
  NsysSqliteSchema schema_;
  std::map<std::int64_t, ApiCallKind> api_kinds_;  // StringIds id of a function name -> its kind
};

}  // namespace llmprof::detail
