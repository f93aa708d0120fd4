// The timeline report as a JSON object: written alone by timeline_json() and as the "timeline" member
// of analysis/report.json, from one builder so the two never differ.
#pragma once

#include <boost/json/object.hpp>

#include "llmprof/timeline.hpp"

namespace llmprof::detail {

boost::json::object timeline_json_object(const TimelineReport& report);

}  // namespace llmprof::detail
