// Parsers for what the Nsight tools print about themselves: `--version`, `nsys status --environment`,
// `nsys stats --help-reports`, `ncu --list-sections`, `ncu --list-sets`, the `--filter-mode` values of
// `ncu --help`, and the dynamic loader's
// "cannot open shared object" lines.
//
// Recorded outputs: tests/data/h100-nsight-2025.3/cli/ (Nsight Systems / Compute 2025.3.1).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>
#include <sstream>

#include "core/text.hpp"
#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"

namespace llmprof {
namespace {

using detail::split_lines;
using detail::trim;

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "Version 2025.3.1.0 (build 36398880) (public-release)", "NVIDIA Nsight Systems version 2021.3.1.57-ee59a63",
// "Version 2019.5.0 (Build 27346997)": the first "version <year>.<n>[.<n>[.<n>]]" in the text.
Result<ToolVersion> parse_version_line(std::string_view output, const char* tool, const char* command) {
  static const std::regex pattern(R"([Vv]ersion\s+((\d{4})\.(\d+)(?:\.(\d+))?(?:\.(\d+))?)([^\r\n]*))");
  const std::string text(output);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) {
    std::string shown(trim(text.substr(0, 200)));
    if (shown.empty()) shown = "(no output)";
    return make_error(ErrorCode::parse_error,
                      std::string("could not read a version from the output of `") + command + "`",
                      std::string("expected a line such as 'Version 2025.3.1.0'; check that this is ") + tool +
                          " and that it runs on this machine",
                      shown);
  }
  // from_chars, not stoi: a garbled "2025.99999999999.1" must be a parse error, not an exception.
  int parts[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    if (!match[i + 2].matched) continue;
    const std::string digits = match[i + 2].str();
    const auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), parts[i]);
    if (status != std::errc{} || end != digits.data() + digits.size()) {
      return make_error(
          ErrorCode::parse_error, std::string("the version printed by `") + command + "` has an out-of-range number",
          std::string("check that this is ") + tool + " and that its installation is intact", match[1].str());
    }
  }
  ToolVersion version;
  version.year = parts[0];
  version.major = parts[1];
  version.minor = parts[2];
  version.patch = parts[3];
  version.text = trim(match[1].str() + match[6].str());
  return version;
}

// Column spans of a fixed-width table from its "----- ------ ---" rule line.
struct Column {
  std::size_t begin = 0;
  std::size_t end = 0;  // exclusive; npos for the last column (runs to the end of the line)
};

bool is_rule_line(const std::string& line) {
  return !line.empty() && line.find_first_not_of("- ") == std::string::npos && line.find('-') != std::string::npos;
}

std::vector<Column> columns_of(const std::string& rule) {
  std::vector<Column> columns;
  std::size_t position = 0;
  while ((position = rule.find('-', position)) != std::string::npos) {
    const std::size_t end = rule.find(' ', position);
    columns.push_back({position, end});
    if (end == std::string::npos) break;
    position = end;
  }
  // Cells can be wider than the rule (ncu pads the last column), so the last one runs to the end.
  if (!columns.empty()) columns.back().end = std::string::npos;
  return columns;
}

std::string cell(const std::string& line, const Column& column, bool keep_spaces = false) {
  if (column.begin >= line.size()) return {};
  const std::size_t length = column.end == std::string::npos ? std::string::npos : column.end - column.begin;
  std::string value = line.substr(column.begin, length);
  return keep_spaces ? value : std::string(trim(value));
}

// A parsed fixed-width listing: the header names and the rows below it, cells by column index.
struct FixedWidthTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // cells with their padding kept
  int column_named(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (lowercase(header[i]) == lowercase(std::string(name))) return static_cast<int>(i);
    }
    return -1;
  }
};

// ncu prints: rule, header, rule, rows (and sometimes a closing rule). Lines before the first rule
// (warnings, banners) are skipped.
FixedWidthTable parse_fixed_width_table(std::string_view output) {
  FixedWidthTable table;
  const auto lines = split_lines(output);
  std::size_t index = 0;
  while (index < lines.size() && !is_rule_line(lines[index])) ++index;
  if (index >= lines.size()) return table;
  const auto columns = columns_of(lines[index]);
  ++index;
  if (index >= lines.size()) return table;
  for (const auto& column : columns) table.header.push_back(cell(lines[index], column));
  ++index;
  for (; index < lines.size(); ++index) {
    const std::string& line = lines[index];
    if (is_rule_line(line) || trim(line).empty()) continue;
    std::vector<std::string> row;
    for (const auto& column : columns) row.push_back(cell(line, column, true));
    table.rows.push_back(std::move(row));
  }
  return table;
}

bool yes(const std::string& value) {
  const std::string word = lowercase(std::string(trim(value)));
  return word == "yes" || word == "true" || word == "1";
}

}  // namespace

