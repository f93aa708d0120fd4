// LLMPROF_API marks what libllmprof.so exports: the library is compiled with hidden visibility
// (CMAKE_CXX_VISIBILITY_PRESET hidden, VISIBILITY_INLINES_HIDDEN), so a function or class without it stays
// inside the library. The exported names are recorded in libllmprof/abi/exported-symbols.txt and checked
// on every build (docs/library.md "ABI"). C++17, as llmprof/rank.hpp is included by workloads built so.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define LLMPROF_API __attribute__((visibility("default")))
#else
#define LLMPROF_API
#endif
