// Durations saturate instead of overflowing (issue: workload.timeout_s = 1e10 killed the workload at
// 0.0 s and reported a timeout).
#include "core/duration.hpp"

#include <catch2/catch.hpp>
#include <limits>

#include "llmprof/process.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace std::chrono;

TEST_CASE("seconds from a config become milliseconds without overflow") {
  CHECK(detail::seconds_to_milliseconds(1.5) == milliseconds(1500));
  CHECK(detail::seconds_to_milliseconds(0) == milliseconds(0));
  CHECK(detail::seconds_to_milliseconds(-3) == milliseconds(0));
  CHECK(detail::seconds_to_milliseconds(std::nan("")) == milliseconds(0));
  CHECK(detail::seconds_to_milliseconds(1e9) == milliseconds(1'000'000'000'000));  // 31.7 years
  CHECK(detail::seconds_to_milliseconds(1e10) == detail::kLongestDuration);        // 317 years: saturated at 100
  CHECK(detail::seconds_to_milliseconds(1e300) == detail::kLongestDuration);
  CHECK(detail::seconds_to_milliseconds(std::numeric_limits<double>::infinity()) == detail::kLongestDuration);
}

TEST_CASE("a deadline beyond what steady_clock holds is no deadline, not one in the past") {
  const auto now = steady_clock::now();
  CHECK(detail::deadline_after(now, milliseconds(250)) == now + milliseconds(250));
  // 1e10 s in nanoseconds is 1e19 > INT64_MAX: before, now + timeout wrapped to the past.
  CHECK_FALSE(detail::deadline_after(now, milliseconds(10'000'000'000'000)).has_value());
  CHECK_FALSE(detail::deadline_after(now, milliseconds::max()).has_value());
}

TEST_CASE("a process with a timeout of 1e10 s runs to its normal exit") {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 0.2; exit 7"};
  spec.timeout = detail::seconds_to_milliseconds(1e10);
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  CHECK_FALSE(outcome->timed_out);  // before: killed at once and reported as a timeout
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 7);
}
