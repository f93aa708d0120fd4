#include "core/text.hpp"
#include "llmprof/result.hpp"
