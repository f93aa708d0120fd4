// Nsight Compute CSV exports (raw page: a column per metric; long form: a row per metric) into
// NcuKernelLaunch records, streamed one launch at a time.
#include "llmprof/ncu_metrics.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>

#include "llmprof/csv.hpp"
#include "parse/csv_columns.hpp"
#include "parse/ncu_columns.hpp"
#include "parse/ncu_units.hpp"

namespace llmprof {
namespace {

using detail::CsvRow;
using detail::kNvtxPushPopColumn;

struct IdentityColumns {
  std::size_t id = 0;
  std::size_t kernel_name = 0;
  std::optional<std::size_t> process_id, process_name, host_name, nvtx, context, stream, block_size, grid_size, device,
      compute_capability;
};

Result<IdentityColumns> find_identity_columns(const CsvReader& reader) {
  auto required = detail::require_columns(reader, {"ID", "Kernel Name"});
  if (!required) return required.error();
  IdentityColumns columns;
  columns.id = (*required)[0];
  columns.kernel_name = (*required)[1];
  columns.process_id = reader.column("Process ID");
  columns.process_name = reader.column("Process Name");
  columns.host_name = reader.column("Host Name");
  columns.nvtx = reader.column(kNvtxPushPopColumn);
  columns.context = reader.column("Context");
  columns.stream = reader.column("Stream");
  columns.block_size = reader.column("Block Size");
  columns.grid_size = reader.column("Grid Size");
  columns.device = reader.column("Device");
  columns.compute_capability = reader.column("CC");
  return columns;
}

// Fills the launch's identity from the current row. The NVTX cell is re-parsed only when it
// differs from the previous row's (consecutive launches usually share their ranges).
void read_identity(CsvRow& row, const IdentityColumns& at, NcuKernelLaunch& launch, std::string& nvtx_cell) {
  launch.id = row.integer(at.id);
  launch.kernel_name.assign(row.text(at.kernel_name));
  if (at.process_id) launch.process_id = row.integer(*at.process_id);
  if (at.process_name) launch.process_name.assign(row.text(*at.process_name));
  if (at.host_name) launch.host_name.assign(row.text(*at.host_name));
  if (at.context) launch.context = row.integer(*at.context);
  if (at.stream) launch.stream = row.integer(*at.stream);
  if (at.block_size) launch.block_size.assign(row.text(*at.block_size));
  if (at.grid_size) launch.grid_size.assign(row.text(*at.grid_size));
  if (at.device) launch.device = row.integer(*at.device);
  if (at.compute_capability) launch.compute_capability.assign(row.text(*at.compute_capability));
  if (at.nvtx) {
    const auto cell = row.text(*at.nvtx);
    if (cell != nvtx_cell || launch.nvtx_stack.empty() != cell.empty()) {
      launch.nvtx_stack = parse_ncu_nvtx_stack(cell);
      nvtx_cell.assign(cell);
    }
  }
}

Error no_launches_error(const CsvReader& reader) {
  return make_error(ErrorCode::no_report,
                    reader.source_name() + ": the CSV header is there but no kernel launch follows it",
                    "ncu profiled no kernel: check --kernel-name / --nvtx-include filters and the launch count",
                    reader.source_name());
}

// The raw page: after the header a units row (ID empty), then one row per launch.
class RawLayoutParser {
 public:
  RawLayoutParser(CsvReader& reader, const NcuParseOptions& options, IdentityColumns identity)
      : reader_(reader), identity_(identity) {
    const auto& header = reader.header();
    for (std::size_t i = 0; i < header.size(); ++i) {
      const auto& name = header[i];
      if (detail::is_ncu_non_metric_column(name)) continue;
      if (options.keep_metric && !options.keep_metric(name)) continue;
      columns_.push_back({i, name, 1, ""});
    }
    kinds_.assign(columns_.size(), Kind::missing);
    values_.assign(columns_.size(), 0);
    number_slots_.assign(columns_.size(), nullptr);
    text_slots_.assign(columns_.size(), nullptr);
  }

  Result<std::size_t> run(const NcuLaunchVisitor& visit) {
    std::size_t launches = 0;
    bool first = true;
    for (;;) {
      auto next = detail::next_row(reader_, reader_.header().size());
      if (!next) return next.error();
      if (!*next) break;
      CsvRow& row = **next;
      if (first && row.text(identity_.id).empty()) {  // the units row
        apply_units(row);
        first = false;
        continue;
      }
      first = false;
      read_identity(row, identity_, launch_, nvtx_cell_);
      read_metrics(row);
      if (row.error()) return *row.error();
      ++launches;
      if (!visit(launch_)) break;
    }
    if (launches == 0) return no_launches_error(reader_);
    return launches;
  }

 private:
  enum class Kind : signed char { missing, number, text };
  struct MetricColumn {
    std::size_t index;
    std::string name;
    double factor;
    std::string unit;
  };

