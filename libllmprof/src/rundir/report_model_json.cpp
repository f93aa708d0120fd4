// report.json's records <-> JSON through their field tables (core/record_fields.hpp): the writer,
// the reader and the CSV columns walk the same table (see report_model_json.hpp).
// The tables' rows look alike across records on purpose (one row per field, each naming its own member and its
// bound): a repeated shape, not repeated logic, so a duplicate-code tool's pairs between them are left as they are.
#include "rundir/report_model_json.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "core/json_fields.hpp"
#include "core/json_values.hpp"
#include "core/record_fields.hpp"

namespace llmprof::detail {
namespace json = boost::json;

using Stage = ReportStage;
using Kernel = ReportKernel;
using BareRun = ReportBareRun;
using Range = ReportRangeTiming;
using RangeWall = ReportNodeCapture::RangeWall;
using StageKernel = ReportStageKernel;
using Sampled = SampledFigure;

// What a figure of the analysis comes from where it depends on the record, for a warning that withholds it.
std::string kernel_time_inputs(const Stage& stage) { return "kernel time (" + stage.kernel_time_source + ")"; }
std::string busy_inputs(const Stage& stage) {
  return "kernel time (" + stage.kernel_time_source + ") / GPU projection (nsys nvtx_gpu_proj_sum)";
}
std::string steps_inputs(const Stage& stage) {
  return stage.steps_source.empty() ? "the stage's steps" : stage.steps_source;
}
std::string time_source(const Kernel& kernel) { return kernel.time_source; }
// The sampled figures' source: a share of a metric's peak that nsys reports as 0..100 per sample.
constexpr std::string_view kSampledShares = "nsys GPU-metrics samples (percent of peak / 100)";

// The tables: report.json's fields, in the order the file lists them, with each figure's bound. Field rows stay
// literal, one per figure, and each record has its own table: a table is read, not computed, so these tables look
// like those of the other record files by design (the duplicates tool pairs them by shape).
template <>
struct RecordTable<ReportNodeCapture::RangeWall> {
  static constexpr RecordField<ReportNodeCapture::RangeWall> fields[] = {
    field<&RangeWall::range>("range"),
    field<&RangeWall::first_capture_ns>("first_capture_ns"),
    field<&RangeWall::node_capture_ns>("node_capture_ns"),
  };
};

template <>
struct RecordTable<ReportStageKernel> {
  static constexpr RecordField<ReportStageKernel> fields[] = {
    field<&StageKernel::name>("name"),
    field<&StageKernel::time_ns>("time_ns"),
    field<&StageKernel::share>("share").within(FigureBound::fraction, "its time / the stage's kernel time"),
  };
};

template <>
struct RecordTable<ReportSampledPoint> {
  static constexpr RecordField<ReportSampledPoint> fields[] = {
    field<&ReportSampledPoint::offset_ns>("offset_ns"),
    field<&ReportSampledPoint::sm_active>("sm_active"),
    field<&ReportSampledPoint::tensor_active>("tensor_active"),
    field<&ReportSampledPoint::dram>("dram"),
  };
};

template <>
struct RecordTable<ReportStage> {
  static constexpr RecordField<ReportStage> fields[] = {
    name_field<&Stage::name>("name"),
    field<&Stage::domain>("domain"),
    field<&Stage::parent>("parent"),
    field<&Stage::level>("level"),
    field<&Stage::wall_ns>("wall_ns").within(FigureBound::non_negative, "nsys nvtx_sum"),
    field<&Stage::gpu_projection_ns>("gpu_projection_ns").within(FigureBound::non_negative, "nsys nvtx_gpu_proj_sum"),
    field<&Stage::kernel_time_ns>("kernel_time_ns").within(FigureBound::non_negative, kernel_time_inputs),
    field<&Stage::kernel_instances>("kernel_instances").within(FigureBound::non_negative, kernel_time_inputs),
    field<&Stage::kernel_time_source>("kernel_time_source"),
    field<&Stage::gpu_busy_fraction>("gpu_busy_fraction").within(FigureBound::fraction, busy_inputs),
    field<&Stage::flop>("flop").within(FigureBound::non_negative, "ncu FLOP per launch x nsys instances"),
    field<&Stage::flop_coverage>("flop_coverage")
        .within(FigureBound::fraction, "ncu-profiled kernel time / kernel time"),
    field<&Stage::achieved_flop_per_s>("achieved_flop_per_s")
        .within(FigureBound::non_negative, "flop / the stage's time"),
    field<&Stage::flop_per_s_while_busy>("flop_per_s_while_busy")
        .within(FigureBound::non_negative, "flop / kernel time"),
    field<&Stage::dominant_precision>("dominant_precision"),
    field<&Stage::mfu>("mfu")
        .within(FigureBound::fraction, "achieved_flop_per_s / the device's peak (ncu peak metrics or datasheet)"),
    field<&Stage::model_flop_per_s>("model_flop_per_s").within(FigureBound::non_negative, "stage1/metrics.json"),
    field<&Stage::mfu_workload>("mfu_workload")
        .within(FigureBound::fraction, "stage1/metrics.json FLOP/token x tokens/s / the device's peak"),
    field<&Stage::mfu_gap_reason>("mfu_gap_reason"),
    field<&Stage::rate_time_ns>("rate_time_ns"),
    field<&Stage::rate_time_source>("rate_time_source"),
    field<&Stage::rate_time_note>("rate_time_note"),
    field<&Stage::dram_bytes>("dram_bytes")
        .within(FigureBound::non_negative, "ncu DRAM bytes per launch x nsys instances"),
    field<&Stage::dram_coverage>("dram_coverage")
        .within(FigureBound::fraction, "kernel time with ncu DRAM bytes / kernel time"),
    field<&Stage::dram_coverage_extrapolated>("dram_coverage_extrapolated")
        .within(FigureBound::fraction,
                "kernel time whose bytes come from another launch configuration / kernel time"),
    field<&Stage::steps>("steps").within(FigureBound::non_negative, steps_inputs),
    field<&Stage::steps_source>("steps_source"),
    field<&Stage::step_basis>("step_basis"),
    field<&Stage::dram_bytes_per_step>("dram_bytes_per_step").within(FigureBound::non_negative, "dram_bytes / steps"),
    field<&Stage::dram_bytes_per_s>("dram_bytes_per_s")
        .within(FigureBound::non_negative, "dram_bytes / the stage's time"),
    field<&Stage::dram_bytes_per_s_while_busy>("dram_bytes_per_s_while_busy")
        .within(FigureBound::non_negative, "dram_bytes / kernel time"),
    field<&Stage::mbu>("mbu").within(FigureBound::fraction, "dram_bytes_per_s / the device's peak DRAM bandwidth"),
    field<&Stage::model_bytes_per_step>("model_bytes_per_step"),
    field<&Stage::mbu_workload>("mbu_workload")
        .within(FigureBound::fraction,
                "stage1/metrics.json model_bytes_per_step x steps/s / the device's peak DRAM bandwidth"),
    field<&Stage::bytes_comparison>("bytes_comparison"),
    field<&Stage::kernel_bound>("kernel_bound"),
    field<&Stage::step_ns>("step_ns").within(FigureBound::non_negative, "the stage's time / steps"),
    field<&Stage::limit_step_ns>("limit_step_ns"),
    field<&Stage::share_of_limit>("share_of_limit"),
    field<&Stage::kernel_launches_per_s>("kernel_launches_per_s")
        .within(FigureBound::non_negative, "kernel_instances / the stage's time"),
    field<&Stage::sampled_samples>("sampled_samples").within(FigureBound::non_negative, kSampledShares),
    field<&Stage::sampled_sm_active, &Sampled::mean>("sampled_sm_active")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_sm_active, &Sampled::p10>("sampled_sm_active_p10")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_sm_active, &Sampled::p50>("sampled_sm_active_p50")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_sm_active, &Sampled::p90>("sampled_sm_active_p90")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_tensor_active, &Sampled::mean>("sampled_tensor_active")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_tensor_active, &Sampled::p10>("sampled_tensor_active_p10")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_tensor_active, &Sampled::p50>("sampled_tensor_active_p50")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_tensor_active, &Sampled::p90>("sampled_tensor_active_p90")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_read, &Sampled::mean>("sampled_dram_read")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_read, &Sampled::p10>("sampled_dram_read_p10")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_read, &Sampled::p50>("sampled_dram_read_p50")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_read, &Sampled::p90>("sampled_dram_read_p90")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_write, &Sampled::mean>("sampled_dram_write")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_write, &Sampled::p10>("sampled_dram_write_p10")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_write, &Sampled::p50>("sampled_dram_write_p50")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_write, &Sampled::p90>("sampled_dram_write_p90")
        .within(FigureBound::fraction, kSampledShares),
    field<&Stage::sampled_dram_bytes_per_step>("sampled_dram_bytes_per_step")
        .within(FigureBound::non_negative,
                "sampled (read + write) shares x peak DRAM bandwidth x sample period / steps"),
    field<&Stage::sampled_mbu>("sampled_mbu").within(FigureBound::fraction, "mean sampled (read + write) share"),
    field<&Stage::sampled_to_measured_bytes>("sampled_to_measured_bytes")
        .within(FigureBound::non_negative, "sampled_dram_bytes_per_step / dram_bytes_per_step"),
    field<&Stage::sampled_note>("sampled_note"),
    field<&Stage::sampled_median_step>("sampled_median_step"),
    field<&Stage::headroom>("headroom"),
    field<&Stage::verdict>("verdict"),
    field<&Stage::top_kernels>("top_kernels"),
    // Last, so that stages.csv's earlier columns keep their places for readers that count them.
    field<&Stage::library>("library"),
  };
};

template <>
struct RecordTable<ReportKernel> {
  static constexpr RecordField<ReportKernel> fields[] = {
    name_field<&Kernel::name>("name"),
    field<&Kernel::stages>("stages"),
    field<&Kernel::instances>("instances").within(FigureBound::non_negative, time_source),
    field<&Kernel::total_time_ns>("total_time_ns").within(FigureBound::non_negative, time_source),
    field<&Kernel::avg_time_ns>("avg_time_ns").within(FigureBound::non_negative, time_source),
    field<&Kernel::share_of_total>("share_of_total").within(FigureBound::fraction, time_source),
    field<&Kernel::time_source>("time_source"),
    field<&Kernel::profiled_launches>("profiled_launches"),
    field<&Kernel::flop_per_launch>("flop_per_launch").within(FigureBound::non_negative, "ncu FLOP metrics"),
    field<&Kernel::dram_bytes_per_launch>("dram_bytes_per_launch").within(FigureBound::non_negative, "ncu dram__bytes"),
    field<&Kernel::arithmetic_intensity>("arithmetic_intensity")
        .within(FigureBound::non_negative, "ncu FLOP / DRAM bytes"),
    field<&Kernel::achieved_flop_per_s>("achieved_flop_per_s")
        .within(FigureBound::non_negative, "ncu FLOP / gpu__time_duration"),
    field<&Kernel::pct_peak_compute>("pct_peak_compute").within(FigureBound::percent, "ncu FLOP rate / ncu peak"),
    field<&Kernel::pct_peak_dram>("pct_peak_dram").within(FigureBound::percent, "ncu DRAM throughput / ncu peak"),
    field<&Kernel::bound>("bound"),
    field<&Kernel::precision>("dominant_precision"),
    field<&Kernel::ncu_name>("ncu_name"),
    field<&Kernel::ncu_name_join>("ncu_name_join"),
  };
};

// Every key required on reading: the analysis writes them all from stage1/metrics.json, whose reader requires them.
template <>
struct RecordTable<ReportBareRun> {
  static constexpr RecordField<ReportBareRun> fields[] = {
    field<&BareRun::device>("device").required_key(),
    field<&BareRun::device_name>("device_name").required_key(),
    field<&BareRun::dtype>("dtype").required_key(),
    field<&BareRun::batch>("batch").required_key(),
    field<&BareRun::prompt_tokens>("prompt_tokens").required_key(),
    field<&BareRun::new_tokens>("new_tokens").required_key(),
    field<&BareRun::parameters>("parameters").required_key(),
    field<&BareRun::prefill_s>("prefill_s").required_key(),
    field<&BareRun::decode_s>("decode_s").required_key(),
    field<&BareRun::tokens_per_s>("tokens_per_s").required_key(),
    field<&BareRun::time_per_output_token_s>("time_per_output_token_s").required_key(),
    field<&BareRun::flop_per_token>("flop_per_token").required_key(),
    field<&BareRun::flop_per_prefill>("flop_per_prefill").required_key(),
  };
};

template <>
struct RecordTable<ReportRangeTiming> {
  static constexpr RecordField<ReportRangeTiming> fields[] = {
    name_field<&Range::name>("name"),
    field<&Range::domain>("domain"),
    field<&Range::style>("style"),
    field<&Range::instances>("instances"),
    field<&Range::total_ns>("total_ns"),
    field<&Range::mean_ns>("mean_ns"),
    field<&Range::p50_ns>("p50_ns"),
    field<&Range::p99_ns>("p99_ns"),
    field<&Range::min_ns>("min_ns"),
    field<&Range::max_ns>("max_ns"),
    field<&Range::stddev_ns>("stddev_ns"),
    field<&Range::source>("source"),
  };
};

template <>
struct RecordTable<ReportNodeCapture> {
  static constexpr RecordField<ReportNodeCapture> fields[] = {
      field<&ReportNodeCapture::kernel_tables>("kernel_tables"),
      field<&ReportNodeCapture::range_walls>("range_walls"),
  };
};

// The verdict (report.json "verdict"): each lever's gain must be a gain, and each step figure a time.
template <>
struct RecordTable<VerdictLever> {
  static constexpr RecordField<VerdictLever> fields[] = {
      name_field<&VerdictLever::name>("name"),
      field<&VerdictLever::speedup>("speedup").within(FigureBound::gain, "the step now / the step with the lever pulled"),
      field<&VerdictLever::after>("after"),
      field<&VerdictLever::figure>("figure"),
      field<&VerdictLever::withheld>("withheld"),
      field<&VerdictLever::section>("section"),
  };
};

template <>
struct RecordTable<VerdictStage> {
  static constexpr RecordField<VerdictStage> fields[] = {
      name_field<&VerdictStage::stage>("stage"),
      field<&VerdictStage::main>("main"),
      field<&VerdictStage::step_ns>("step_ns")
          .within(FigureBound::non_negative, "the bare run's time per token, else the stage's step under the profiler"),
      field<&VerdictStage::step_from_bare_run>("step_from_bare_run"),
      field<&VerdictStage::profiled_step_ns>("profiled_step_ns")
          .within(FigureBound::non_negative, "the timeline's steady-state step, else stages[].step_ns"),
      field<&VerdictStage::gpu_work_step_ns>("gpu_work_step_ns")
          .within(FigureBound::non_negative, "the timeline's GPU busy time / steps"),
      field<&VerdictStage::hbm_limit_step_ns>("hbm_limit_step_ns")
          .within(FigureBound::non_negative, "stages[].dram_bytes_per_step / device.peak_dram_bytes_per_s"),
      field<&VerdictStage::compute_limit_step_ns>("compute_limit_step_ns")
          .within(FigureBound::non_negative, "stages[].flop / steps / the dominant precision's peak FLOP/s"),
      field<&VerdictStage::levers>("levers"),
  };
};

template <>
struct RecordTable<RunVerdict> {
  static constexpr RecordField<RunVerdict> fields[] = {
      field<&RunVerdict::headline>("headline"),
      field<&RunVerdict::stages>("stages"),
  };
};

namespace {

json::object peaks_json(const ReportDevicePeaks& peaks) {
  json::object object;
  object["name"] = peaks.name;
  object["peak_flop_per_s"] = json_number_object(peaks.peak_flop_per_s);
  object["peak_dram_bytes_per_s"] = json_or_null(peaks.peak_dram_bytes_per_s);
  json::object sources;
  for (const auto& [key, value] : peaks.sources) sources[key] = value;
  object["sources"] = std::move(sources);
  return object;
}

void read_peaks(const json::object& object, const std::string& where, ReportDevicePeaks& peaks) {
  read_field(object, "name", where + "name", peaks.name);
  // A null peak is no peak for that precision, as report.json's reader has always taken it.
  for (auto& entry : json_number_map(object, "peak_flop_per_s", where + "peak_flop_per_s", NullEntries::passed_over))
    peaks.peak_flop_per_s.push_back(std::move(entry));
  read_field(object, "peak_dram_bytes_per_s", where + "peak_dram_bytes_per_s", peaks.peak_dram_bytes_per_s);
  for (auto& [key, value] : json_string_map(object, "sources", where + "sources")) peaks.sources.emplace_back(key, value);
}

}  // namespace

json::object report_json(const ReportDevice& device) {
  json::object object = peaks_json(device);
  if (device.datasheet) object["datasheet"] = peaks_json(*device.datasheet);
  return object;
}

json::object report_json(const ReportStage& stage) { return write_record(stage); }
json::object report_json(const ReportKernel& kernel) { return write_record(kernel); }
json::object report_json(const ReportBareRun& run) { return write_record(run); }
json::object report_json(const ReportRangeTiming& range) { return write_record(range); }
json::object report_json(const ReportNodeCapture& capture) { return write_record(capture); }
json::object report_json(const RunVerdict& verdict) { return write_record(verdict); }

void read_report_json(const json::object& object, const std::string& where, ReportDevice& device) {
  read_peaks(object, where, device);
  if (const auto* datasheet = object.if_contains("datasheet"); datasheet != nullptr && !datasheet->is_null()) {
    if (!datasheet->is_object()) throw JsonFieldError{where + "datasheet"};
    device.datasheet.emplace();
    read_peaks(datasheet->get_object(), where + "datasheet.", *device.datasheet);
  }
}

void read_report_json(const json::object& object, const std::string& where, ReportStage& stage) {
  read_record(object, where, stage);
}
void read_report_json(const json::object& object, const std::string& where, ReportKernel& kernel) {
  read_record(object, where, kernel);
}
void read_report_json(const json::object& object, const std::string& where, ReportBareRun& run) {
  require_record_keys<ReportBareRun>(object, where);
  read_record(object, where, run);
}
void read_report_json(const json::object& object, const std::string& where, ReportRangeTiming& range) {
  read_record(object, where, range);
}
void read_report_json(const json::object& object, const std::string& where, ReportNodeCapture& capture) {
  read_record(object, where, capture);
}

void read_report_json(const json::object& object, const std::string& where, RunVerdict& verdict) {
  read_record(object, where, verdict);
}

void withhold_impossible_figures(ReportStage& stage, FigureChecker& check, std::string_view file,
                                 std::span<const std::string_view> only) {
  check_record_bounds(stage, check, file, only);
  const bool shares = only.empty() || std::find(only.begin(), only.end(), "top_kernels") != only.end();
  if (!shares) return;
  for (auto& kernel : stage.top_kernels) check_record_bounds(kernel, check, file, {}, kernel.name);
}
void withhold_impossible_figures(ReportKernel& kernel, FigureChecker& check, std::string_view file) {
  check_record_bounds(kernel, check, file);
}

void withhold_impossible_figures(RunVerdict& verdict, FigureChecker& check, std::string_view file) {
  for (std::size_t i = 0; i < verdict.stages.size(); ++i) {
    auto& stage = verdict.stages[i];
    const std::string where = std::string(file) + (file.empty() ? "" : " ") + "verdict.stages[" + std::to_string(i) + "]";
    check_record_bounds(stage, check, file.empty() ? std::string_view() : std::string_view(where), {}, stage.stage);
    for (auto& lever : stage.levers) {
      const bool had_gain = lever.speedup.has_value();
      check_record_bounds(lever, check, file.empty() ? std::string_view() : std::string_view(where), {},
                          stage.stage + "' lever '" + lever.name);
      // A gain withheld here needs its reason in the lever's row too, not an empty "withheld:".
      if (had_gain && !lever.speedup && lever.withheld.empty()) {
        lever.withheld = "its gain cannot be true (see the warnings)";
        lever.after.clear();
      }
    }
  }
}

std::string report_csv(const std::vector<ReportStage>& stages) { return write_csv(stages); }
std::string report_csv(const std::vector<ReportKernel>& kernels) { return write_csv(kernels); }

}  // namespace llmprof::detail
