// FakeProcessRunner: a scripted llmprof::ProcessRunner for tests that must not start real programs.
//
// Give it rules, each a matcher on the ProcessSpec and the answer the "process" gives; every run()
// records the spec and answers with the first rule that matches and still has uses left. An answer
// can print stdout/stderr lines (delivered to the spec's callbacks and written to its
// stdout_file/stderr_file, like the real runner), exit with a code, die by a signal, time out, fail
// to start with an Error, create files (e.g. the report nsys would write) and run any side effect.
// A run no rule matches returns Error(not_found) "no scripted answer for: <argv>", so a test sees
// an unexpected command at once. request_stop()/reset_stop() behave like the system runner's: after
// a stop every run answers interrupted without matching anything.
//
//   using namespace llmprof::testing;
//   FakeProcessRunner runner;
//   runner.on(command_is("nsys", {"--version"}), FakeAnswer::printing({"NVIDIA Nsight Systems version 2025.3.1"}));
//   runner.on(command_is("nsys", {"profile"}),
//             FakeAnswer::exiting(0).writing("{output}.nsys-rep", "report bytes"));   // see `writing`
//   ... code under test ...
//   CHECK(runner.runs().size() == 2);
//   CHECK(runner.runs()[1].argv[1] == "profile");
//
// Paths given to `writing` may contain "{arg:-o}" (replaced by the argument after "-o" in argv) and
// "{output}" (shorthand for {arg:-o}); a relative path is taken from the spec's working_directory.
// Thread-safe: runs may come from several threads.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"

namespace llmprof::testing {

// What one fake run does and answers.
struct FakeAnswer {
  std::vector<std::string> stdout_lines;
  std::vector<std::string> stderr_lines;
  int exit_code = 0;
  std::optional<int> signal;                               // killed by this signal instead of exiting
  bool timed_out = false;                                  // the outcome says the runner killed it after spec.timeout
  std::optional<Error> error;                              // run() returns this Error (the program could not start)
  std::vector<std::pair<std::string, std::string>> files;  // path pattern -> content, written before answering
  std::function<void(const ProcessSpec&)> action;          // any other side effect
  std::chrono::nanoseconds wall_time{std::chrono::milliseconds(1)};
  // A child that outlives its descendants (a profiler and its application): when the spec's end_descendants
  // is requested while the stdout lines are delivered (from the line callback), the lines not delivered yet
  // are dropped, `tail_lines` follow instead, the run exits with `exit_code` and says descendants_ended.
  // With `never_ends`, the application does not end by itself: when the lines run out with no request, the
  // runner's own limit (spec.end_descendants_after) ends it the same way and the outcome says so.
  struct DescendantsEnd {
    std::vector<std::string> tail_lines;
    int exit_code = 0;
    bool never_ends = false;
  };
  std::optional<DescendantsEnd> on_descendants_end;

