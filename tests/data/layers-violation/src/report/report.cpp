#include "llmprof/result.hpp"
#include "core/text.hpp"
