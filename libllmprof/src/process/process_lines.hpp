// LineSplitter: turns the bytes a child writes into the lines ProcessSpec's callbacks receive.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace llmprof::detail {

// '\n', '\r' and "\r\n" each end one line (ncu and nsys redraw progress with a bare '\r'). A line
// that grows past max_line_bytes is delivered in pieces so that binary output cannot exhaust memory.
class LineSplitter {
 public:
  static constexpr std::size_t default_max_line_bytes = std::size_t{1} << 20;

  explicit LineSplitter(std::function<void(const std::string&)> on_line,
                        std::size_t max_line_bytes = default_max_line_bytes);

  void feed(std::string_view bytes);
  // Delivers the last line when the stream ended without a terminator; idempotent.
  void finish();

 private:
  std::function<void(const std::string&)> on_line_;
  std::size_t max_line_bytes_;
  std::string pending_;
  bool previous_was_carriage_return_ = false;
};

}  // namespace llmprof::detail
