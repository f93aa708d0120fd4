// A harness that uses shared Boost.Log and Boost.JSON itself, beside libllmprof (whose own Boost is private
// to libllmprof.so): builds a command from a probe, parses a launcher's rank list, routes the library's log lines
// into its sink, and prints the answers for the test to check.
#include <llmprof/llmprof.hpp>

#include <boost/json.hpp>
#include <boost/log/trivial.hpp>
#include <iostream>
#include <string>

int main() {
  BOOST_LOG_TRIVIAL(info) << "the harness's own Boost.Log line";
  const auto harness_json = boost::json::parse(R"({"harness": "own Boost.JSON"})");

  std::string library_lines;
  llmprof::set_log_sink([&library_lines](const llmprof::LogRecord& line) {
    library_lines += std::string(line.channel) + ": " + std::string(line.message) + "\n";
  });
  llmprof::log_warning("harness", "routed through the sink");

  llmprof::NsysInfo probed;
  probed.found = true;
  probed.path = "/opt/nvidia/nsight-systems/bin/nsys";
  llmprof::NsysProfileOptions options;
  options.capture_range = llmprof::NsysCaptureRange::nvtx;
  options.nvtx_capture = "decode";
  options.output_base = "/tmp/consumer-report";
  options.application = {"./workload", "--steps", "2"};
  const auto command = llmprof::NsysCommand::profile(probed, options);
  const auto ranks = llmprof::parse_rank_list("4-6,0");
  if (!ranks) return 1;
  std::cout << command.to_shell_string() << "\n"
            << "ranks " << llmprof::format_rank_list(*ranks) << "\n"
            << harness_json.at("harness").as_string().c_str() << "\n"
            << "sink: " << library_lines << "version " << LLMPROF_VERSION_STRING << "\n";
  return 0;
}