  static FakeAnswer exiting(int code) {
    FakeAnswer answer;
    answer.exit_code = code;
    return answer;
  }
  static FakeAnswer printing(std::vector<std::string> lines, int code = 0) {
    FakeAnswer answer = exiting(code);
    answer.stdout_lines = std::move(lines);
    return answer;
  }
  static FakeAnswer killed_by(int signal_number) {
    FakeAnswer answer;
    answer.signal = signal_number;
    return answer;
  }
  static FakeAnswer timing_out(int signal_number = 15) {
    FakeAnswer answer = killed_by(signal_number);
    answer.timed_out = true;
    return answer;
  }
  static FakeAnswer failing_to_start(Error error) {
    FakeAnswer answer;
    answer.error = std::move(error);
    return answer;
  }
  // Chainable additions.
  FakeAnswer& with_stderr(std::vector<std::string> lines) {
    stderr_lines = std::move(lines);
    return *this;
  }
  FakeAnswer& writing(std::string path_pattern, std::string content) {
    files.emplace_back(std::move(path_pattern), std::move(content));
    return *this;
  }
  FakeAnswer& doing(std::function<void(const ProcessSpec&)> side_effect) {
    action = std::move(side_effect);
    return *this;
  }
  FakeAnswer& when_descendants_end(std::vector<std::string> tail, int code) {
    on_descendants_end = DescendantsEnd{std::move(tail), code};
    return *this;
  }
  // After when_descendants_end: the application runs until something ends it (see DescendantsEnd).
  FakeAnswer& never_ending() {
    if (on_descendants_end) on_descendants_end->never_ends = true;
    return *this;
  }
};

using FakeMatcher = std::function<bool(const ProcessSpec&)>;

// argv[0] is `program` or a path whose file name is `program`, and argv[1..] starts with `leading`.
inline FakeMatcher command_is(std::string program, std::vector<std::string> leading = {}) {
  return [program = std::move(program), leading = std::move(leading)](const ProcessSpec& spec) {
    if (spec.argv.empty()) return false;
    if (spec.argv[0] != program && std::filesystem::path(spec.argv[0]).filename() != program) return false;
    if (spec.argv.size() < leading.size() + 1) return false;
    return std::equal(leading.begin(), leading.end(), spec.argv.begin() + 1);
  };
}

// `nsys profile` that captures a workload, not the probe's listings (`nsys profile --gpu-metrics-devices=help`).
inline FakeMatcher nsys_capture() {
  return [](const ProcessSpec& spec) {
    return command_is("nsys", {"profile"})(spec) &&
           std::none_of(spec.argv.begin(), spec.argv.end(), [](const std::string& argument) {
             return argument.size() > 5 && argument.compare(argument.size() - 5, 5, "=help") == 0;
           });
  };
}

// Some argument (after argv[0]) equals `argument`.
inline FakeMatcher argv_contains(std::string argument) {
  return [argument = std::move(argument)](const ProcessSpec& spec) {
    return spec.argv.size() > 1 && std::find(spec.argv.begin() + 1, spec.argv.end(), argument) != spec.argv.end();
  };
}

inline FakeMatcher any_command() {
  return [](const ProcessSpec&) { return true; };
}

class FakeProcessRunner final : public ProcessRunner {
 public:
  static constexpr int unlimited = -1;

  // Adds a rule; `uses` limits how many runs it answers (then later rules get their turn).
  FakeProcessRunner& on(FakeMatcher matcher, FakeAnswer answer, int uses = unlimited) {
    std::lock_guard lock(mutex_);
    rules_.push_back(Rule{std::move(matcher), std::move(answer), uses});
    return *this;
  }

  // Adds a rule that is tried before every earlier one (a test's exception to a fixture's general rule).
  FakeProcessRunner& on_first(FakeMatcher matcher, FakeAnswer answer, int uses = unlimited) {
    std::lock_guard lock(mutex_);
    rules_.insert(rules_.begin(), Rule{std::move(matcher), std::move(answer), uses});
    return *this;
  }

  Result<ProcessOutcome> run(const ProcessSpec& spec) override {
    FakeAnswer answer;
    {
      std::lock_guard lock(mutex_);
      runs_.push_back(spec);
      if (stop_requested_) {
        ProcessOutcome not_started;
        not_started.interrupted = true;
        not_started.timeout = spec.timeout;
        return not_started;
      }
      Rule* rule = find_rule(spec);
      if (rule == nullptr) {
        return make_error(ErrorCode::not_found, "FakeProcessRunner: no scripted answer for: " + joined(spec.argv),
                          "add a rule with runner.on(...) for this command", spec.argv.empty() ? "" : spec.argv[0]);
      }
      if (rule->uses_left > 0) --rule->uses_left;
      answer = rule->answer;
    }
    return perform(spec, answer);
  }

