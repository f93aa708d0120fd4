// nvtx_pushpop_trace and cuda_gpu_trace CSV (see nsys_trace.hpp).
#include "llmprof/nsys_trace.hpp"

#include <fstream>

#include "llmprof/csv.hpp"

namespace llmprof {
namespace {

struct Columns {
  std::size_t start = 0, end_or_duration = 0, name = 0;
  std::optional<std::size_t> extra;  // "Strm" of cuda_gpu_trace, "TID" of nvtx_pushpop_trace: optional
};

Result<Columns> find_columns(CsvReader& reader, const char* second, const char* extra) {
  if (auto header = reader.read_header(); !header) return header.error();
  auto start = reader.column("Start (ns)");
  auto other = reader.column(second);
  auto name = reader.column("Name");
  if (!start || !other || !name) {
    return make_error(ErrorCode::parse_error,
                      reader.source_name() + ": the header lacks \"Start (ns)\", \"" + second + "\" or \"Name\"",
                      "give the CSV of `nsys stats --format csv` for this report", reader.source_name());
  }
  return Columns{*start, *other, *name, reader.column(extra)};
}

Result<std::int64_t> integer_at(CsvReader& reader, std::size_t column) {
  const auto fields = reader.fields();
  if (column >= fields.size()) return reader.error_here("the row has too few fields");
  std::int64_t value = 0;
  if (detail::parse_integer(fields[column], value) != detail::NumberParse::ok) {
    return reader.error_here("'" + std::string(fields[column]) + "' is not an integer number of nanoseconds");
  }
  return value;
}

template <typename Row, typename Fill>
Result<std::vector<Row>> read_rows(std::istream& in, const std::string& source, const char* second, const char* extra,
                                   Fill fill) {
  CsvReader reader(in, source, CsvReaderOptions{csv_header_with({"Start (ns)", second, "Name"})});
  auto columns = find_columns(reader, second, extra);
  if (!columns) return columns.error();
  std::vector<Row> rows;
  for (;;) {
    auto more = reader.next();
    if (!more) return more.error();
    if (!*more) break;
    auto start = integer_at(reader, columns->start);
    if (!start) return start.error();
    auto other = integer_at(reader, columns->end_or_duration);
    if (!other) return other.error();
    if (columns->name >= reader.fields().size()) return reader.error_here("the row has no Name field");
    std::optional<std::int64_t> extra_value;
    if (columns->extra) {
      if (auto parsed = integer_at(reader, *columns->extra); parsed) extra_value = parsed.value();
    }
    if (auto row = fill(std::string(reader.fields()[columns->name]), *start, *other, extra_value))
      rows.push_back(std::move(*row));
  }
  return rows;
}

template <typename Parse>
auto from_file(const std::filesystem::path& file, Parse parse)
    -> decltype(parse(std::declval<std::istream&>(), std::string())) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot read " + file.string(), "", file.string());
  return parse(in, file.string());
}

}  // namespace

Result<std::vector<NvtxRangeInstance>> parse_nsys_nvtx_trace(std::istream& in, const std::string& source_name) {
  return read_rows<NvtxRangeInstance>(
      in, source_name, "End (ns)", "TID",
      [](std::string name, std::int64_t start, std::int64_t end, std::optional<std::int64_t> thread) {
        return std::optional<NvtxRangeInstance>(NvtxRangeInstance{std::move(name), start, end, thread.value_or(0)});
      });
}

Result<std::vector<GpuKernelInterval>> parse_nsys_gpu_trace(std::istream& in, const std::string& source_name) {
  return read_rows<GpuKernelInterval>(
      in, source_name, "Duration (ns)", "Strm",
      [](std::string name, std::int64_t start, std::int64_t duration, std::optional<std::int64_t> stream) {
        // Memory operations are bracketed: "[CUDA memcpy Host-to-Device]", "[CUDA memset]".
        if (!name.empty() && name.front() == '[') return std::optional<GpuKernelInterval>();
        return std::optional<GpuKernelInterval>(
            GpuKernelInterval{std::move(name), start, start + duration, stream.value_or(-1)});
      });
}

Result<std::vector<NvtxRangeInstance>> parse_nsys_nvtx_trace(const std::filesystem::path& csv_file) {
  return from_file(csv_file,
                   [](std::istream& in, const std::string& source) { return parse_nsys_nvtx_trace(in, source); });
}

Result<std::vector<GpuKernelInterval>> parse_nsys_gpu_trace(const std::filesystem::path& csv_file) {
  return from_file(csv_file,
                   [](std::istream& in, const std::string& source) { return parse_nsys_gpu_trace(in, source); });
}

}  // namespace llmprof
