// Uses the installed library the way a benchmark harness would: build an nsys command, parse a CSV
// number, report the library's answer on stdout so the test can check it.
#include <llmprof/csv.hpp>
#include <llmprof/nsys_command.hpp>
#include <llmprof/nvtx.hpp>

#include <iostream>

int main() {
  llmprof::nvtx::ScopedRange range{"consumer"};
  llmprof::NsysProfileOptions options;
  options.capture_range = llmprof::NsysCaptureRange::nvtx;
  options.nvtx_capture = "decode";
  options.output_base = "/tmp/consumer-report";
  options.application = {"./workload", "--steps", "2"};
  const auto command = llmprof::NsysCommand::profile(options);
  const auto number = llmprof::parse_csv_number("1,712,814");
  if (!number || !number.value()) return 1;
  std::cout << command.to_shell_string() << "\n" << static_cast<long long>(**number) << "\n";
  return 0;
}
