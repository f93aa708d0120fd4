// The field tables of the timeline's records that other records hold too: a step kind's step time and top kernels
// (analysis/step_kinds.json) are the timeline's DurationSummary and TimelineKernel, so each type has this one table
// wherever it is written (core/record_fields.hpp: a table is specialised once, and seen by every file that uses it).
#pragma once

#include "core/record_fields.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof::detail {

template <>
struct RecordTable<DurationSummary> {
  static constexpr RecordField<DurationSummary> fields[] = {
      field<&DurationSummary::count>("count"),   field<&DurationSummary::total_ns>("total_ns"),
      field<&DurationSummary::mean_ns>("mean_ns"), field<&DurationSummary::p50_ns>("p50_ns"),
      field<&DurationSummary::p90_ns>("p90_ns"), field<&DurationSummary::p99_ns>("p99_ns"),
      field<&DurationSummary::max_ns>("max_ns"),
  };
};

template <>
struct RecordTable<TimelineKernel> {
  static constexpr RecordField<TimelineKernel> fields[] = {
      name_field<&TimelineKernel::name>("name"),
      field<&TimelineKernel::count>("count"),
      field<&TimelineKernel::total_ns>("total_ns"),
      field<&TimelineKernel::from_graph>("from_graph"),
  };
};

}  // namespace llmprof::detail