  void apply_units(const CsvRow& row) {
    for (auto& column : columns_) {
      auto scale = detail::unit_scale(row.text(column.index));
      column.factor = scale.factor;
      column.unit = std::move(scale.unit);
    }
  }

  // Converts this row's cells; rebuilds the maps only when the set of numeric / text cells
  // differs from the previous row's, otherwise overwrites the values in place (no allocation).
  void read_metrics(const CsvRow& row) {
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      switch (detail::parse_number(row.text(columns_[k].index), values_[k])) {
        case detail::NumberParse::ok:
          kinds_[k] = Kind::number;
          break;
        case detail::NumberParse::missing:
          kinds_[k] = Kind::missing;
          break;
        case detail::NumberParse::invalid:
          kinds_[k] = Kind::text;
          break;
      }
    }
    if (kinds_ != slot_kinds_) {
      rebuild_maps(row);
      return;
    }
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      if (kinds_[k] == Kind::number)
        number_slots_[k]->value = values_[k] * columns_[k].factor;
      else if (kinds_[k] == Kind::text)
        text_slots_[k]->assign(row.text(columns_[k].index));
    }
  }

  void rebuild_maps(const CsvRow& row) {
    launch_.metrics.clear();
    launch_.text_metrics.clear();
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const auto& column = columns_[k];
      if (kinds_[k] == Kind::number) {
        auto it = launch_.metrics.emplace_hint(launch_.metrics.end(), column.name,
                                               NormalizedValue{values_[k] * column.factor, column.unit});
        it->second.value = values_[k] * column.factor;  // a repeated column name: last value wins
        number_slots_[k] = &it->second;
      } else if (kinds_[k] == Kind::text) {
        auto it = launch_.text_metrics.emplace_hint(launch_.text_metrics.end(), column.name, row.text(column.index));
        text_slots_[k] = &it->second;
      }
    }
    slot_kinds_ = kinds_;
  }

  CsvReader& reader_;
  IdentityColumns identity_;
  std::vector<MetricColumn> columns_;
  std::vector<Kind> kinds_, slot_kinds_;
  std::vector<double> values_;
  std::vector<NormalizedValue*> number_slots_;
  std::vector<std::string*> text_slots_;
  NcuKernelLaunch launch_;
  std::string nvtx_cell_;
};

// The long form: one row per (launch, metric); rule rows (empty Metric Name) are skipped.
class LongLayoutParser {
 public:
  LongLayoutParser(CsvReader& reader, const NcuParseOptions& options, IdentityColumns identity,
                   std::vector<std::size_t> metric_columns)
      : reader_(reader),
        options_(options),
        identity_(identity),
        name_(metric_columns[0]),
        unit_(metric_columns[1]),
        value_(metric_columns[2]) {
    width_ = std::max({identity.id, identity.kernel_name, name_, unit_, value_}) + 1;
  }

  Result<std::size_t> run(const NcuLaunchVisitor& visit) {
    std::size_t launches = 0;
    bool open = false;
    for (;;) {
      auto next = detail::next_row(reader_, width_);
      if (!next) return next.error();
      if (!*next) break;
      CsvRow& row = **next;
      if (row.text(name_).empty()) continue;  // a rule's row (--page details), not a metric
      const auto id = row.text(identity_.id);
      if (!open || id != current_id_) {
        if (open) {
          ++launches;
          if (!visit(launch_)) return launches;
          finished_ids_.insert(current_id_);
        }
        if (finished_ids_.count(std::string(id)))
          return reader_.error_here("rows of launch ID " + std::string(id) +
                                    " appear again after other launches; the long layout must be grouped by launch");
        launch_ = NcuKernelLaunch{};
        aliased_.clear();
        read_identity(row, identity_, launch_, nvtx_cell_);
        current_id_.assign(id);
        open = true;
      }
      add_metric(row);
      if (row.error()) return *row.error();
    }
    if (open) {
      ++launches;
      visit(launch_);
    }
    if (launches == 0) return no_launches_error(reader_);
    return launches;
  }

 private:
  void add_metric(const CsvRow& row) {
    const auto name = row.text(name_);
    const auto alias_it = detail::ncu_display_name_aliases().find(name);
    const std::string_view alias =
        alias_it == detail::ncu_display_name_aliases().end() ? std::string_view() : alias_it->second;
    const bool keep_name = !options_.keep_metric || options_.keep_metric(name);
    const bool keep_alias = !alias.empty() && (!options_.keep_metric || options_.keep_metric(alias));
    if (!keep_name && !keep_alias) return;
    double value = 0;
    const auto parsed = detail::parse_number(row.text(value_), value);
    if (parsed == detail::NumberParse::missing) return;
    if (parsed == detail::NumberParse::invalid) {
      if (keep_name) launch_.text_metrics.emplace(name, row.text(value_));
      if (keep_alias) launch_.text_metrics.emplace(alias, row.text(value_));
      return;
    }
    const auto unit = row.text(unit_);
    auto scale_it = unit_cache_.find(std::string(unit));
    if (scale_it == unit_cache_.end())
      scale_it = unit_cache_.emplace(std::string(unit), detail::unit_scale(unit)).first;
    const NormalizedValue normalized{value * scale_it->second.factor, scale_it->second.unit};
    // The first row wins when a section repeats a name, except that a metric printed under its
    // identifier (nc2_log.csv prints both "Duration" and gpu__time_duration.sum) replaces the
    // value an alias put there, since the display value is rounded to two decimals.
    if (keep_name) {
      auto [it, inserted] = launch_.metrics.emplace(name, normalized);
      if (!inserted && aliased_.erase(it->first)) it->second = normalized;
    }
    if (keep_alias && launch_.metrics.emplace(alias, normalized).second) aliased_.emplace(alias);
  }

