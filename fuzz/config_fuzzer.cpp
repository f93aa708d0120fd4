// load_config over an arbitrary TOML file (the user's --config file), layered on nothing else.
//
// Invariants: no crash / leak / UB; errors name the file; a config that loads writes back
// (config_to_toml) to TOML that loads again to an equal config.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz_support.hpp"
#include "llmprof/config.hpp"

namespace {

std::filesystem::path scratch_file(const char* suffix) {
  return std::filesystem::temp_directory_path() / ("llmprof-fuzz-config-" + std::to_string(getpid()) + suffix);
}

void write(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto input = scratch_file(".toml");
  static const auto again = scratch_file("-again.toml");
  write(input, llmprof::fuzz::as_text(data, size));
  const auto config = llmprof::load_config({{input}, {}});
  if (!config) {
    LLMPROF_FUZZ_CHECK(config.error().message.find(input.filename().string()) != std::string::npos ||
                           config.error().subject.find(input.filename().string()) != std::string::npos,
                       "error does not name the file: " + config.error().describe());
    return 0;
  }
  const auto text = llmprof::config_to_toml(*config);
  write(again, text);
  const auto reloaded = llmprof::load_config({{again}, {}});
  LLMPROF_FUZZ_CHECK(reloaded.has_value(), "written config does not load: " +
                                               (reloaded ? std::string() : reloaded.error().describe()) + "\n" + text);
  LLMPROF_FUZZ_CHECK(*reloaded == *config, "config changed in a write/load round trip:\n" + text);
  return 0;
}
