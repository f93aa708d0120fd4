// Saturating duration conversions (see duration.hpp).
#include "core/duration.hpp"

#include <cmath>
#include <cstdint>

namespace llmprof::detail {

std::chrono::milliseconds seconds_to_milliseconds(double seconds) {
  if (!(seconds > 0)) return std::chrono::milliseconds(0);
  const double longest_s = std::chrono::duration<double>(kLongestDuration).count();
  if (seconds >= longest_s) return kLongestDuration;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000.0)));
}

std::optional<std::chrono::steady_clock::time_point> deadline_after(std::chrono::steady_clock::time_point start,
                                                                    std::chrono::milliseconds duration) {
  using Clock = std::chrono::steady_clock;
  if (duration <= std::chrono::milliseconds(0)) return start;
  // Compare in milliseconds before converting, so the check itself cannot overflow.
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - start);
  if (duration >= room) return std::nullopt;
  return start + std::chrono::duration_cast<Clock::duration>(duration);
}

}  // namespace llmprof::detail
