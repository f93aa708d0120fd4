// libllmprof's version: the one place it is written (the top-level CMakeLists.txt reads it from here, so the
// package version, the shared library's soname and these macros cannot drift).
//
//   #if LLMPROF_VERSION >= 100  // 0.1.0 and later
#pragma once

#define LLMPROF_VERSION_MAJOR 0
#define LLMPROF_VERSION_MINOR 5
#define LLMPROF_VERSION_PATCH 0
// major * 10000 + minor * 100 + patch, for #if comparisons.
#define LLMPROF_VERSION (LLMPROF_VERSION_MAJOR * 10000 + LLMPROF_VERSION_MINOR * 100 + LLMPROF_VERSION_PATCH)

#define LLMPROF_VERSION_STRING_IMPL(major, minor, patch) #major "." #minor "." #patch
#define LLMPROF_VERSION_STRING_EXPAND(major, minor, patch) LLMPROF_VERSION_STRING_IMPL(major, minor, patch)
// "0.1.0"
#define LLMPROF_VERSION_STRING \
  LLMPROF_VERSION_STRING_EXPAND(LLMPROF_VERSION_MAJOR, LLMPROF_VERSION_MINOR, LLMPROF_VERSION_PATCH)