std::string ToolVersion::to_string() const {
  return std::to_string(year) + "." + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

Result<ToolVersion> parse_nsys_version(std::string_view version_output) {
  return parse_version_line(version_output, "Nsight Systems", "nsys --version");
}

Result<ToolVersion> parse_ncu_version(std::string_view version_output) {
  return parse_version_line(version_output, "Nsight Compute", "ncu --version");
}

std::string report_extension_for(const ToolVersion& nsys_version) {
  // Nsight Systems 2021.4 renamed its report files from .qdrep to .nsys-rep.
  return (nsys_version.year < 2021 || (nsys_version.year == 2021 && nsys_version.major < 4)) ? ".qdrep" : ".nsys-rep";
}

std::vector<EnvironmentCheck> parse_nsys_status_environment(std::string_view output) {
  std::vector<EnvironmentCheck> checks;
  for (const auto& raw : split_lines(output)) {
    const std::string line(trim(raw));
    // "Linux Kernel Version = 6.18.44-fc-v657-gpu: OK" has both separators: " = " names the check.
    std::size_t separator = line.find(" = ");
    std::size_t value_start = separator == std::string::npos ? 0 : separator + 3;
    if (separator == std::string::npos) {
      separator = line.find(": ");
      value_start = separator + 2;
    }
    if (separator == std::string::npos || separator == 0) continue;
    if (line.rfind("See the product documentation", 0) == 0 || line.find("http") < separator) continue;
    EnvironmentCheck check;
    check.name = trim(line.substr(0, separator));
    check.value = trim(line.substr(value_start));
    const std::string value = lowercase(check.value);
    static const std::vector<std::string> bad_words = {"not available", "fail",  "disabled", "not supported",
                                                       "unavailable",   "error", "not ok"};
    check.ok = value != "no" && std::none_of(bad_words.begin(), bad_words.end(), [&](const std::string& word) {
                 return value.find(word) != std::string::npos;
               });
    checks.push_back(std::move(check));
  }
  return checks;
}

std::vector<NcuSection> parse_ncu_section_list(std::string_view output) {
  const FixedWidthTable table = parse_fixed_width_table(output);
  const int identifier = table.column_named("Identifier");
  if (identifier < 0) return {};
  const int display = table.column_named("Display Name");
  const int enabled = table.column_named("Enabled");
  std::vector<NcuSection> sections;
  for (const auto& row : table.rows) {
    NcuSection section;
    section.identifier = trim(row[identifier]);
    if (section.identifier.empty()) continue;
    if (display >= 0) section.display_name = trim(row[display]);
    if (enabled >= 0) section.enabled_by_default = yes(row[enabled]);
    sections.push_back(std::move(section));
  }
  return sections;
}

std::vector<NcuSet> parse_ncu_set_list(std::string_view output) {
  const FixedWidthTable table = parse_fixed_width_table(output);
  const int identifier = table.column_named("Identifier");
  const int sections_column = table.column_named("Sections");
  if (identifier < 0 || sections_column < 0) return {};
  const int enabled = table.column_named("Enabled");
  // ncu wraps the Sections cell at the column width, even in the middle of an identifier
  // ("MemoryWorkloa" / "dAnalysis_Chart"), so the pieces are joined with nothing in between and
  // split on commas only. Section identifiers contain no spaces, so all whitespace is dropped.
  std::vector<std::pair<NcuSet, std::string>> sets;
  for (const auto& row : table.rows) {
    const std::string name(trim(row[identifier]));
    if (!name.empty()) {
      NcuSet set;
      set.identifier = name;
      if (enabled >= 0) set.enabled_by_default = yes(row[enabled]);
      sets.emplace_back(std::move(set), std::string());
    }
    if (sets.empty()) continue;
    for (char c : row[sections_column]) {
      if (!std::isspace(static_cast<unsigned char>(c))) sets.back().second.push_back(c);
    }
  }
  std::vector<NcuSet> result;
  for (auto& [set, joined] : sets) {
    std::stringstream pieces(joined);
    std::string section;
    while (std::getline(pieces, section, ',')) {
      if (!section.empty()) set.sections.push_back(section);
    }
    result.push_back(std::move(set));
  }
  return result;
}

std::vector<std::string> parse_missing_libraries(std::string_view loader_output) {
  // glibc's loader: "<program>: error while loading shared libraries: libdw.so.1: cannot open shared
  // object file: No such file or directory".
  static const std::regex pattern(R"(error while loading shared libraries: ([^:\s]+): cannot open shared object file)");
  std::vector<std::string> libraries;
  const std::string text(loader_output);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) {
    const std::string library = (*it)[1].str();
    if (std::find(libraries.begin(), libraries.end(), library) == libraries.end()) libraries.push_back(library);
  }
  return libraries;
}

bool NcuInfo::has_section(std::string_view identifier) const {
  return std::any_of(sections.begin(), sections.end(),
                     [&](const NcuSection& section) { return section.identifier == identifier; });
}

bool NcuInfo::has_set(std::string_view identifier) const {
  return std::any_of(sets.begin(), sets.end(), [&](const NcuSet& set) { return set.identifier == identifier; });
}

