// llmprof::nvtx: a range opened with a named domain stays valid when the Domain object goes first (the range
// keeps the domain's handle; the old pointer to the Domain dangled, which the asan preset reports as a
// heap-use-after-free in this test), and ranges nest across the default and a named domain.
#include <catch2/catch.hpp>

#include <memory>
#include <type_traits>

#include "llmprof/nvtx.hpp"

TEST_CASE("a range outlives the Domain object it was opened with", "[nvtx]") {
  auto domain = std::make_unique<llmprof::nvtx::Domain>("llmprof-test");
  {
    llmprof::nvtx::ScopedRange outer{"prefill"};
    llmprof::nvtx::ScopedRange step{*domain, "decode_step"};
    domain.reset();  // the heap object is gone; ~ScopedRange must not read it
  }
  CHECK(domain == nullptr);
  // Ranges hold no reference to a Domain: nothing to keep alive, nothing to copy.
  CHECK_FALSE(std::is_copy_constructible_v<llmprof::nvtx::ScopedRange>);
  CHECK_FALSE(std::is_copy_constructible_v<llmprof::nvtx::Domain>);
}

TEST_CASE("a default Domain is NVTX's default domain", "[nvtx]") {
  const llmprof::nvtx::Domain default_domain;
  CHECK(default_domain.is_default());
  // A named one gets its handle from the NVTX tool; with none attached (this test) NVTX3 returns no handle, and
  // its ranges go to the default domain, which costs nothing either.
  const llmprof::nvtx::Domain named{"llm"};
  { llmprof::nvtx::ScopedRange range{named, "decode_step"}; }
}
