// What an enumerator maps to (an exit status, a run status, a rank) as data: one {enumerator, value} row per
// enumerator and one lookup, rather than a switch per mapping. An enumerator's spelling stays with its enum
// (llmprof/choice.hpp); this is for the other things an enumerator stands for.
//
//   constexpr EnumRow<GateOutcome, ExitCode> kGateExits[] = {{GateOutcome::passed, exit_ok}, ...};
//   static_assert(rows_in_enum_order(kGateExits));
//   return enum_value(kGateExits, outcome, exit_not_ready);
#pragma once

#include <cstddef>

namespace llmprof::detail {

template <class Enum, class Value>
struct EnumRow {
  Enum key;
  Value value;
};

// True when row i names the enumerator whose value is i, for every row: with a static_assert, a table cannot skip
// or repeat an enumerator before its last row (a switch had -Wswitch for that).
template <class Enum, class Value, std::size_t N>
consteval bool rows_in_enum_order(const EnumRow<Enum, Value> (&rows)[N]) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(rows[i].key) != i) return false;
  return true;
}

// The value of `key`'s row; `otherwise` for a key no row names (an integer cast to the enum, or an enumerator the
// table leaves to its caller).
template <class Enum, class Value, std::size_t N>
constexpr Value enum_value(const EnumRow<Enum, Value> (&rows)[N], Enum key, Value otherwise) {
  for (const auto& row : rows)
    if (row.key == key) return row.value;
  return otherwise;
}

}  // namespace llmprof::detail
