// run_concurrently: every task on a thread of its own, all joined before it returns, a failure rethrown after.
#include "core/concurrent_tasks.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>

#include "rendezvous.hpp"

using llmprof::detail::run_concurrently;

using llmprof::testing::Rendezvous;

TEST_CASE("run_concurrently runs its tasks side by side") {
  Rendezvous rendezvous(3);
  bool met[3] = {false, false, false};
  run_concurrently({[&] { met[0] = rendezvous.arrive_and_wait(); },
                    [&] { met[1] = rendezvous.arrive_and_wait(); },
                    [&] { met[2] = rendezvous.arrive_and_wait(); }});
  CHECK(met[0]);
  CHECK(met[1]);
  CHECK(met[2]);
}

TEST_CASE("run_concurrently rethrows the first failure in the tasks' order, once every task has ended") {
  Rendezvous rendezvous(3);
  bool last_ended = false;
  CHECK_THROWS_WITH(run_concurrently({[&] {
                                        rendezvous.arrive_and_wait();
                                        throw std::runtime_error("first task");
                                      },
                                      [&] {
                                        rendezvous.arrive_and_wait();
                                        throw std::runtime_error("second task");
                                      },
                                      [&] {
                                        rendezvous.arrive_and_wait();
                                        last_ended = true;
                                      }}),
                    "first task");
  CHECK(last_ended);
}

TEST_CASE("run_concurrently with no task returns at once") {
  CHECK_NOTHROW(run_concurrently({}));
}
