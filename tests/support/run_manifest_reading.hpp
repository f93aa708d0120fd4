// Reading a run directory's run.json in tests: the parsed manifest (the test fails when it does not
// parse) and one stage of it by name.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "llmprof/run_directory.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

// The library's reader (llmprof::read_manifest), failing the test when run.json is absent or does not parse.
inline RunManifest manifest_of(const std::filesystem::path& main_directory) {
  auto parsed = llmprof::read_manifest(main_directory);
  REQUIRE(parsed.has_value());
  return parsed.value();
}

// The stage record named `name`; fails the test when run.json has none. A reference into `manifest`.
inline const StageRecord& stage_of(const RunManifest& manifest, const std::string& name) {
  for (const auto& stage : manifest.stages) {
    if (stage.name == name) return stage;
  }
  FAIL("no stage " << name << " in run.json");
  throw std::logic_error("unreachable");
}

// The same from a temporary manifest (`stage_of(bench.manifest(), ...)`): a copy, since a reference into the
// temporary dangles once the statement ends (AddressSanitizer caught one: heap-use-after-free).
inline StageRecord stage_of(RunManifest&& manifest, const std::string& name) {
  const RunManifest& kept = manifest;
  return stage_of(kept, name);
}

}  // namespace llmprof::testing
