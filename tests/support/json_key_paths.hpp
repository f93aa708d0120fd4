// Every key path of a JSON object ("rule.kind", "kernels[].share"), for the tests that hold a record's written keys
// against its documentation rows: nested objects are walked, and an array of objects through its first element.
#pragma once

#include <boost/json/object.hpp>
#include <set>
#include <string>

namespace llmprof::testing {

inline void collect_keys(const boost::json::object& object, const std::string& prefix, std::set<std::string>& keys) {
  for (const auto& [key, value] : object) {
    const std::string path = prefix + std::string(key);
    keys.insert(path);
    if (value.is_object()) collect_keys(value.get_object(), path + ".", keys);
    if (value.is_array() && !value.get_array().empty() && value.get_array()[0].is_object())
      collect_keys(value.get_array()[0].get_object(), path + "[].", keys);
  }
}

}  // namespace llmprof::testing
