// Streaming CSV reader: one record at a time from a growable buffer, fields unescaped in place.
#include "llmprof/csv.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <istream>

namespace llmprof {
namespace {

// 64 KiB holds several rows of ncu's widest raw page (about 13 KB each) and reads as fast as
// 1 MiB (bench/ncu_raw_parse); it also stays in the allocators' small-chunk pools, so creating a
// reader costs no fresh pages (libFuzzer targets create several per input). Grows for longer records.
constexpr std::size_t kInitialBufferBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxPreambleLinesKept = 200;

using detail::printable_excerpt;

}  // namespace

std::function<bool(std::span<const std::string_view>)> csv_header_with(std::vector<std::string> names) {
  return [names = std::move(names)](std::span<const std::string_view> fields) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& name) {
      return std::find(fields.begin(), fields.end(), std::string_view(name)) != fields.end();
    });
  };
}

CsvReader::CsvReader(std::istream& in, std::string source_name, CsvReaderOptions options)
    : in_(&in), source_name_(std::move(source_name)), options_(std::move(options)) {
  buffer_.resize(kInitialBufferBytes);
}

CsvReader::CsvReader(CsvReader&&) noexcept = default;
CsvReader& CsvReader::operator=(CsvReader&&) noexcept = default;
CsvReader::~CsvReader() = default;

Result<CsvReader> CsvReader::open(const std::filesystem::path& path, CsvReaderOptions options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return make_error(ErrorCode::not_found, "CSV file " + path.string() + " does not exist",
                      "check the path, or re-run the step that writes it", path.string());
  if (std::filesystem::is_directory(path, ec))
    return make_error(ErrorCode::io_error, path.string() + " is a directory, not a CSV file", {}, path.string());
  auto stream = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!stream->is_open())
    return make_error(ErrorCode::io_error, "cannot open " + path.string() + " for reading",
                      "check the file's permissions", path.string());
  CsvReader reader(*stream, path.string(), std::move(options));
  reader.owned_stream_ = std::move(stream);
  return reader;
}

std::optional<std::size_t> CsvReader::column(std::string_view name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header_.begin());
}

Error CsvReader::error_here(const std::string& what, std::string hint) const {
  return make_error(ErrorCode::parse_error, source_name_ + ":" + std::to_string(record_line_) + ": " + what,
                    std::move(hint), source_name_);
}

// Moves unconsumed bytes to the front and reads more; false when nothing more could be read.
bool CsvReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  in_->read(buffer_.data() + end_, static_cast<std::streamsize>(buffer_.size() - end_));
  const auto got = static_cast<std::size_t>(in_->gcount());
  end_ += got;
  // A short read sets failbit with eofbit; either way nothing more will come.
  eof_ = got == 0 || !*in_;
  return got > 0;
}

// Finds the end of the next record (a line break outside quotes, or any line break when
// `physical_line_only`), leaves it in [begin_, record end) and splits it into fields_.
Result<bool> CsvReader::read_record(bool physical_line_only) {
  std::size_t scanned = 0;  // bytes after begin_ already examined
  bool in_quotes = false;
  std::size_t line_breaks = 0;
  record_line_ = next_line_;
  for (;;) {
    char* base = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    while (scanned < available) {
      char* from = base + scanned;
      auto* newline = static_cast<char*>(std::memchr(from, '\n', available - scanned));
      char* stop = newline ? newline : base + available;
      if (!physical_line_only && (std::count(from, stop, '"') & 1)) in_quotes = !in_quotes;
      scanned = static_cast<std::size_t>(stop - base);
      if (!newline) break;
      ++line_breaks;
      ++scanned;
      if (in_quotes) continue;
      char* record_end = newline;
      if (record_end > base && record_end[-1] == '\r') --record_end;
      if (physical_line_only) raw_line_.assign(base, record_end);
      split_fields(base, record_end);
      begin_ += scanned;
      next_line_ += line_breaks;
      record_terminated_ = true;
      return true;
    }
    if (scanned > options_.max_record_bytes)
      return error_here("a record is longer than " + std::to_string(options_.max_record_bytes) +
                        " bytes; the file is probably not CSV or has an unbalanced quote");
    if (fill()) continue;
    // End of input: what is left is the last record, without a line break.
    if (begin_ == end_) return false;
    if (in_quotes)
      return error_here("unterminated quoted field at end of file (the quote opened in this record is never closed)",
                        "the file was probably cut off while being written; re-export it");
    char* record_end = buffer_.data() + end_;
    if (record_end > base && record_end[-1] == '\r') --record_end;
    if (physical_line_only) raw_line_.assign(base, record_end);
    split_fields(base, record_end);
    begin_ = end_;
    next_line_ += line_breaks + 1;
    record_terminated_ = false;
    return true;
  }
}

