// Engine steps cut at the host's per-step synchronisation (llmprof/sync_steps.hpp). Checked on the H100 serving
// windows (tests/data/serving/serving_window*_h100.sqlite, nsys 2025.3.1): one device-to-host copy per step on
// the engine worker's thread, 40 cuts for the 40 NVTX steps; decode steps share one GEMM signature (22 of 40),
// mixed steps' GEMM tiles change with their token count (18 steps, 14 signatures).
#include "llmprof/sync_steps.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/timeline_model.hpp"
#include "llmprof/percent.hpp"
#include "core/saturating.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

struct Launch {
  std::int64_t start = 0, end = 0, thread = 0, correlation = 0;
};
struct Kernel {
  std::string name;
  std::int64_t start = 0, end = 0;
  std::tuple<std::int64_t, std::int64_t, std::int64_t> grid;
};
using Signature = std::set<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>>;

struct Step {
  std::int64_t start = 0, cut_end = 0, gpu_end = 0, gpu_time = 0, thread = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> gpu;  // intervals, for the busy union
  std::vector<const Kernel*> kernels;
  Signature signature;
};

bool is_gemm(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"gemm", "nvjet", "cutlass", "xmma", "matmul"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

bool is_sync_call(const std::string& name) {
  for (const char* prefix : {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                             "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

struct Export {
  std::vector<Launch> calls;               // every runtime call, by start
  std::map<std::int64_t, std::string> names;  // runtime call correlation -> call name
  std::map<std::int64_t, Kernel> kernels;  // by correlation id
  std::set<std::int64_t> device_to_host;   // correlation ids of DtoH copies
  // Copies and sets by correlation id: GPU work of the step that launched them, as the timeline engine counts it.
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> transfers;
};

Result<Export> read_export(const std::filesystem::path& file) {
  auto database = detail::SqliteDatabase::open_read_only(file);
  if (!database) return database.error();
  Export found;
  if (!database->has_table("CUPTI_ACTIVITY_KIND_RUNTIME") || !database->has_table("CUPTI_ACTIVITY_KIND_KERNEL"))
    return found;
  auto calls = database->prepare(
      "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "JOIN StringIds s ON r.nameId = s.id ORDER BY r.start");
  if (!calls) return calls.error();
  while (true) {
    auto row = calls->step();
    if (!row) return row.error();
    if (!*row) break;
    found.calls.push_back({calls->integer(0), calls->integer(1), calls->integer(2), calls->integer(3)});
    found.names[calls->integer(3)] = std::string(calls->text(4));
  }
  auto kernels = database->prepare(
      "SELECT k.correlationId, s.value, k.start, k.end, k.gridX, k.gridY, k.gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL k "
      "JOIN StringIds s ON k.shortName = s.id");
  if (!kernels) return kernels.error();
  while (true) {
    auto row = kernels->step();
    if (!row) return row.error();
    if (!*row) break;
    found.kernels[kernels->integer(0)] = {std::string(kernels->text(1)), kernels->integer(2), kernels->integer(3),
                                          {kernels->integer(4), kernels->integer(5), kernels->integer(6)}};
  }
  for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    if (!database->has_table(table)) continue;
    const bool memcpy = std::string_view(table).ends_with("MEMCPY");
    auto copies = database->prepare(std::string("SELECT correlationId, start, end, ") +
                                    (memcpy ? "copyKind" : "0") + " FROM " + table);
    if (!copies) return copies.error();
    while (true) {
      auto row = copies->step();
      if (!row) return row.error();
      if (!*row) break;
      found.transfers[copies->integer(0)].emplace_back(copies->integer(1), copies->integer(2));
      if (memcpy && copies->integer(3) == 2) found.device_to_host.insert(copies->integer(0));
    }
  }
  return found;
}

// The thread that launched the most kernels.
std::optional<std::int64_t> step_thread(const Export& data) {
  std::map<std::int64_t, std::int64_t> launches;
  for (const Launch& call : data.calls)
    if (data.kernels.count(call.correlation)) ++launches[call.thread];
  if (launches.empty()) return std::nullopt;
  return std::max_element(launches.begin(), launches.end(), [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

std::vector<Step> cut_steps(const Export& data, std::int64_t thread, std::string& how) {
  std::vector<const Launch*> on_thread;
  for (const Launch& call : data.calls)
    if (call.thread == thread) on_thread.push_back(&call);
  const bool copies = std::any_of(on_thread.begin(), on_thread.end(),
                                  [&](const Launch* call) { return data.device_to_host.count(call->correlation); });
  how = copies ? "device-to-host copy" : "stream, event or device synchronisation";
  std::vector<Step> steps;
  Step current;
  bool open = false;
  const auto add_gpu_work = [](Step& step, std::int64_t start, std::int64_t end) {
    step.gpu.emplace_back(start, end);
    step.gpu_end = std::max(step.gpu_end, end);
    detail::add_saturating(step.gpu_time, end - start);
  };
  for (const Launch* call : on_thread) {
    const auto kernel = data.kernels.find(call->correlation);
    const auto transfer = data.transfers.find(call->correlation);
    if (kernel != data.kernels.end() || transfer != data.transfers.end()) {
      if (!open) current = Step{call->start, 0, 0, 0, thread, {}, {}, {}};
      open = true;
    }
    if (kernel != data.kernels.end()) {
      current.kernels.push_back(&kernel->second);
      add_gpu_work(current, kernel->second.start, kernel->second.end);
    }
    if (transfer != data.transfers.end())
      for (const auto& [start, end] : transfer->second) add_gpu_work(current, start, end);
    const bool cut = copies ? data.device_to_host.count(call->correlation) > 0 : is_sync_call(data.names.at(call->correlation));
    if (cut && open) {
      current.cut_end = call->end;
      Step finished = std::exchange(current, Step{});
      if (!finished.kernels.empty()) steps.push_back(std::move(finished));  // a step launches kernels
      open = false;
    }
  }
  return steps;  // launches after the last cut belong to no finished step
}

void sign(Step& step) {
  const bool gemms = std::any_of(step.kernels.begin(), step.kernels.end(), [](const Kernel* k) { return is_gemm(k->name); });
  for (const Kernel* kernel : step.kernels)
    if (!gemms || is_gemm(kernel->name))
      step.signature.insert({kernel->name, std::get<0>(kernel->grid), std::get<1>(kernel->grid), std::get<2>(kernel->grid)});
}

std::int64_t busy_of(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0, reach = std::numeric_limits<std::int64_t>::min();
  for (const auto& [start, end] : intervals) {
    if (end <= reach) continue;
    total += end - std::max(start, reach);
    reach = end;
  }
  return total;
}

StepKindFigures figures_of(const std::string& name, const std::vector<const Step*>& steps) {
  StepKindFigures kind;
  kind.name = name;
  kind.count = static_cast<std::int64_t>(steps.size());
  std::vector<std::int64_t> durations;
  std::set<std::int64_t> processes;
  std::map<std::string, TimelineKernel> kernels;
  for (const Step* step : steps) {
    durations.push_back(std::max(step->cut_end, step->gpu_end) - step->start);
    detail::add_saturating(kind.gpu_time_ns, step->gpu_time);
    detail::add_saturating(kind.gpu_busy_ns, busy_of(step->gpu));
    processes.insert(process_of_thread(step->thread));
    for (const Kernel* kernel : step->kernels) {
      TimelineKernel& entry = kernels[kernel->name];
      entry.name = kernel->name;
      ++entry.count;
      entry.total_ns += kernel->end - kernel->start;
    }
  }
  kind.step_time = detail::summarize_durations(std::move(durations));
  kind.processes.assign(processes.begin(), processes.end());
  std::vector<TimelineKernel> ranked;
  for (auto& [unused, kernel] : kernels) ranked.push_back(kernel);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (ranked.size() > 5) ranked.resize(5);
  kind.top_kernels = std::move(ranked);
  return kind;
}

}  // namespace

Result<std::optional<StepKindReport>> infer_sync_steps(const std::filesystem::path& sqlite_export, StepWindow window) {
  auto data = read_export(sqlite_export);
  if (!data) return data.error();
  const auto thread = step_thread(*data);
  if (!thread) return std::optional<StepKindReport>{};
  std::string how;
  std::vector<Step> all = cut_steps(*data, *thread, how);
  if (all.empty()) return std::optional<StepKindReport>{};
  const auto total = static_cast<std::int64_t>(all.size());
  const std::int64_t first = std::min(std::max<std::int64_t>(window.skip, 0), total);
  const std::int64_t last = window.count > 0 ? std::min(total, first + window.count) : total;
  std::vector<Step> steps(std::make_move_iterator(all.begin() + first), std::make_move_iterator(all.begin() + last));
  StepKindReport report;
  report.steps = last - first;
  report.steps_left_out = total - report.steps;
  for (const Step& step : steps) report.inferred_spans.push_back({step.thread, step.start, step.cut_end});
  std::map<Signature, std::vector<const Step*>> by_signature;
  for (Step& step : steps) {
    sign(step);
    by_signature[step.signature].push_back(&step);
  }
  std::vector<std::vector<const Step*>> uniform;
  std::vector<const Step*> varying;
  for (auto& [signature, members] : by_signature) {
    if (4 * static_cast<std::int64_t>(members.size()) >= report.steps)
      uniform.push_back(members);
    else
      varying.insert(varying.end(), members.begin(), members.end());
  }
  std::stable_sort(uniform.begin(), uniform.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (std::size_t i = 0; i < uniform.size(); ++i)
    report.kinds.push_back(figures_of("uniform-" + std::to_string(i + 1), uniform[i]));
  if (!varying.empty()) report.kinds.push_back(figures_of("varying", varying));
  std::int64_t gpu_time = 0;
  for (const auto& kind : report.kinds) detail::add_saturating(gpu_time, kind.gpu_time_ns);
  for (auto& kind : report.kinds)
    if (gpu_time > 0) kind.gpu_time_share = static_cast<double>(kind.gpu_time_ns) / static_cast<double>(gpu_time);
  report.gpu_process = process_of_thread(*thread);
  std::stable_sort(report.kinds.begin(), report.kinds.end(),
                   [](const auto& a, const auto& b) { return a.gpu_time_ns > b.gpu_time_ns; });
  report.inferred = "steps inferred without NVTX: cut at each " + how + " of the thread that launched the most kernels (" +
                    std::to_string(total) + " cuts), and grouped by the kernels and grids of their GEMMs: " +
                    std::to_string(by_signature.size()) + " signatures; one shared by at least a quarter of the steps is a " +
                    "`uniform-N` kind, the others are `varying` (a batch whose shape changes step to step)";
  const StepKindFigures& heaviest = report.kinds.front();
  report.verdict = heaviest.name + " steps: " + std::to_string(heaviest.count) + " of " + std::to_string(report.steps) +
                   (heaviest.gpu_time_share ? ", " + format_fraction_percent(*heaviest.gpu_time_share) + " of the window's GPU time"
                                            : std::string());
  return std::optional<StepKindReport>{std::move(report)};
}

}  // namespace llmprof