  void request_stop() override {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  void reset_stop() override {
    std::lock_guard lock(mutex_);
    stop_requested_ = false;
  }
  bool stop_requested() const {
    std::lock_guard lock(mutex_);
    return stop_requested_;
  }

  // Every spec run() received, in order (including ones answered with an Error or interrupted).
  std::vector<ProcessSpec> runs() const {
    std::lock_guard lock(mutex_);
    return runs_;
  }
  std::vector<std::vector<std::string>> argvs() const {
    std::lock_guard lock(mutex_);
    std::vector<std::vector<std::string>> result;
    for (const auto& spec : runs_) result.push_back(spec.argv);
    return result;
  }

  // "{output}" / "{arg:-o}" expansion used by FakeAnswer::writing (public for tests of tests).
  static std::filesystem::path expand_path(const std::string& pattern, const ProcessSpec& spec) {
    std::string text = pattern;
    replace_all(text, "{output}", "{arg:-o}");
    for (std::size_t start; (start = text.find("{arg:")) != std::string::npos;) {
      const auto end = text.find('}', start);
      if (end == std::string::npos) break;
      const std::string flag = text.substr(start + 5, end - start - 5);
      std::string value;
      for (std::size_t i = 1; i + 1 < spec.argv.size(); ++i) {
        if (spec.argv[i] == flag) value = spec.argv[i + 1];
      }
      text.replace(start, end - start + 1, value);
    }
    std::filesystem::path path(text);
    if (path.is_relative() && !spec.working_directory.empty()) path = spec.working_directory / path;
    return path;
  }

 private:
  struct Rule {
    FakeMatcher matcher;
    FakeAnswer answer;
    int uses_left;
  };

  Rule* find_rule(const ProcessSpec& spec) {
    for (auto& rule : rules_) {
      if (rule.uses_left != 0 && rule.matcher(spec)) return &rule;
    }
    return nullptr;
  }

  static Result<ProcessOutcome> perform(const ProcessSpec& spec, const FakeAnswer& answer) {
    if (answer.error) return *answer.error;
    for (const auto& [pattern, content] : answer.files) {
      const auto path = expand_path(pattern, spec);
      if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
      std::ofstream(path, std::ios::binary) << content;
    }
    if (answer.action) answer.action(spec);
    if (answer.on_descendants_end) return perform_until_descendants_end(spec, answer);
    write_stream(spec.stdout_file, answer.stdout_lines, false);
    const bool same_file = !spec.stderr_file.empty() && spec.stderr_file == spec.stdout_file;
    write_stream(spec.stderr_file, answer.stderr_lines, same_file);
    for (const auto& line : answer.stdout_lines) {
      if (spec.on_stdout_line) spec.on_stdout_line(line);
    }
    for (const auto& line : answer.stderr_lines) {
      if (spec.on_stderr_line) spec.on_stderr_line(line);
    }
    ProcessOutcome outcome;
    outcome.timeout = spec.timeout;
    outcome.wall_time = answer.wall_time;
    if (answer.signal) {
      outcome.signal = answer.signal;
    } else {
      outcome.exited = true;
      outcome.exit_code = answer.exit_code;
    }
    outcome.timed_out = answer.timed_out;
    return outcome;
  }

  // The stdout lines one at a time, the request to end the descendants checked after each.
  static Result<ProcessOutcome> perform_until_descendants_end(const ProcessSpec& spec, const FakeAnswer& answer) {
    std::vector<std::string> delivered;
    bool ended = false;
    for (const auto& line : answer.stdout_lines) {
      delivered.push_back(line);
      if (spec.on_stdout_line) spec.on_stdout_line(line);
      if (spec.end_descendants && spec.end_descendants->requested()) {
        ended = true;
        break;
      }
    }
    const bool at_limit = !ended && answer.on_descendants_end->never_ends && spec.end_descendants &&
                          spec.end_descendants_after.has_value();
    if (at_limit) {
      spec.end_descendants->request();
      ended = true;
    }
    if (ended) {
      for (const auto& line : answer.on_descendants_end->tail_lines) {
        delivered.push_back(line);
        if (spec.on_stdout_line) spec.on_stdout_line(line);
      }
    }
    write_stream(spec.stdout_file, delivered, false);
    ProcessOutcome outcome;
    outcome.timeout = spec.timeout;
    outcome.wall_time = answer.wall_time;
    outcome.exited = true;
    outcome.exit_code = ended ? answer.on_descendants_end->exit_code : answer.exit_code;
    outcome.descendants_ended = ended;
    outcome.descendants_ended_at_limit = at_limit;
    return outcome;
  }

  static void write_stream(const std::filesystem::path& file, const std::vector<std::string>& lines, bool append) {
    if (file.empty()) return;
    std::ofstream out(file, append ? std::ios::binary | std::ios::app : std::ios::binary | std::ios::trunc);
    for (const auto& line : lines) out << line << '\n';
  }

  static void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
      text.replace(at, from.size(), to);
    }
  }

  static std::string joined(const std::vector<std::string>& argv) {
    std::string text;
    for (const auto& argument : argv) text += (text.empty() ? "" : " ") + argument;
    return text;
  }

  mutable std::mutex mutex_;
  std::vector<Rule> rules_;
  std::vector<ProcessSpec> runs_;
  bool stop_requested_ = false;
};

}  // namespace llmprof::testing
