// Indented JSON text for files people read (run.json, env.json, inputs.json).
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace llmprof::detail {

// Two-space indentation, one key per line, a trailing newline; the same values boost::json::serialize writes.
std::string pretty_json(const boost::json::value& value);

}  // namespace llmprof::detail
