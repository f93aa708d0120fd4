// Report path resolver: the report nsys profile wrote, the import of a lone .qdstrm, or why there is none.
//
// Behaviours handled (Nsight Systems 2025.3.1, tests/data/h100-nsight-2025.3/cli/transcripts.md):
//  1. importer cannot load libdw.so.1 -> only BASE.qdstrm, "Importer error status", exit 0;
//  4. NVTX gate never opened -> "Generated:\n\tNo reports were generated", exit 0;
//  7. application exits non-zero -> the report is written and nsys exits 1;
//  8. missing executable -> "Executable '...' not found ...", exit 1, nothing written.
#include "llmprof/nsys_report_file.hpp"

#include <system_error>

#include "core/text.hpp"
#include "nsight/tool_capture.hpp"
#include "nsight/tool_listings.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

using detail::split_lines;
using detail::trim;

bool exists_nonempty(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && fs::file_size(path, error) > 0 && !error;
}

// BASE may be given with the report extension already ("x.nsys-rep"); nsys then writes exactly that.
fs::path strip_report_extension(const fs::path& base) {
  const std::string extension = base.extension().string();
  if (extension == ".nsys-rep" || extension == ".qdrep" || extension == ".qdstrm") {
    fs::path stripped = base;
    return stripped.replace_extension();
  }
  return base;
}

fs::path with_suffix(const fs::path& base, const std::string& suffix) { return fs::path(base.string() + suffix); }

// Lines of the output that say what went wrong: the last few non-progress lines.
std::string output_tail(std::string_view output, std::size_t count = 4) {
  std::vector<std::string> kept;
  for (const auto& line : split_lines(output)) {
    const std::string text(trim(line));
    if (text.empty() || text.front() == '[') continue;  // progress bars
    kept.push_back(text);
  }
  if (kept.size() > count) kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(count));
  return detail::join(kept, " | ");
}

std::optional<fs::path> generated_with_extension(std::string_view output, const std::string& extension) {
  for (const auto& path : parse_generated_files(output)) {
    if (path.extension() == extension) return path;
  }
  return std::nullopt;
}

Error no_report(std::string message, std::string hint, const fs::path& base) {
  return make_error(ErrorCode::no_report, std::move(message), std::move(hint), base.string());
}

Result<ResolvedReport> import_qdstrm(ProcessRunner& runner, const NsysInfo& nsys, const ReportResolveRequest& request,
                                     const fs::path& qdstrm, const fs::path& base) {
  const auto& importer = nsys.importer;
  const bool importer_complained = request.profiler_output.find("Importer error status") != std::string::npos ||
                                   request.profiler_output.find("skipping importation") != std::string::npos;
  if (importer.path.empty()) {
    return no_report(
        "nsys profile left only " + qdstrm.string() + " and no QdstrmImporter was found next to " + nsys.path.string() +
            " to turn it into a report",
        importer.fix.empty() ? "reinstall Nsight Systems so that its QdstrmImporter is present" : importer.fix, base);
  }
  if (!importer.loads) {
    std::string why = importer.missing_libraries.empty() ? "does not run (" + importer.detail + ")"
                                                         : "cannot load " + importer.missing_libraries.front();
    for (std::size_t i = 1; i < importer.missing_libraries.size(); ++i) why += ", " + importer.missing_libraries[i];
    return no_report("nsys profile left only " + qdstrm.string() + " because the QdstrmImporter " +
                         importer.path.string() + " " + why +
                         (importer_complained ? " (nsys printed \"Importer error status\")" : ""),
                     importer.fix + "; then import this run with `" + importer.path.string() + " -i " +
                         qdstrm.string() + " -o " + with_suffix(base, ".nsys-rep").string() + "`, or profile again",
                     base);
  }
  const std::string extension = nsys.report_extension.empty() ? ".nsys-rep" : nsys.report_extension;
  const fs::path report = with_suffix(base, extension);
  const std::vector<std::string> argv = {importer.path.string(), "-i", qdstrm.string(), "-o", report.string()};
  if (request.on_import) request.on_import(argv);
  auto run = detail::run_and_capture(runner, argv, request.import_timeout);
  if (!run) {
    return no_report("nsys profile left only " + qdstrm.string() +
                         " and its QdstrmImporter could not be started: " + run.error().describe(),
                     run.error().hint, base);
  }
  if (!run->outcome.succeeded() || !exists_nonempty(report)) {
    const auto missing = parse_missing_libraries(run->combined());
    std::string hint = "run `" + importer.path.string() + " -i " + qdstrm.string() + " -o " + report.string() +
                       "` by hand to see the full error";
    if (!missing.empty()) hint = "the importer cannot load " + missing.front() + ": " + importer.fix;
    // Recorded with the 2022.4 importer on a .qdstrm cut short: "File is corrupted.", exit 2.
    if (run->combined().find("File is corrupted") != std::string::npos) {
      std::error_code size_error;
      const auto bytes = fs::file_size(qdstrm, size_error);
      return no_report("nsys profile left only " + qdstrm.string() +
                           (size_error ? "" : " (" + std::to_string(bytes) + " bytes)") +
                           " and it is truncated or corrupted: the importer said \"File is corrupted.\"",
                       "nsys was probably killed while writing it, or the disk filled up; profile again (check free "
                       "space and the nsys stage timeout)",
                       base);
    }
    return no_report("nsys profile left only " + qdstrm.string() + " and importing it failed (" +
                         detail::describe_outcome(run->outcome) + "): " + output_tail(run->combined()),
                     hint, base);
  }
  ResolvedReport resolved;
  resolved.report = report;
  resolved.imported_from_qdstrm = true;
  resolved.notes.push_back("imported " + qdstrm.string() + " with " + importer.path.string() +
                           " because nsys left only the .qdstrm");
  return resolved;
}

}  // namespace

