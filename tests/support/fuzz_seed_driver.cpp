// Runs a libFuzzer target's entry point once over each file it is given (directories: each regular file in them,
// in name order), without libFuzzer: the dev build keeps every fuzz target compiling and linking against the
// library, and the seeds pass through each target's own invariant checks, which abort on a broken promise.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> seed_files(const std::filesystem::path& argument) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(argument)) {
    for (const auto& entry : std::filesystem::directory_iterator(argument))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(argument);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int index = 1; index < argc; ++index) {
    for (const auto& file : seed_files(argv[index])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << "fuzz seed driver: cannot read " << file.string() << "\n";
        return 2;
      }
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  if (inputs == 0) {
    std::cerr << "fuzz seed driver: no seed file given\n";
    return 2;
  }
  std::cout << inputs << " seed(s) passed\n";
  return 0;
}
