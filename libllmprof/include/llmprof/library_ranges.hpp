// Library ranges: the NVTX ranges a library opens around its own calls, as opposed to the ranges a workload
// opens around its own stages. A Hugging Face generate() emits no NVTX of its own, yet CUDA 13's CCCL marks each
// scan it runs (`cub::DeviceScan::InclusiveScan` in the NVTX domain "CCCL"), and PyTorch's emit_nvtx marks every
// operator. Such a range is listed with the others (marked with its library), but it is never the main stage, an
// nsys gate, a step kind or range discovery's choice, and a capture that holds only such ranges is treated as a
// capture without NVTX. The built-in rules, and where each form comes from: docs/library-ranges.md.
// `run.ignore_ranges` adds rules of the user's own ("NAME[@DOMAIN]", `*` for any run of characters).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// Ranges of one library: a name pattern over the whole range name, `*` standing for any run of characters
// (none included), and the NVTX domain the range must be in (nullopt: any domain, the default one included).
struct LLMPROF_API LibraryRangeRule {
  std::string library;                // who emits it: "CCCL", "PyTorch", ..., or "run.ignore_ranges"
  std::string name_pattern;           // "cub::*", "*, seq = *", "*" (every name of the domain)
  std::optional<std::string> domain;  // exact, case-sensitive: "CCCL"
  std::string source;                 // where the form comes from (the library's source, a recorded export)

  bool operator==(const LibraryRangeRule&) const = default;
};

// Whether `name` matches a pattern in which each `*` stands for any run of characters.
LLMPROF_API bool matches_name_pattern(std::string_view pattern, std::string_view name);

// One `run.ignore_ranges` entry: "NAME" (any domain) or "NAME@DOMAIN" (`*@DOMAIN`: every range of the domain;
// `NAME@*`: any domain). Error(invalid_argument) for an empty name or domain, or a second '@'.
LLMPROF_API Result<LibraryRangeRule> parse_ignore_range(std::string_view entry);

// The built-in rules and any the user added; classifies a range by name and domain.
class LLMPROF_API LibraryRanges {
 public:
  LibraryRanges();  // the built-in rules (builtin_library_range_rules())
  // The built-in rules plus one rule per `run.ignore_ranges` entry; the first malformed entry is the error.
  static Result<LibraryRanges> with_ignored(const std::vector<std::string>& ignore_ranges);

  // The library whose rule matches the range first, or nullopt for a range of the workload's own.
  // `domain` is "" for NVTX's default domain.
  std::optional<std::string> library_of(std::string_view name, std::string_view domain) const;
  const std::vector<LibraryRangeRule>& rules() const { return rules_; }

  bool operator==(const LibraryRanges&) const = default;

 private:
  std::vector<LibraryRangeRule> rules_;
};

// The rules every run starts with, in the order they are tried (docs/library-ranges.md lists them).
LLMPROF_API const std::vector<LibraryRangeRule>& builtin_library_range_rules();

}  // namespace llmprof
