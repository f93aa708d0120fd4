// Kernel name forms: function identifier, join key, and regex patterns for ncu --kernel-name.
#include "llmprof/kernel_name.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace llmprof {
namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The casts the demangler writes in front of integral template literals: "(int)8", "(bool)0",
// "(unsigned long)3", "(int)-2". Returns the cast's length at `at`, 0 when there is none.
std::size_t literal_cast_length(std::string_view text, std::size_t at) {
  if (at >= text.size() || text[at] != '(') return 0;
  const auto close = text.find(')', at);
  if (close == std::string_view::npos || close + 1 >= text.size()) return 0;
  const char next = text[close + 1];
  if (!(std::isdigit(static_cast<unsigned char>(next)) ||
        (next == '-' && close + 2 < text.size() && std::isdigit(static_cast<unsigned char>(text[close + 2]))))) {
    return 0;
  }
  static const std::set<std::string_view> integral_words = {"unsigned", "signed", "char", "short",
                                                            "int",      "long",   "bool", "__int128"};
  std::string_view inner = text.substr(at + 1, close - at - 1);
  if (inner.empty()) return 0;
  std::size_t start = 0;
  while (start < inner.size()) {
    auto end = inner.find(' ', start);
    if (end == std::string_view::npos) end = inner.size();
    if (!integral_words.count(inner.substr(start, end - start))) return 0;
    start = end + 1;
  }
  return close - at + 1;
}

// The length of a namespace qualifier ("at::", "<unnamed>::", "(anonymous namespace)::") at `at`.
std::size_t qualifier_length(std::string_view text, std::size_t at) {
  if (at > 0 && is_identifier_char(text[at - 1])) return 0;  // inside a longer identifier
  std::size_t end = at;
  for (std::string_view special : {std::string_view("<unnamed>"), std::string_view("(anonymous namespace)")}) {
    if (text.substr(at, special.size()) == special) end = at + special.size();
  }
  if (end == at) {
    if (at >= text.size() || !is_identifier_start(text[at])) return 0;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
  }
  if (text.substr(end, 2) != "::") return 0;
  // "const::" after "operator ()() " is not a namespace, but dropping it is harmless for both tools.
  return end + 2 - at;
}

}  // namespace

// Spelled by the table beside KernelNameBase (kernel_name.hpp), whose literals are NUL-terminated.
const char* to_string(KernelNameBase base) noexcept { return choice_name(base).data(); }

std::string kernel_function_name(std::string_view demangled) {
  // Keep the characters outside template brackets, up to the parameter list.
  std::string outside;
  int angle_depth = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    const char c = demangled[i];
    if (c == '<') {
      ++angle_depth;
    } else if (c == '>') {
      if (angle_depth > 0) --angle_depth;
    } else if (angle_depth == 0) {
      if (c == '(') {
        // "(anonymous namespace)::" is a qualifier, not the parameter list.
        if (demangled.substr(i, 23) == "(anonymous namespace)::") {
          i += 22;
          outside += "::";
          continue;
        }
        break;
      }
      outside += c;
    }
  }
  // Drop the return type ("void ") and the namespaces ("at::native::").
  auto last_space = outside.find_last_of(' ');
  if (last_space != std::string::npos) outside = outside.substr(last_space + 1);
  auto last_scope = outside.rfind("::");
  if (last_scope != std::string::npos) outside = outside.substr(last_scope + 2);
  return outside.empty() ? std::string(demangled) : outside;
}

namespace {
std::string join_key_pass(std::string_view name) {
  std::string key;
  key.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    if (auto cast = literal_cast_length(name, i)) {
      i += cast;
    } else if (auto qualifier = qualifier_length(name, i)) {
      i += qualifier;
    } else if (std::isspace(static_cast<unsigned char>(name[i]))) {
      if (!key.empty() && key.back() != ' ') key += ' ';
      ++i;
    } else {
      key += name[i++];
    }
  }
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}
}  // namespace

// Removing a cast or a qualifier can expose another ("at(int)5::" -> "at5::"), so passes repeat until
// nothing changes; each changing pass shrinks the text, and real names settle in one or two.
std::string kernel_name_join_key(std::string_view name) {
  std::string key = join_key_pass(name);
  for (int pass = 0; pass < 64; ++pass) {
    std::string next = join_key_pass(key);
    if (next == key) break;
    key = std::move(next);
  }
  return key;
}

std::string escape_regex(std::string_view text) {
  constexpr std::string_view kBackslashed = "()[]{}*+?.|^$\\";
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == '<' || c == '>') {
      escaped += '[';
      escaped += c;
      escaped += ']';
      continue;
    }
    if (kBackslashed.find(c) != std::string_view::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string demangled_name_pattern(std::string_view demangled) {
  std::string pattern;
  std::size_t literal_start = 0;
  auto flush = [&](std::size_t end) { pattern += escape_regex(demangled.substr(literal_start, end - literal_start)); };
  for (std::size_t i = 0; i < demangled.size();) {
    std::size_t optional = literal_cast_length(demangled, i);
    if (!optional) optional = qualifier_length(demangled, i);
    if (optional) {
      flush(i);
      pattern += "(?:" + escape_regex(demangled.substr(i, optional)) + ")?";
      i += optional;
      literal_start = i;
    } else {
      ++i;
    }
  }
  flush(demangled.size());
  return pattern;
}

namespace {

std::string anchored_alternation(const std::vector<std::string>& alternatives) {
  std::string regex = "regex:^(?:";
  for (std::size_t i = 0; i < alternatives.size(); ++i) {
    if (i) regex += '|';
    regex += alternatives[i];
  }
  return regex + ")$";
}

void add_alternative(std::vector<std::string>& alternatives, std::string alternative) {
  if (std::find(alternatives.begin(), alternatives.end(), alternative) == alternatives.end())
    alternatives.push_back(std::move(alternative));
}

}  // namespace

std::string mangled_name_regex(const std::vector<std::string>& mangled_names) {
  std::vector<std::string> alternatives;
  for (const auto& name : mangled_names) add_alternative(alternatives, escape_regex(name));
  return anchored_alternation(alternatives);
}

std::string kernel_name_regex(const std::vector<std::string>& demangled_names, KernelNameBase base) {
  std::vector<std::string> alternatives;
  for (const auto& name : demangled_names)
    add_alternative(alternatives, base == KernelNameBase::function ? escape_regex(kernel_function_name(name))
                                                                   : demangled_name_pattern(name));
  return anchored_alternation(alternatives);
}

bool is_collective_kernel(std::string_view demangled) {
  std::string function = kernel_function_name(demangled);
  // NCCL names every device kernel ncclKernel_* (before 2.19) or ncclDevKernel_* (2.19 and later).
  if (function.rfind("nccl", 0) == 0) return true;
  std::transform(function.begin(), function.end(), function.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Collectives outside NCCL: NVSHMEM, vLLM's cross_device_reduce_*, TensorRT-LLM's one/twoShotAllReduce,
  // PyTorch symmetric memory (multimem_*, one_shot_all_reduce), TransformerEngine userbuffers. Matching
  // too much only leaves a kernel unprofiled, and the selection lists it; matching too little hangs ncu.
  static constexpr std::string_view markers[] = {
      "nccl",      "nvshmem",    "cross_device_reduce", "multimem",       "userbuffers", "allreduce", "all_reduce",
      "allgather", "all_gather", "reducescatter",       "reduce_scatter", "alltoall",    "all_to_all"};
  return std::any_of(std::begin(markers), std::end(markers),
                     [&](std::string_view marker) { return function.find(marker) != std::string::npos; });
}

}  // namespace llmprof