std::vector<std::string> parse_nsys_report_list(std::string_view help_reports_output) {
  // "  cuda_gpu_kern_sum[:nvtx-name][:base|:mangled] -- CUDA GPU Kernel Summary"
  static const std::regex entry(R"(^\s+([a-z][a-z0-9_]*)(\[[^\]]*\])*\s+--\s)");
  std::vector<std::string> names;
  for (const auto& line : detail::split_lines(help_reports_output)) {
    std::smatch match;
    if (std::regex_search(line, match, entry) && std::find(names.begin(), names.end(), match[1].str()) == names.end()) {
      names.push_back(match[1].str());
    }
  }
  return names;
}

bool NcuInfo::has_filter_mode(std::string_view mode) const {
  return std::find(filter_modes.begin(), filter_modes.end(), mode) != filter_modes.end();
}

std::vector<std::string> parse_ncu_filter_modes(std::string_view help) {
  std::vector<std::string> modes;
  const auto start = help.find("--filter-mode");
  if (start == std::string_view::npos) return modes;
  // The option's block runs to the next option line ("  --kernel-id ..." / "  -k [ ...").
  std::string_view block = help.substr(start + 13);
  for (std::size_t at = block.find('\n'); at != std::string_view::npos; at = block.find('\n', at + 1)) {
    const std::string_view rest = block.substr(at + 1);
    const auto first = rest.find_first_not_of(' ');  // one-home: an indentation count, not a trim
    if (first < 4 && rest[first] == '-') {  // npos is never < 4
      block = block.substr(0, at);
      break;
    }
  }
  for (const char* mode : {"global", "per-gpu", "per-launch-config"}) {
    const std::string spelled = std::string(mode);
    for (auto at = block.find(spelled); at != std::string_view::npos; at = block.find(spelled, at + 1)) {
      // "per-gpu" must not be read inside another word; the mode names stand after spaces in the list.
      const bool word_start = at > 0 && block[at - 1] == ' ';
      const bool word_end = at + spelled.size() >= block.size() || block[at + spelled.size()] == ' ' ||
                            block[at + spelled.size()] == ':' || block[at + spelled.size()] == ')';
      if (word_start && word_end) {
        modes.push_back(spelled);
        break;
      }
    }
  }
  return modes;
}

GpuMetricsSupport parse_gpu_metrics_devices(std::string_view output, std::string devices_option) {
  GpuMetricsSupport support;
  support.devices_option = std::move(devices_option);
  std::vector<std::string> ids, said;
  for (const auto& raw : split_lines(output)) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.rfind("Possible ", 0) == 0) continue;
    const std::size_t colon = line.find(':');
    const std::string_view key = colon == std::string_view::npos ? std::string_view() : trim(line.substr(0, colon));
    const bool numbered = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (numbered) {
      ids.emplace_back(key);
      support.listed.emplace_back(line);
      if (const std::size_t pci = line.find("PCI["); pci != std::string_view::npos) {
        const std::size_t end = line.find(']', pci);
        if (end != std::string_view::npos) support.buses[std::string(key)] = std::string(line.substr(pci + 4, end - pci - 4));
      }
    } else if (colon == std::string_view::npos) {
      said.emplace_back(line);  // 2022.4 without a GPU: "NVIDIA GPUs not found, feature is not available"
    }
  }
  support.available = !ids.empty();
  if (support.available) {
    // 2025.3.1 takes "all"; 2022.4 takes only GPU ids ("must be 'none' or one of GPU IDs").
    support.devices = output.find("all:") != std::string_view::npos ? "all" : detail::join(ids, ",");
    support.cuda_visible = output.find("cuda-visible:") != std::string_view::npos;
  } else {
    support.reason = said.empty() ? "nsys listed no GPU for GPU-metrics sampling" : "nsys says: " + detail::join(said, " ");
  }
  return support;
}

std::string choose_gpu_metrics_set(std::string_view output, const std::vector<std::string>& listed_devices) {
  for (const auto& raw : split_lines(output)) {
    const std::string_view line = trim(raw);
    const std::size_t colon = line.find(" : ");
    if (colon == std::string_view::npos) continue;
    const std::string alias(trim(line.substr(0, colon)));
    const std::string_view description = line.substr(colon + 3);
    const std::size_t chip_at = description.find("NVIDIA ");
    if (chip_at == std::string_view::npos || alias.find(':') != std::string::npos) continue;
    // "General Metrics for NVIDIA GH100 (any frequency)" -> "GH100": the general set of a listed chip.
    std::string_view chip = description.substr(chip_at + 7);
    chip = chip.substr(0, chip.find(' '));
    if (description.rfind("General Metrics", 0) != 0 || chip.empty()) continue;
    for (const auto& device : listed_devices)
      if (device.find(" " + std::string(chip) + " ") != std::string::npos) return alias;
  }
  return {};
}

}  // namespace llmprof
