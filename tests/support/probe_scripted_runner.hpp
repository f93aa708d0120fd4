// A ProcessRunner that answers from a script instead of starting processes (tool probe and resolver tests).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/process.hpp"

namespace llmprof::testing {

struct ScriptedReply {
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
  std::function<void(const ProcessSpec&)> effect;  // e.g. write the file an importer would write
};

class ScriptedRunner : public ProcessRunner {
 public:
  // Key: argv joined with single spaces.
  void on(const std::string& command, ScriptedReply reply) { replies_[command] = std::move(reply); }

  Result<ProcessOutcome> run(const ProcessSpec& spec) override {
    std::string key;
    for (const auto& argument : spec.argv) key += (key.empty() ? "" : " ") + argument;
    {
      std::lock_guard lock(calls_mutex_);  // the probe runs its listings side by side
      calls.push_back(key);
    }
    const auto it = replies_.find(key);
    if (it == replies_.end()) {
      return make_error(ErrorCode::not_found, "scripted runner has no reply for `" + key + "`", "", key);
    }
    deliver(it->second.stdout_text, spec.on_stdout_line);
    deliver(it->second.stderr_text, spec.on_stderr_line);
    if (it->second.effect) it->second.effect(spec);
    ProcessOutcome outcome;
    outcome.exited = true;
    outcome.exit_code = it->second.exit_code;
    return outcome;
  }
  void request_stop() override {}

  std::vector<std::string> calls;

 private:
  static void deliver(const std::string& text, const std::function<void(const std::string&)>& callback) {
    if (!callback) return;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) callback(line);
  }
  std::map<std::string, ScriptedReply> replies_;
  std::mutex calls_mutex_;
};

}  // namespace llmprof::testing
