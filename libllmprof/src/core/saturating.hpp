// Sums of nanoseconds that saturate instead of overflowing.
//
// The SQLite reader admits rows of up to 2^47 ns (39 hours) each, so 65,536 such rows (a damaged or
// hostile export, the fuzzer's kind of input) overflow a signed 64-bit sum of durations: undefined
// behaviour, and in practice a negative "GPU time". Summed figures pin at the largest value instead,
// which every later check (busy <= time, fractions <= 1) still handles.
#pragma once

#include <cstdint>
#include <limits>

namespace llmprof::detail {

inline void add_saturating(std::int64_t& total, std::int64_t value) {
  if (__builtin_add_overflow(total, value, &total))
    total = value > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

}  // namespace llmprof::detail
