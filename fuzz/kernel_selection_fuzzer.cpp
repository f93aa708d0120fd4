// The analysis's reader of MAIN/nsys/selection.json (kernel_selection_from_json) over arbitrary JSON text: the
// select stage writes that file, but a run directory is outside input to `deep-profile analyze MAIN`.
//
// Invariants: no crash / leak / UB; text that is not a JSON object, or a selection missing a field, is an Error
// naming the input; an accepted selection has a stage and a kernel regex, and written back by the one writer
// (kernel_selection_json) it reads as the same selection (the writer and the reader cannot drift).
#include <boost/json/serialize.hpp>

#include "rundir/kernel_selection_json.hpp"
#include "core/json_fields.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto object = llmprof::detail::parse_json_object(llmprof::fuzz::as_text(data, size), llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(object);
  if (!object) return 0;
  const auto selection = llmprof::detail::kernel_selection_from_json(object.value(), llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(selection);
  if (!selection) return 0;
  LLMPROF_FUZZ_CHECK(!selection->stage.empty() || object->contains("stage"), "a selection without its stage field");
  const auto again = llmprof::detail::kernel_selection_from_json(llmprof::detail::kernel_selection_json(*selection),
                                                                 llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK(again.has_value(), "the writer's own output does not read back");
  // NaN never comes out of a JSON parser, so equality is exact.
  LLMPROF_FUZZ_CHECK(again.value() == selection.value(), "written and read back, the selection differs");
  return 0;
}