bool capture_gate_never_opened(std::string_view profiler_output, const std::vector<std::string>& profile_argv) {
  // 2025.3 says "No reports were generated"; 2022.4 prints "Generated:" with nothing under it.
  const bool empty_generated =
      profiler_output.find("Generated:") != std::string_view::npos && parse_generated_files(profiler_output).empty();
  return profiler_output.find("No reports were generated") != std::string_view::npos ||
         (empty_generated && !nvtx_capture_expression(profile_argv).empty());
}

std::vector<fs::path> parse_generated_files(std::string_view profiler_output) {
  std::vector<fs::path> files;
  bool in_block = false;
  for (const auto& line : split_lines(profiler_output)) {
    if (trim(line) == "Generated:") {
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    if (line.empty() || (line.front() != '\t' && line.front() != ' ')) {
      in_block = false;
      continue;
    }
    const std::string entry(trim(line));
    if (entry.empty() || entry == "No reports were generated") continue;
    files.emplace_back(entry);
  }
  return files;
}

std::string nvtx_capture_expression(const std::vector<std::string>& profile_argv) {
  for (std::size_t i = 0; i < profile_argv.size(); ++i) {
    const std::string& argument = profile_argv[i];
    for (const std::string prefix : {"--nvtx-capture=", "-p="}) {
      if (argument.rfind(prefix, 0) == 0) return argument.substr(prefix.size());
    }
    if ((argument == "--nvtx-capture" || argument == "-p") && i + 1 < profile_argv.size()) return profile_argv[i + 1];
  }
  return {};
}

Result<ResolvedReport> resolve_report(ProcessRunner& runner, const NsysInfo& nsys,
                                      const ReportResolveRequest& request) {
  const fs::path base = strip_report_extension(request.output_base);
  const std::string& output = request.profiler_output;
  const auto& outcome = request.profile_outcome;
  const bool failed = outcome && !outcome->succeeded();

  // 1. A report, under the extension this nsys writes first, then either spelling, then what nsys named.
  std::vector<fs::path> reports;
  if (!nsys.report_extension.empty()) reports.push_back(with_suffix(base, nsys.report_extension));
  reports.push_back(with_suffix(base, ".nsys-rep"));
  reports.push_back(with_suffix(base, ".qdrep"));
  for (const auto& extension : {".nsys-rep", ".qdrep"}) {
    if (auto named = generated_with_extension(output, extension)) reports.push_back(*named);
  }
  for (const auto& report : reports) {
    if (!exists_nonempty(report)) continue;
    ResolvedReport resolved;
    resolved.report = report;
    // Recorded: an application exiting non-zero still gets its report, and nsys exits 1.
    if (failed)
      resolved.notes.push_back("nsys profile " + detail::describe_outcome(*outcome) + " but wrote " + report.string() +
                               " (the application probably exited with an error)");
    return resolved;
  }

  // 2. Only the raw stream: import it, or say why it cannot be.
  std::vector<fs::path> streams = {with_suffix(base, ".qdstrm")};
  if (auto named = generated_with_extension(output, ".qdstrm")) streams.push_back(*named);
  for (const auto& stream : streams) {
    if (exists_nonempty(stream)) return import_qdstrm(runner, nsys, request, stream, base);
  }

  // 3. Nothing written.
  if (outcome && outcome->timed_out) {
    return no_report("nsys profile ran past its time limit and was killed before it wrote " +
                         with_suffix(base, ".nsys-rep").string(),
                     "raise the nsys stage timeout, or profile fewer steps", base);
  }
  if (outcome && outcome->interrupted) {
    return no_report("nsys profile was interrupted before it wrote a report", "", base);
  }
  if (failed) {
    return no_report("nsys profile wrote no report: the profiled application (or nsys) failed with " +
                         detail::describe_outcome(*outcome) + (output.empty() ? "" : ": " + output_tail(output)),
                     "run the workload without the profiler to check that it starts and exits with 0", base);
  }
  if (capture_gate_never_opened(output, request.profile_argv)) {
    const bool empty_generated =
        output.find("Generated:") != std::string::npos && parse_generated_files(output).empty();
    const std::string gate = nvtx_capture_expression(request.profile_argv);
    const std::string named = gate.empty() ? "the NVTX capture range" : "the NVTX capture range '" + gate + "'";
    return no_report(
        "nsys profile generated no report: " + named + " never opened, so nothing was captured (" +
            (empty_generated && output.find("No reports were generated") == std::string::npos
                 ? std::string("nsys printed \"Generated:\" with no file under it")
                 : std::string("\"No reports were generated\"")) +
            ")",
        "check that the workload emits a push/pop range named exactly " +
            (gate.empty() ? std::string("as the --nvtx-capture expression") : "'" + gate + "'") +
            " (name@domain for a non-default domain) and that NSYS_NVTX_PROFILER_REGISTER_ONLY=0 is passed; "
            "or set capture_range = \"none\" to profile the whole run",
        base);
  }
  return no_report("nsys profile " + (outcome ? detail::describe_outcome(*outcome) : std::string("finished")) +
                       " but wrote no " + with_suffix(base, ".nsys-rep").filename().string() + ", " +
                       with_suffix(base, ".qdrep").filename().string() + " or " +
                       with_suffix(base, ".qdstrm").filename().string() + " in " + base.parent_path().string() +
                       (output.empty() ? "" : "; it printed: " + output_tail(output)),
                   "check that the output directory is writable and has free space, and read nsys's log", base);
}

}  // namespace llmprof
