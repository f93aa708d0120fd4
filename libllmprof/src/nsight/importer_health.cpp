// The QdstrmImporter beside nsys: where it is, whether it loads, and whether nsys itself finds it there. Without it
// nsys 2022.4 (Debian's split layout) leaves only a .qdstrm; on the H100 machine the bundled one could not load
// libdw.so.1.
#include <algorithm>

#include "core/text.hpp"
#include "nsight/tool_capture.hpp"
#include "nsight/tool_listings.hpp"
#include "process/process_launch.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

constexpr std::chrono::seconds version_timeout{60};

// Where nsys itself looks for its importer: beside its real directory (the NVIDIA layouts).
bool importer_found_by_nsys(const fs::path& importer, const fs::path& nsys_path) {
  std::error_code error;
  const fs::path real_nsys = fs::canonical(nsys_path, error);
  if (error) return false;
  const fs::path real_importer = fs::canonical(importer, error);
  if (error) return false;
  const fs::path directory = real_nsys.parent_path();
  for (const fs::path& beside :
       {directory / ".." / "linux-desktop-glibc_2_11_3-x64", directory / ".." / "host-linux-x64", directory}) {
    const fs::path real_beside = fs::weakly_canonical(beside, error);
    if (!error && real_importer.parent_path() == real_beside) return true;
  }
  return false;
}

}  // namespace

std::vector<fs::path> importer_candidates(const fs::path& nsys_path) {
  std::vector<fs::path> directories = {nsys_path.parent_path()};
  std::error_code error;
  const fs::path real = fs::canonical(nsys_path, error);
  if (!error && real.parent_path() != nsys_path.parent_path()) directories.push_back(real.parent_path());
  std::vector<fs::path> candidates;
  for (const auto& directory : directories) {
    // Bundled with Nsight Compute: host/target-linux-x64/nsys + host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter.
    candidates.push_back((directory / ".." / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter").lexically_normal());
    // Standalone Nsight Systems: target-linux-x64/nsys (bin/nsys links there) + host-linux-x64/QdstrmImporter.
    candidates.push_back((directory / ".." / "host-linux-x64" / "QdstrmImporter").lexically_normal());
    candidates.push_back(directory / "QdstrmImporter");
    // Debian 12: <lib>/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys, importer in
    // <lib>/nsight-systems/host-linux-x64/ (the multiarch folder dropped).
    const fs::path product = directory.parent_path();
    const fs::path multiarch = product.parent_path();
    if (product.filename() == "nsight-systems" && multiarch.filename().string().ends_with("-linux-gnu")) {
      candidates.push_back(multiarch.parent_path() / "nsight-systems" / "host-linux-x64" / "QdstrmImporter");
    }
  }
  return candidates;
}

ImporterHealth check_importer(ProcessRunner& runner, const fs::path& nsys_path) {
  ImporterHealth health;
  for (const auto& candidate : importer_candidates(nsys_path)) {
    if (detail::is_executable_file(candidate)) {
      health.path = candidate;
      break;
    }
  }
  if (health.path.empty()) {
    health.detail = "no QdstrmImporter next to " + nsys_path.string();
    health.fix =
        "reinstall Nsight Systems (the importer ships beside nsys); without it nsys can leave only a .qdstrm file";
    return health;
  }
  auto run = detail::run_and_capture(runner, {health.path.string(), "--version"}, version_timeout);
  if (!run) {
    health.detail = run.error().describe();
    health.fix = "make " + health.path.string() + " executable";
    return health;
  }
  health.found_by_nsys = importer_found_by_nsys(health.path, nsys_path);
  if (run->outcome.succeeded()) {
    health.loads = true;
    return health;
  }
  health.detail = run->combined();
  while (!health.detail.empty() && health.detail.back() == '\n') health.detail.pop_back();
  health.missing_libraries = parse_missing_libraries(health.detail);
  if (!health.missing_libraries.empty()) {
    const std::string names = detail::join(health.missing_libraries, ", ");
    // libdw.so.1 is the one missing on the recorded H100 machine; Debian/Ubuntu ship it in libdw1,
    // which needs libelf1 too.
    const bool libdw = std::find(health.missing_libraries.begin(), health.missing_libraries.end(), "libdw.so.1") !=
                       health.missing_libraries.end();
    // Debian's importer finds libssh through host-linux-x64/libssh.so -> ../../x86_64-linux-gnu/libssh.so.4.
    const bool libssh = std::find(health.missing_libraries.begin(), health.missing_libraries.end(), "libssh.so") !=
                        health.missing_libraries.end();
    health.fix = libdw ? "apt-get install libdw1 libelf1, or unpack them with dpkg -x and put their "
                         "usr/lib/x86_64-linux-gnu on LD_LIBRARY_PATH"
                 : libssh
                     ? "apt-get install libssh-4 (the importer's libssh.so link points at "
                       "../../x86_64-linux-gnu/libssh.so.4; scripts/install-nsight.sh links it for an unpacked install)"
                     : "install the packages that provide " + names +
                           " (apt-file search <name>), or put a directory holding them on LD_LIBRARY_PATH";
  } else {
    health.fix = "run `" + health.path.string() + " --version` by hand to see why it fails";
  }
  return health;
}

}  // namespace llmprof
