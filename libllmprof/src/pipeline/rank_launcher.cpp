// Launcher words and rank lists as a user types them (`--launcher 'srun -n 2' --ranks 0,3`).
#include <algorithm>
#include <charconv>
#include <set>

#include "llmprof/rank_launch.hpp"
#include "llmprof/shell_quote.hpp"

namespace llmprof {
namespace {

constexpr const char* kKnownLaunchers = "srun, mpirun, mpiexec, orterun, torchrun";

std::optional<std::string> family_of(const std::string& first_word) {
  const std::string name = std::filesystem::path(first_word).filename().string();
  if (name == "srun") return "srun";
  if (name == "mpirun" || name == "mpiexec" || name == "orterun") return "mpirun";
  if (name == "torchrun") return "torchrun";
  return std::nullopt;
}

std::optional<int> parse_positive(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

// The value of `-n 2`, `-n2`, `--ntasks=2`, `--ntasks 2` for any of `names`.
std::optional<int> option_value(const std::vector<std::string>& words, const std::vector<std::string>& names) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    for (const auto& name : names) {
      if (words[i] == name && i + 1 < words.size()) return parse_positive(words[i + 1]);
      const bool long_option = name.rfind("--", 0) == 0;
      const std::string joined = long_option ? name + "=" : name;
      if (words[i].size() > joined.size() && words[i].rfind(joined, 0) == 0)
        return parse_positive(std::string_view(words[i]).substr(joined.size()));
    }
  }
  return std::nullopt;
}

std::optional<int> world_size_of(const std::string& family, const std::vector<std::string>& words) {
  if (family == "srun") return option_value(words, {"-n", "--ntasks"});
  if (family == "mpirun") return option_value(words, {"-np", "-n", "--np", "-c"});
  // torchrun: nproc-per-node per node; a node count only when it is a plain number (not MIN:MAX).
  auto per_node = option_value(words, {"--nproc-per-node", "--nproc_per_node"});
  if (!per_node) return std::nullopt;
  auto nodes = option_value(words, {"--nnodes"});
  const bool range_of_nodes = std::any_of(words.begin(), words.end(), [](const std::string& word) {
    return word.find("--nnodes") == 0 && word.find(':') != std::string::npos;
  });
  if (range_of_nodes) return std::nullopt;
  return *per_node * nodes.value_or(1);
}

}  // namespace

Result<Launcher> parse_launcher(std::string_view text) {
  auto words = split_shell_words(text);
  if (!words) return words.error();
  if (words->empty()) {
    return make_error(
        ErrorCode::invalid_argument, "--launcher is empty",
        std::string("give the launcher and its options, e.g. --launcher 'srun -n 2' (known: ") + kKnownLaunchers + ")");
  }
  auto family = family_of(words->front());
  if (!family) {
    return make_error(ErrorCode::invalid_argument, "unknown launcher '" + words->front() + "'",
                      std::string("deep-profile knows ") + kKnownLaunchers +
                          "; wrap anything else in one of them, or run `deep-profile rank-exec` yourself under it",
                      std::string(text));
  }
  Launcher launcher;
  launcher.family = *family;
  launcher.words = std::move(words.value());
  // torchrun runs Python scripts unless told otherwise; rank-exec is a program.
  if (launcher.family == "torchrun" &&
      std::find(launcher.words.begin(), launcher.words.end(), "--no-python") == launcher.words.end() &&
      std::find(launcher.words.begin(), launcher.words.end(), "--no_python") == launcher.words.end()) {
    launcher.words.insert(launcher.words.begin() + 1, "--no-python");
  }
  launcher.world_size = world_size_of(launcher.family, launcher.words);
  return launcher;
}

// The largest GPU systems run on the order of 10^5 ranks (a job on every GPU of Frontier is about 38,000
// ranks); 2^20 - 1 leaves room for them and bounds the set a range expands to at about 40 MB.
constexpr int kLargestRank = (1 << 20) - 1;

Result<std::vector<int>> parse_rank_list(std::string_view text) {
  std::set<int> ranks;
  auto refuse = [&text](const std::string& why) {
    return make_error(ErrorCode::invalid_argument, "--ranks '" + std::string(text) + "': " + why,
                      "give rank numbers and ranges separated by commas, e.g. --ranks 0,3 or --ranks 0-3",
                      std::string(text));
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view piece = text.substr(start, comma - start);
    const std::size_t dash = piece.find('-');
    int first = -1, last = -1;
    const std::string_view low = piece.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : piece.substr(dash + 1);
    auto parse = [](std::string_view digits, int& value) {
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      return !digits.empty() && error == std::errc() && end == digits.data() + digits.size() && value >= 0;
    };
    if (!parse(low, first) || !parse(high, last))
      return refuse("'" + std::string(piece) + "' is not a rank number or a range A-B");
    if (last < first) return refuse("the range '" + std::string(piece) + "' runs backwards");
    // Checked before the range is expanded into a set: 0-50000000 is 50 million entries, about 1.5 GB.
    if (last > kLargestRank) {
      return refuse("'" + std::string(piece) + "' names a rank above " + std::to_string(kLargestRank) +
                    ", more ranks than any launch this was built for starts");
    }
    for (int rank = first; rank <= last; ++rank) ranks.insert(rank);
    start = comma + 1;
  }
  return std::vector<int>(ranks.begin(), ranks.end());
}

std::string format_rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ",") + std::to_string(rank);
  return text;
}

std::vector<std::string> rank_exec_arguments(const RankExecRequest& request) {
  std::vector<std::string> words = {"rank-exec", "--run-directory", request.main_directory.string(), "--stage",
                                    request.stage};
  if (request.ranks) words.insert(words.end(), {"--ranks", format_rank_list(*request.ranks)});
  words.push_back("--");
  return words;
}

}  // namespace llmprof
