// The kernel-name helpers over arbitrary names (names come from nsys / ncu CSV files):
// kernel_function_name, kernel_name_join_key, escape_regex, demangled_name_pattern, kernel_name_regex.
//
// Invariants: no crash / UB; escape_regex(name) and demangled_name_pattern(name) compile as
// ECMAScript regexes that match the name itself (what the --kernel-name regex relies on); the
// function name and join key are idempotent. The regex checks run on names up to 256 bytes
// (std::regex recursion in the checker itself would otherwise dominate).
#include <regex>

#include "fuzz_support.hpp"
#include "llmprof/kernel_name.hpp"

namespace {

void check_matches_itself(const std::string& pattern, std::string_view name, const char* what) {
  try {
    const std::regex compiled(pattern, std::regex::ECMAScript);
    LLMPROF_FUZZ_CHECK(std::regex_search(name.begin(), name.end(), compiled),
                       std::string(what) + " '" + pattern + "' does not match '" + std::string(name) + "'");
  } catch (const std::regex_error& error) {
    llmprof::fuzz::invariant_failed(__FILE__, __LINE__, what,
                                    "'" + pattern + "' is not a valid regex: " + error.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto name = llmprof::fuzz::as_text(data, size);
  const auto function = llmprof::kernel_function_name(name);
  const auto key = llmprof::kernel_name_join_key(name);
  LLMPROF_FUZZ_CHECK(llmprof::kernel_name_join_key(key) == key, "join key not idempotent: '" + key + "'");
  (void)function;
  const auto regex = llmprof::kernel_name_regex({std::string(name)}, llmprof::KernelNameBase::demangled);
  LLMPROF_FUZZ_CHECK(regex.starts_with("regex:"), regex);
  if (size <= 256 && name.find('\0') == std::string_view::npos) {
    check_matches_itself(llmprof::escape_regex(name), name, "escape_regex");
    check_matches_itself(llmprof::demangled_name_pattern(name), name, "demangled_name_pattern");
  }
  return 0;
}
