// The timeline's records <-> JSON, through one field table per record (core/record_fields.hpp): the
// analysis writes the "timeline" member of analysis/report.json (and timeline_json()) with the writer, the
// report reads it back with the reader, so a field cannot be written under one name and read under another.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>

#include "llmprof/timeline_record.hpp"

namespace llmprof::detail {

// report.json keeps every instance of the stages the report charts (the selection's loop stage and the stages
// directly inside it, e.g. decode and decode_step) and the first `kept` of any other stage: a two-GPU run's
// report.json held 4,096 all_reduce instances per rank, 3.1 MB. analysis/instances.csv has them all.
struct InstanceCap {
  std::string loop_stage;  // qualified name; "" caps every stage
  std::size_t kept = 512;
};

// `cap`: nullopt writes every instance (timeline_json()).
boost::json::object timeline_json_object(const TimelineReport& report, const std::optional<InstanceCap>& cap = {});

// The report read back. Unknown keys are ignored, absent or null ones keep their defaults; a key of the wrong
// type throws JsonFieldError naming `where` + the key ("timeline.stages[2].cpu_duration.p50_ns"). Instances
// left out by the cap are counted in TimelineStage::instances_omitted.
// analysis/instances.csv: every instance of every stage (report.json keeps only some), one row each: the
// stage, the instance's 1-based index, then the instance's fields as report.json names them.
std::string instances_csv(const TimelineReport& timeline);

TimelineReport read_timeline_record(const boost::json::object& object, const std::string& where);

}  // namespace llmprof::detail
