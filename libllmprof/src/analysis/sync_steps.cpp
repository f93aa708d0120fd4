// Engine steps without NVTX ranges (llmprof/sync_steps.hpp): the export's calls and GPU work, read here, cut into
// steps by analysis/step_sequence.cpp and grouped into kinds by their GEMMs and graphs.
#include "llmprof/sync_steps.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/step_sequence.hpp"
#include "analysis/timeline_model.hpp"
#include "core/saturating.hpp"
#include "llmprof/percent.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

struct Call {
  std::int64_t start = 0, end = 0, thread = 0, correlation = 0;
  std::string name;
};
struct Kernel {
  std::string name;
  std::int64_t start = 0, end = 0;
  std::tuple<std::int64_t, std::int64_t, std::int64_t> grid;
};
struct GraphExecution {
  std::int64_t graph = 0, start = 0, end = 0;
};
// A signature entry: a GEMM kernel and its grid, or a graph ("graph <id>", no grid) traced whole.
using Signature = std::set<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>>;

struct Step {
  std::int64_t start = 0, cut_end = 0, gpu_end = 0, gpu_time = 0, thread = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> gpu;  // intervals, for the busy union
  std::vector<const Kernel*> kernels;
  std::vector<const GraphExecution*> graphs;
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

bool is_graph_launch(const std::string& name) {
  return name.rfind("cudaGraphLaunch", 0) == 0 || name.rfind("cuGraphLaunch", 0) == 0;
}

// By correlation id: a kernel launch's kernel, a graph launch's kernels (traced per node, nsys
// --cuda-graph-trace=node) or its execution (traced whole: CUPTI_ACTIVITY_KIND_GRAPH_TRACE), copies and sets.
struct Export {
  std::vector<Call> calls;  // every runtime call, by start
  std::map<std::int64_t, std::vector<Kernel>> kernels;
  std::map<std::int64_t, std::vector<GraphExecution>> graphs;
  std::set<std::int64_t> device_to_host;  // correlation ids of DtoH copies
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> transfers;  // copies and sets
};

// Every row of `sql`, handed to `visit` as a statement.
template <typename Visit>
Result<void> for_each_row(const detail::SqliteDatabase& database, const std::string& sql, Visit visit) {
  auto statement = database.prepare(sql);
  if (!statement) return statement.error();
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return {};
    visit(*statement);
  }
}

Result<Export> read_export(const std::filesystem::path& file) {
  auto database = detail::SqliteDatabase::open_read_only(file);
  if (!database) return database.error();
  Export found;
  if (!database->has_table("CUPTI_ACTIVITY_KIND_RUNTIME") || !database->has_table("CUPTI_ACTIVITY_KIND_KERNEL"))
    return found;
  auto read = for_each_row(*database,
                           "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM "
                           "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON r.nameId = s.id ORDER BY r.start",
                           [&](auto& row) {
                             found.calls.push_back({row.integer(0), row.integer(1), row.integer(2), row.integer(3),
                                                    std::string(row.text(4))});
                           });
  if (!read) return read.error();
  read = for_each_row(*database,
                      "SELECT k.correlationId, s.value, k.start, k.end, k.gridX, k.gridY, k.gridZ FROM "
                      "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.shortName = s.id ORDER BY k.start",
                      [&](auto& row) {
                        found.kernels[row.integer(0)].push_back(
                            {std::string(row.text(1)), row.integer(2), row.integer(3),
                             {row.integer(4), row.integer(5), row.integer(6)}});
                      });
  if (!read) return read.error();
  if (database->has_table("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")) {
    read = for_each_row(*database, "SELECT correlationId, graphId, start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                        [&](auto& row) {
                          found.graphs[row.integer(0)].push_back({row.integer(1), row.integer(2), row.integer(3)});
                        });
    if (!read) return read.error();
  }
  for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    if (!database->has_table(table)) continue;
    const bool memcpy = std::string_view(table).ends_with("MEMCPY");
    read = for_each_row(*database,
                        std::string("SELECT correlationId, start, end, ") + (memcpy ? "copyKind" : "0") + " FROM " + table,
                        [&](auto& row) {
                          found.transfers[row.integer(0)].emplace_back(row.integer(1), row.integer(2));
                          if (memcpy && row.integer(3) == 2) found.device_to_host.insert(row.integer(0));
                        });
    if (!read) return read.error();
  }
  return found;
}

