// llmprof::nvtx: RAII NVTX push/pop ranges for workloads (header-only, no Boost, C++17).
//
// Ranges are push/pop on purpose: `ncu --nvtx-include "decode/"` matches only push/pop ranges
// (Nsight Compute 2025.3 warns about this when a start/end range was meant), and
// `nsys --capture-range=nvtx` gates on them too.
//
// Build switch: LLMPROF_NVTX_ENABLED is set by the llmprof::nvtx CMake target (1 when NVTX3
// headers were found, 0 otherwise). With 0, every call compiles to nothing.
//
//   llmprof::nvtx::ScopedRange prefill{"prefill"};              // default domain -> ":prefill" in nsys
//   llmprof::nvtx::Domain mine{"llm"};                          // named domain   -> "llm:prefill"
//   llmprof::nvtx::ScopedRange step{mine, "decode_step"};
#pragma once

#ifndef LLMPROF_NVTX_ENABLED
#define LLMPROF_NVTX_ENABLED 0
#endif

#if LLMPROF_NVTX_ENABLED
#include <nvtx3/nvToolsExt.h>
#endif

namespace llmprof::nvtx {

// True when ranges are compiled in (they still cost nothing measurable when no tool is attached).
constexpr bool enabled() noexcept { return LLMPROF_NVTX_ENABLED != 0; }

// A named NVTX domain. A default-constructed Domain is NVTX's default domain.
//
// The registration lives as long as the process, as NVTX3's own C++ API has it (nvtx3::domain::get<D>()
// never destroys a domain): nvtxDomainCreateA returns the same handle for the same name, and a ScopedRange
// keeps the handle itself, so a range that outlives the Domain object it was opened with still pops the
// right domain (before, it kept a pointer to the Domain and ~Domain destroyed the handle under it).
class Domain {
 public:
  Domain() noexcept = default;
  explicit Domain(const char* name) noexcept {
#if LLMPROF_NVTX_ENABLED
    if (name != nullptr && name[0] != '\0') handle_ = nvtxDomainCreateA(name);
#else
    (void)name;
#endif
  }
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  bool is_default() const noexcept {
#if LLMPROF_NVTX_ENABLED
    return handle_ == nullptr;
#else
    return true;
#endif
  }

  void push(const char* name) const noexcept {
#if LLMPROF_NVTX_ENABLED
    push_in(handle_, name);
#else
    (void)name;
#endif
  }

  void pop() const noexcept {
#if LLMPROF_NVTX_ENABLED
    pop_in(handle_);
#endif
  }

 private:
  friend class ScopedRange;
#if LLMPROF_NVTX_ENABLED
  static void push_in(nvtxDomainHandle_t handle, const char* name) noexcept {
    if (handle == nullptr) {
      nvtxRangePushA(name);
      return;
    }
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    nvtxDomainRangePushEx(handle, &attributes);
  }
  static void pop_in(nvtxDomainHandle_t handle) noexcept {
    if (handle == nullptr) {
      nvtxRangePop();
      return;
    }
    nvtxDomainRangePop(handle);
  }
  nvtxDomainHandle_t handle_ = nullptr;
#endif
};

// Pushes a range on construction and pops it on destruction (also during stack unwinding). It keeps the
// domain's handle, not the Domain: destroying the Domain object first leaves the range valid.
class ScopedRange {
 public:
  explicit ScopedRange(const char* name) noexcept {
#if LLMPROF_NVTX_ENABLED
    Domain::push_in(nullptr, name);
#else
    (void)name;
#endif
  }
  ScopedRange(const Domain& domain, const char* name) noexcept {
#if LLMPROF_NVTX_ENABLED
    handle_ = domain.handle_;
    Domain::push_in(handle_, name);
#else
    (void)domain;
    (void)name;
#endif
  }
  ~ScopedRange() {
#if LLMPROF_NVTX_ENABLED
    Domain::pop_in(handle_);
#endif
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
#if LLMPROF_NVTX_ENABLED
  nvtxDomainHandle_t handle_ = nullptr;
#endif
};

}  // namespace llmprof::nvtx
