// analysis/ranks.csv (llmprof/ranks_record.hpp): one column table writes it and reads it back, so the report never
// parses by hand what the analysis wrote, and a new per-rank figure is its field, one row here and its docs row.
#include <algorithm>
#include <array>
#include <sstream>
#include <type_traits>

#include "core/figure_checks.hpp"
#include "llmprof/ranks_record.hpp"
#include "parse/csv_columns.hpp"

namespace llmprof {
namespace {

std::string csv_number(const std::optional<double>& value) {
  if (!value) return "";
  std::ostringstream text;
  text.precision(9);
  text << *value;
  return text.str();
}

// A cell of either record: RankFigures' own, or its RankSampling's (written empty for a rank that has none, and
// read into a RankSampling only where the cell holds a value).
template <typename Value>
std::string format_cell(const Value& value) {
  if constexpr (std::is_same_v<Value, std::optional<double>>) {
    return csv_number(value);
  } else if constexpr (std::is_same_v<Value, std::optional<int>>) {
    return value ? std::to_string(*value) : "";
  } else {
    return std::to_string(value);
  }
}

template <typename Value>
void read_cell(Value& value, detail::CsvRow& row, std::size_t column) {
  if constexpr (std::is_same_v<Value, std::optional<double>>) {
    value = row.optional_number(column);
  } else if constexpr (std::is_same_v<Value, std::optional<int>>) {
    if (!row.text(column).empty()) value = static_cast<int>(row.integer(column));
  } else {
    const auto number = row.integer(column);
    if (number < 0 && !std::is_signed_v<Value>) row.refuse(column, "a count below zero");
    value = static_cast<Value>(number);
  }
}

using detail::FigureBound;

// Where the sampled figures come from, for a warning that withholds one.
constexpr const char* kSampledShares = "nsys GPU-metrics samples (percent of peak / 100)";
constexpr const char* kSampledBytes = "sampled (read + write) shares x peak DRAM bandwidth x sample period / steps";

struct RanksColumn {
  const char* name;
  bool sampled;  // written only when some rank was sampled (a file without them is a run that sampled nothing)
  std::string (*write)(const RankFigures&);
  void (*read)(RankFigures&, detail::CsvRow&, std::size_t column);
  // The sampled figure's bound (core/figure_checks.hpp), applied where the figures are made; none for the rest.
  FigureBound bound = FigureBound::none;
  const char* inputs = "";
  void (*check)(RankSampling&, detail::FigureChecker&, const RanksColumn&) = nullptr;
};

template <auto Member>
constexpr RanksColumn figure_column(const char* name) {
  return {name, false, [](const RankFigures& rank) { return format_cell(rank.*Member); },
          [](RankFigures& rank, detail::CsvRow& row, std::size_t column) { read_cell(rank.*Member, row, column); }};
}

// The member of a RankSampling at the end of `Path` (a figure of its SampledStage: &RankSampling::figures,
// &SampledStage::sm_active, &SampledFigure::mean).
template <auto First, auto... Rest, typename Record>
auto& member_at(Record& record) {
  if constexpr (sizeof...(Rest) == 0)
    return record.*First;
  else
    return member_at<Rest...>(record.*First);
}

template <FigureBound Bound, auto... Path>
constexpr RanksColumn sampled_column(const char* name, const char* inputs = "") {
  return {name, true,
          [](const RankFigures& rank) {
            const RankSampling none;
            return format_cell(member_at<Path...>(rank.sampled ? *rank.sampled : none));
          },
          [](RankFigures& rank, detail::CsvRow& row, std::size_t column) {
            if (row.text(column).empty()) return;
            if (!rank.sampled) rank.sampled.emplace();
            read_cell(member_at<Path...>(*rank.sampled), row, column);
          },
          Bound, inputs,
          [](RankSampling& sampling, detail::FigureChecker& check, const RanksColumn& column) {
            if constexpr (Bound != FigureBound::none)
              check.apply(Bound, member_at<Path...>(sampling), column.name, column.inputs);
          }};
}

// The step start basis is the analysis's, written on every row; it sits between the figures and the samples.
constexpr const char* kStepBasisColumn = "step_start_basis";

// The two tables below look alike row by row on purpose: one row per column of the file, each naming its own
// member, is what lets writer, reader and docs test share them (a repeated shape, not repeated logic).
constexpr std::array kFigureColumns = {
    figure_column<&RankFigures::rank>("rank"),
    figure_column<&RankFigures::stage1_wall_s>("stage1_wall_s"),
    figure_column<&RankFigures::nsys_wall_s>("nsys_wall_s"),
    figure_column<&RankFigures::kernel_time_s>("kernel_time_s"),
    figure_column<&RankFigures::collective_kernel_time_s>("collective_kernel_time_s"),
    figure_column<&RankFigures::collective_share>("collective_share"),
    figure_column<&RankFigures::comm_compute_overlap>("comm_compute_overlap"),
    figure_column<&RankFigures::steps>("steps"),
    figure_column<&RankFigures::mean_step_start_lag_ms>("mean_step_start_lag_ms"),
};

constexpr std::array kSampledColumns = {
    sampled_column<FigureBound::none, &RankSampling::source_rank>("sampled_source_rank"),
    sampled_column<FigureBound::none, &RankSampling::clock_shift_ms>("sampled_clock_shift_ms"),
    sampled_column<FigureBound::non_negative, &RankSampling::steps>("sampled_steps", "the rank's step ranges"),
    sampled_column<FigureBound::non_negative, &RankSampling::figures, &SampledStage::samples>("sampled_samples",
                                                                                             kSampledShares),
    sampled_column<FigureBound::fraction, &RankSampling::figures, &SampledStage::sm_active, &SampledFigure::mean>(
        "sampled_sm_active", kSampledShares),
    sampled_column<FigureBound::fraction, &RankSampling::figures, &SampledStage::tensor_active,
                   &SampledFigure::mean>("sampled_tensor_active", kSampledShares),
    sampled_column<FigureBound::fraction, &RankSampling::figures, &SampledStage::mbu>("sampled_mbu", kSampledShares),
    sampled_column<FigureBound::non_negative, &RankSampling::figures, &SampledStage::dram_bytes_per_step>(
        "sampled_dram_bytes_per_step", kSampledBytes),
};

}  // namespace

std::vector<std::string> withhold_impossible_sampled_figures(RankSampling& sampling, const std::string& subject) {
  std::vector<std::string> warnings;
  detail::FigureChecker check(warnings, subject);
  for (const auto& column : kSampledColumns) column.check(sampling, check, column);
  return warnings;
}

std::string write_ranks_csv(const std::vector<RankFigures>& ranks, const std::string& step_basis) {
  const bool sampled =
      std::any_of(ranks.begin(), ranks.end(), [](const RankFigures& rank) { return rank.sampled.has_value(); });
  std::ostringstream csv;
  for (const auto& column : kFigureColumns) csv << column.name << ",";
  csv << kStepBasisColumn;
  if (sampled)
    for (const auto& column : kSampledColumns) csv << "," << column.name;
  csv << "\n";
  for (const auto& rank : ranks) {
    for (const auto& column : kFigureColumns) csv << column.write(rank) << ",";
    csv << step_basis;
    if (sampled)
      for (const auto& column : kSampledColumns) csv << "," << column.write(rank);
    csv << "\n";
  }
  return csv.str();
}

Result<RanksCsv> read_ranks_csv(std::istream& in, const std::string& source_name) {
  CsvReader reader(in, source_name);
  if (auto header = reader.read_header(); !header) return header.error();
  std::vector<std::string> required;
  for (const auto& column : kFigureColumns) required.emplace_back(column.name);
  required.emplace_back(kStepBasisColumn);
  auto columns = detail::require_columns(reader, required);
  if (!columns) return columns.error();
  std::vector<std::pair<const RanksColumn*, std::size_t>> sampled;
  for (const auto& column : kSampledColumns)
    if (const auto index = reader.column(column.name)) sampled.emplace_back(&column, *index);
  RanksCsv file;
  const std::size_t width = reader.header().size();
  while (true) {
    auto more = reader.next();
    if (!more) return more.error();
    if (!*more) break;
    detail::CsvRow row(reader);
    row.check_width(width);
    RankFigures rank;
    for (std::size_t i = 0; i < kFigureColumns.size() && !row.error(); ++i)
      kFigureColumns[i].read(rank, row, (*columns)[i]);
    for (const auto& [column, index] : sampled)
      if (!row.error()) column->read(rank, row, index);
    if (row.error()) return *row.error();
    file.step_basis = std::string(row.text(columns->back()));
    file.ranks.push_back(std::move(rank));
  }
  return file;
}

}  // namespace llmprof