// The thread whose calls launched the most kernels and graphs.
std::optional<std::int64_t> step_thread(const Export& data) {
  std::map<std::int64_t, std::int64_t> launches;
  for (const Call& call : data.calls)
    if (data.kernels.count(call.correlation) || data.graphs.count(call.correlation)) ++launches[call.thread];
  if (launches.empty()) return std::nullopt;
  return std::max_element(launches.begin(), launches.end(), [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

// The step thread's calls that launched GPU work or waited for it, as the sequence analysis reads them, and the
// name of each token.
struct Sequence {
  std::vector<const Call*> calls;
  std::vector<detail::SequenceCall> items;
  std::vector<std::string> token_names;
};

Sequence sequence_of(const Export& data, std::int64_t thread,
                     const std::optional<std::pair<std::int64_t, std::int64_t>>& within) {
  Sequence sequence;
  std::map<std::string, std::int64_t> tokens;
  const auto token = [&](const std::string& name) {
    const auto [found, added] = tokens.try_emplace(name, std::int64_t(tokens.size()));
    if (added) sequence.token_names.push_back(name);
    return found->second;
  };
  const auto with_grid = [](const Kernel& kernel) {
    const auto& [x, y, z] = kernel.grid;
    return kernel.name + " (grid " + std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z) + ")";
  };
  for (const Call& call : data.calls) {
    if (call.thread != thread || (within && (call.start < within->first || call.start > within->second))) continue;
    const auto kernels = data.kernels.find(call.correlation);
    const auto graphs = data.graphs.find(call.correlation);
    const bool graph = is_graph_launch(call.name) && (kernels != data.kernels.end() || graphs != data.graphs.end());
    detail::SequenceCall item;
    if (graph && graphs != data.graphs.end()) {
      item.token = token("graph " + std::to_string(graphs->second.front().graph));
    } else if (graph) {  // traced per node: its kernels carry the launch's correlation id
      item.token = token("graph of " + std::to_string(kernels->second.size()) + " kernels from " +
                         with_grid(kernels->second.front()));
    } else if (kernels != data.kernels.end()) {
      item.token = token(with_grid(kernels->second.front()));
      item.marks_pass = is_gemm(kernels->second.front().name);
    } else if (data.transfers.count(call.correlation)) {
      item.token = token(data.device_to_host.count(call.correlation) ? "device-to-host copy" : "copy or set");
      item.synchronizes = data.device_to_host.count(call.correlation) > 0;
    } else if (is_sync_call(call.name)) {
      item.token = token(call.name);
      item.synchronizes = true;
    } else {
      continue;  // no GPU work recorded, no wait
    }
    item.graph = graph;
    item.computes = graph || kernels != data.kernels.end();
    item.marks_pass = item.marks_pass || graph;
    sequence.calls.push_back(&call);
    sequence.items.push_back(item);
  }
  return sequence;
}

Step step_of(const Export& data, const Sequence& sequence, const detail::SequenceStep& found) {
  Step step;
  step.start = sequence.calls[found.first]->start;
  step.cut_end = sequence.calls[found.last]->end;
  step.thread = sequence.calls[found.first]->thread;
  const auto add_gpu_work = [&step](std::int64_t start, std::int64_t end) {
    step.gpu.emplace_back(start, end);
    step.gpu_end = std::max(step.gpu_end, end);
    detail::add_saturating(step.gpu_time, end - start);
  };
  for (std::size_t c = found.first; c <= found.last; ++c) {
    const std::int64_t correlation = sequence.calls[c]->correlation;
    if (const auto kernels = data.kernels.find(correlation); kernels != data.kernels.end())
      for (const Kernel& kernel : kernels->second) {
        step.kernels.push_back(&kernel);
        add_gpu_work(kernel.start, kernel.end);
      }
    if (const auto graphs = data.graphs.find(correlation); graphs != data.graphs.end())
      for (const GraphExecution& graph : graphs->second) {
        step.graphs.push_back(&graph);
        add_gpu_work(graph.start, graph.end);
      }
    if (const auto transfers = data.transfers.find(correlation); transfers != data.transfers.end())
      for (const auto& [start, end] : transfers->second) add_gpu_work(start, end);
  }
  return step;
}

void sign(Step& step) {
  const bool gemms = std::any_of(step.kernels.begin(), step.kernels.end(), [](const Kernel* k) { return is_gemm(k->name); });
  for (const Kernel* kernel : step.kernels)
    if (!gemms || is_gemm(kernel->name))
      step.signature.insert({kernel->name, std::get<0>(kernel->grid), std::get<1>(kernel->grid), std::get<2>(kernel->grid)});
  for (const GraphExecution* graph : step.graphs) step.signature.insert({"graph " + std::to_string(graph->graph), 0, 0, 0});
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
  kind.gpu_busy_share = gpu_busy_share_of(kind);
  kind.processes.assign(processes.begin(), processes.end());
  std::vector<TimelineKernel> ranked;
  for (auto& [unused, kernel] : kernels) ranked.push_back(kernel);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (ranked.size() > 5) ranked.resize(5);
  kind.top_kernels = std::move(ranked);
  return kind;
}

// How the steps were found, and how sure that is (StepKindReport::inferred, ::inference_check).
void describe(const detail::SequenceSteps& found, const Sequence& sequence, std::int64_t total, StepKindReport& report) {
  report.inferred = "steps inferred without NVTX from the launch sequence of the thread that launched the most kernels "
                    "and graphs, cut at its synchronisations (device-to-host copies, synchronise calls): " +
                    std::to_string(found.segments) + " synchronisations closed launched work, " +
                    std::to_string(total) + " steps";
  if (!found.disagreement.empty()) {
    report.inference_check = "the launch sequence and the synchronisation disagree: " + found.disagreement +
                             "; per-step figures withheld";
    report.figures_withheld = true;
    return;
  }
  const std::int64_t repeats = std::count_if(found.steps.begin(), found.steps.end(),
                                             [](const detail::SequenceStep& step) { return step.repeats; });
  report.inference_check =
      "the launch sequence and the synchronisation agree: " + std::to_string(repeats) + " of the " +
      std::to_string(total) + " steps repeat one sequence of " + std::to_string(found.unit_calls) + " calls closed by " +
      (found.unit_segments == 1 ? std::string("one synchronisation")
                                : std::to_string(found.unit_segments) + " synchronisations") +
      ", each launching `" + sequence.token_names[std::size_t(*found.once_per_step)] +
      "` once; the others (before the first repeat, between repeats) are cut every " +
      std::to_string(found.unit_segments) + " synchronisation(s), and none launches it twice";
  if (found.lead_in_marks_left_out > 0)
    report.inference_check += "; the calls before the first repeat, " + std::to_string(found.lead_in_marks_left_out) +
                              " launches of it without a synchronisation of their own, are left out";
}

}  // namespace

Result<std::optional<StepKindReport>> infer_sync_steps(
    const std::filesystem::path& sqlite_export, StepWindow window,
    const std::optional<std::pair<std::int64_t, std::int64_t>>& within) {
  auto data = read_export(sqlite_export);
  if (!data) return data.error();
  const auto thread = step_thread(*data);
  if (!thread) return std::optional<StepKindReport>{};
  const Sequence sequence = sequence_of(*data, *thread, within);
  const detail::SequenceSteps found = detail::find_sequence_steps(sequence.items);
  if (found.steps.empty()) return std::optional<StepKindReport>{};
  const auto total = static_cast<std::int64_t>(found.steps.size());
  const auto [first, last] = window.kept(total);
  StepKindReport report;
  report.window_shortfall = window.shortfall(total);
  report.steps = last - first;
  report.steps_left_out = total - report.steps;
  report.gpu_process = process_of_thread(*thread);
  describe(found, sequence, total, report);
  if (report.figures_withheld) {
    report.verdict = std::to_string(report.steps) + " steps, per-step figures withheld: " + found.disagreement;
    return std::optional<StepKindReport>{std::move(report)};
  }
  if (first == last) {  // the step window skipped past every step: no kind, and the verdict says why
    report.verdict = report.window_shortfall;
    return std::optional<StepKindReport>{std::move(report)};
  }
  std::vector<Step> steps;
  for (std::int64_t s = first; s < last; ++s) steps.push_back(step_of(*data, sequence, found.steps[std::size_t(s)]));
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
  // Every step is one kind's, so the kinds' GPU time is the inferred steps' (not the window's: other threads' work
  // and work between the steps are outside it).
  report.window_gpu_time_ns = gpu_time;
  report.window_basis = "the steps' GPU time";
  for (auto& kind : report.kinds) {
    if (gpu_time > 0) kind.gpu_time_share = static_cast<double>(kind.gpu_time_ns) / static_cast<double>(gpu_time);
    kind.window_share = kind.gpu_time_share;
  }
  std::stable_sort(report.kinds.begin(), report.kinds.end(),
                   [](const auto& a, const auto& b) { return a.gpu_time_ns > b.gpu_time_ns; });
  report.inferred += ", grouped by the kernels and grids of their GEMMs and their graphs: " +
                     std::to_string(by_signature.size()) + " signatures; one shared by at least a quarter of the " +
                     "steps is a `uniform-N` kind, the others are `varying` (a batch whose shape changes step to step)";
  const StepKindFigures& heaviest = report.kinds.front();
  report.verdict = heaviest.name + " steps: " + std::to_string(heaviest.count) + " of " + std::to_string(report.steps) +
                   (heaviest.gpu_time_share ? ", " + format_fraction_percent(*heaviest.gpu_time_share) + " of the steps' GPU time"
                                            : std::string());
  return std::optional<StepKindReport>{std::move(report)};
}

}  // namespace llmprof
