// core must not see the report layer.
#include "llmprof/report.hpp"