  CsvReader& reader_;
  const NcuParseOptions& options_;
  IdentityColumns identity_;
  std::size_t name_, unit_, value_, width_;
  std::string current_id_;
  std::set<std::string> finished_ids_;
  std::unordered_map<std::string, detail::UnitScale> unit_cache_;
  std::set<std::string, std::less<>> aliased_;  // metric names this launch got from an alias
  NcuKernelLaunch launch_;
  std::string nvtx_cell_;
};

bool is_ncu_header(std::span<const std::string_view> fields) {
  return !fields.empty() &&
         (fields[0] == "ID" || std::find(fields.begin(), fields.end(), "Kernel Name") != fields.end());
}

Result<NcuCsvInfo> stream_launches(CsvReader& reader, const NcuParseOptions& options, const NcuLaunchVisitor& visit) {
  if (auto header = reader.read_header(); !header) return header.error();
  auto identity = find_identity_columns(reader);
  if (!identity) return identity.error();
  NcuCsvInfo info;
  info.preamble = reader.preamble();
  Result<std::size_t> launches = std::size_t{0};
  if (reader.column("Metric Name") || reader.column("Metric Value")) {
    info.layout = NcuCsvLayout::long_form;
    auto metric_columns = detail::require_columns(reader, {"Metric Name", "Metric Unit", "Metric Value"});
    if (!metric_columns) return metric_columns.error();
    launches = LongLayoutParser(reader, options, *identity, *metric_columns).run(visit);
  } else {
    info.layout = NcuCsvLayout::raw;
    launches = RawLayoutParser(reader, options, *identity).run(visit);
  }
  if (!launches) return launches.error();
  info.launch_count = *launches;
  return info;
}

CsvReaderOptions ncu_reader_options() {
  CsvReaderOptions options;
  options.is_header = is_ncu_header;
  return options;
}

// Runs `stream(visitor)` with a visitor that keeps a copy of every launch.
template <typename Stream>
Result<NcuReport> collect(Stream stream) {
  NcuReport report;
  auto info = stream([&](const NcuKernelLaunch& launch) {
    report.launches.push_back(launch);
    return true;
  });
  if (!info) return info.error();
  report.layout = info->layout;
  report.preamble = std::move(info->preamble);
  return report;
}

}  // namespace

std::optional<double> NcuKernelLaunch::metric(std::string_view name) const {
  const auto it = metrics.find(name);
  if (it == metrics.end()) return std::nullopt;
  return it->second.value;
}

std::optional<std::string_view> NcuKernelLaunch::text_metric(std::string_view name) const {
  const auto it = text_metrics.find(name);
  if (it == text_metrics.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::function<bool(std::string_view)> keep_metrics_with_prefixes(std::vector<std::string> prefixes) {
  return [prefixes = std::move(prefixes)](std::string_view name) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& prefix) { return name.starts_with(prefix); });
  };
}

Result<NcuCsvInfo> for_each_ncu_launch(const std::filesystem::path& csv_file, const NcuParseOptions& options,
                                       const NcuLaunchVisitor& visit) {
  auto reader = CsvReader::open(csv_file, ncu_reader_options());
  if (!reader) return reader.error();
  return stream_launches(*reader, options, visit);
}

Result<NcuCsvInfo> for_each_ncu_launch(std::istream& in, const std::string& source_name, const NcuParseOptions& options,
                                       const NcuLaunchVisitor& visit) {
  CsvReader reader(in, source_name, ncu_reader_options());
  return stream_launches(reader, options, visit);
}

Result<NcuReport> parse_ncu_csv(const std::filesystem::path& csv_file, const NcuParseOptions& options) {
  return collect([&](const NcuLaunchVisitor& visit) { return for_each_ncu_launch(csv_file, options, visit); });
}

Result<NcuReport> parse_ncu_csv(std::istream& in, const std::string& source_name, const NcuParseOptions& options) {
  return collect([&](const NcuLaunchVisitor& visit) { return for_each_ncu_launch(in, source_name, options, visit); });
}

}  // namespace llmprof
