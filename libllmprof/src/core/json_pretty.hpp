// JSON text in and out of llmprof: indented for files people read (run.json, env.json, inputs.json),
// always valid UTF-8 on the way out, tolerant of invalid UTF-8 on the way in.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace llmprof::detail {

// Two-space indentation, one key per line, a trailing newline; the same values boost::json::serialize writes.
// Strings that are not valid UTF-8 are written with U+FFFD in place of each bad byte (see utf8.hpp);
// callers that need the original bytes store them in base64 beside the readable string.
std::string pretty_json(const boost::json::value& value);

// Parses JSON that llmprof or a workload wrote. Invalid UTF-8 inside strings is accepted (older
// llmprof wrote it raw; a workload may), so re-analysing such a run works; the writer above repairs it.
boost::json::value parse_json_text(std::string_view text, boost::system::error_code& error);

}  // namespace llmprof::detail
