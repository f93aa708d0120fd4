// read_capture_placement: an export's clock origin and its kernels' GPUs (llmprof/capture_placement.hpp).
#include <algorithm>
#include <map>

#include "llmprof/capture_placement.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

std::optional<std::int64_t> clock_origin(const detail::SqliteDatabase& database) {
  if (!database.columns("TARGET_INFO_SESSION_START_TIME").contains("utcEpochNs")) return std::nullopt;
  auto statement = database.prepare("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
  if (!statement) return std::nullopt;
  auto row = statement->step();
  if (!row || !*row) return std::nullopt;
  return statement->optional_integer(0);
}

// The CUDA device id -> busLocation of TARGET_INFO_GPU's rows (rows without a bus location are left out: a trimmed
// fixture blanks it). CUPTI's kernel deviceId is the CUDA device ordinal the process saw, which is TARGET_INFO_GPU's
// cuDevice ("CUDA device ID"); its id is nsys's own and need not match under CUDA_VISIBLE_DEVICES. An export without
// cuDevice is matched on id.
std::map<std::int64_t, std::string> gpu_buses(const detail::SqliteDatabase& database) {
  std::map<std::int64_t, std::string> buses;
  const auto columns = database.columns("TARGET_INFO_GPU");
  if (!columns.contains("id") || !columns.contains("busLocation")) return buses;
  auto statement = database.prepare(columns.contains("cuDevice") ? "SELECT cuDevice, busLocation FROM TARGET_INFO_GPU"
                                                                 : "SELECT id, busLocation FROM TARGET_INFO_GPU");
  if (!statement) return buses;
  for (auto row = statement->step(); row && *row; row = statement->step()) {
    std::string bus(statement->text(1));
    if (!bus.empty()) buses[statement->integer(0)] = std::move(bus);
  }
  return buses;
}

std::vector<std::int64_t> kernel_devices(const detail::SqliteDatabase& database) {
  std::vector<std::int64_t> devices;
  if (!database.columns("CUPTI_ACTIVITY_KIND_KERNEL").contains("deviceId")) return devices;
  auto statement = database.prepare("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY deviceId");
  if (!statement) return devices;
  for (auto row = statement->step(); row && *row; row = statement->step()) devices.push_back(statement->integer(0));
  return devices;
}

}  // namespace

Result<CapturePlacement> read_capture_placement(const std::filesystem::path& sqlite_file) {
  auto database = detail::SqliteDatabase::open_read_only(sqlite_file);
  if (!database) return database.error();
  CapturePlacement placement;
  placement.clock_origin_utc_ns = clock_origin(database.value());
  const auto buses = gpu_buses(database.value());
  const auto devices = kernel_devices(database.value());
  for (const std::int64_t device : devices)
    if (const auto bus = buses.find(device); bus != buses.end()) placement.kernel_gpu_buses.push_back(bus->second);
  if (devices.empty() && buses.size() == 1) placement.kernel_gpu_buses.push_back(buses.begin()->second);
  return placement;
}

}  // namespace llmprof
