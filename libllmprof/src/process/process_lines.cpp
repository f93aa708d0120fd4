// Line splitting for ProcessSpec::on_stdout_line / on_stderr_line.
#include "process/process_lines.hpp"

#include <utility>

namespace llmprof::detail {

LineSplitter::LineSplitter(std::function<void(const std::string&)> on_line, std::size_t max_line_bytes)
    : on_line_(std::move(on_line)), max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes) {}

void LineSplitter::feed(std::string_view bytes) {
  for (const char byte : bytes) {
    const bool after_carriage_return = std::exchange(previous_was_carriage_return_, byte == '\r');
    if (byte == '\n' && after_carriage_return) continue;  // "\r\n": the '\r' already ended the line
    if (byte == '\n' || byte == '\r') {
      on_line_(pending_);
      pending_.clear();
      continue;
    }
    if (pending_.size() == max_line_bytes_) {  // only now: a full piece followed by '\n' is one line
      on_line_(pending_);
      pending_.clear();
    }
    pending_.push_back(byte);
  }
}

void LineSplitter::finish() {
  if (!pending_.empty()) on_line_(pending_);
  pending_.clear();
  previous_was_carriage_return_ = false;
}

}  // namespace llmprof::detail
