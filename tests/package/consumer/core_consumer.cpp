// The core on a machine without a CUDA toolkit: validates a configuration built in code.
#include <llmprof/config.hpp>

#include <iostream>

int main() {
  llmprof::DeepProfileConfig config;
  config.run.top_n_kernels = 0;
  const auto valid = llmprof::validate_config(config);
  std::cout << (valid ? "valid" : "rejected: " + valid.error().message) << "\n";
  return valid ? 1 : 0;
}
