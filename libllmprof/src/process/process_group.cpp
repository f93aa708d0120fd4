// Process-group queries for the system ProcessRunner.
#include "process/process_group.hpp"

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace llmprof::detail {

bool process_group_has_live_members(pid_t group) {
  if (::kill(-group, 0) != 0 && errno != EPERM) return false;
#if defined(__linux__)
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat_file(entry.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long parent = 0;
    long member_group = 0;
    if (fields >> state >> parent >> member_group && member_group == group && state != 'Z' && state != 'X') {
      return true;
    }
  }
  return static_cast<bool>(error);  // /proc unreadable: trust kill()
#else
  return true;
#endif
}

}  // namespace llmprof::detail