// The first `c` in [from, end), or end. A plain loop: Nsight's fields are a few bytes long, too
// short for memchr's call and setup to pay off (bench/ncu_raw_parse: 1,317 fields per raw row).
inline char* find_char(char* from, char* end, char c) {
  while (from < end && *from != c) ++from;
  return from;
}

// Splits [begin, end) at commas outside quotes, removing the quotes and undoubling "" in place.
void CsvReader::split_fields(char* begin, char* end) {
  fields_.clear();
  char* p = begin;
  for (;;) {
    if (p < end && *p == '"') {
      char* start = p + 1;
      char* read = start;
      char* out = nullptr;  // set once a "" forced the content to be compacted
      for (;;) {
        char* quote = find_char(read, end, '"');
        if (out) {
          std::memmove(out, read, static_cast<std::size_t>(quote - read));
          out += quote - read;
        }
        if (quote + 1 < end && quote[1] == '"') {
          if (!out)
            out = quote + 1;  // keep the first quote as the literal character
          else
            *out++ = '"';
          read = quote + 2;
          continue;
        }
        fields_.emplace_back(start, static_cast<std::size_t>((out ? out : quote) - start));
        read = quote < end ? quote + 1 : end;
        break;
      }
      // Anything between the closing quote and the next comma is not CSV; it is dropped.
      char* comma = find_char(read, end, ',');
      if (comma == end) return;
      p = comma + 1;
    } else {
      char* comma = find_char(p, end, ',');
      fields_.emplace_back(p, static_cast<std::size_t>(comma - p));
      if (comma == end) return;
      p = comma + 1;
    }
  }
}

Result<void> CsvReader::read_header() {
  std::size_t lines_seen = 0;
  std::string first_error_line;
  for (;;) {
    auto more = read_record(/*physical_line_only=*/true);
    if (!more) return more.error();
    if (!*more) break;
    ++lines_seen;
    const bool blank = detail::is_blank(raw_line_);
    if (!blank && (options_.is_header ? options_.is_header(fields()) : true)) {
      header_.assign(fields_.begin(), fields_.end());
      header_read_ = true;
      return {};
    }
    if (first_error_line.empty() && raw_line_.starts_with("==ERROR=="))
      first_error_line = printable_excerpt(raw_line_, 300);
    if (preamble_.size() < kMaxPreambleLinesKept) preamble_.push_back(raw_line_);
  }
  record_line_ = next_line_;
  if (lines_seen == 0)
    return make_error(ErrorCode::parse_error, source_name_ + " is empty: no CSV header and no rows",
                      "the tool that writes it probably failed or was interrupted; check its log", source_name_);
  if (!first_error_line.empty())
    return make_error(ErrorCode::parse_error,
                      source_name_ + " holds no CSV table, only the tool's error output: " + first_error_line,
                      "fix the error the profiler reported and profile again", source_name_);
  return make_error(ErrorCode::parse_error,
                    source_name_ + ": no line is the expected CSV header (" + std::to_string(lines_seen) +
                        " lines read; the first is '" + printable_excerpt(preamble_.empty() ? "" : preamble_.front()) +
                        "')",
                    "the file is not the expected Nsight CSV export, or it is damaged", source_name_);
}

Result<bool> CsvReader::next() {
  if (!header_read_) throw std::logic_error("CsvReader::next() called before a successful read_header()");
  for (;;) {
    auto more = read_record(/*physical_line_only=*/false);
    if (!more || !*more) return more;
    if (fields_.size() == 1 && fields_[0].empty()) continue;  // blank line
    return true;
  }
}

}  // namespace llmprof
