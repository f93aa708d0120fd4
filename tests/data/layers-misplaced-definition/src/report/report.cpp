#include "llmprof/report.hpp"
#include "llmprof/result.hpp"
