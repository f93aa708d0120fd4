// Streaming CSV reader: one record at a time from a growable buffer, fields unescaped in place.
#include "llmprof/csv.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <charconv>
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

// A line quoted in an error message: printable, short, so random bytes cannot garble a terminal.
std::string printable_excerpt(std::string_view text, std::size_t limit = 120) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    out += (byte >= 0x20 && byte < 0x7f) ? c : '?';
  }
  if (text.size() > limit) out += "...";
  return out;
}

using detail::trim;

bool is_missing_marker(std::string_view text) {
  return text.empty() || text == "n/a" || text == "N/A" || text == "-" || text == "nan" || text == "NaN";
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Copies `text` without its thousands separators into `out`; false when a ',' is not between a
// digit and a group of exactly three digits, or the text is too long for the buffer.
bool strip_thousands_separators(std::string_view text, char* out, std::size_t capacity, std::size_t& length) {
  length = 0;
  bool in_integer_part = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      const bool grouped = in_integer_part && i > 0 && is_digit(text[i - 1]) && i + 3 < text.size() &&
                           is_digit(text[i + 1]) && is_digit(text[i + 2]) && is_digit(text[i + 3]) &&
                           (i + 4 == text.size() || !is_digit(text[i + 4]));
      if (!grouped) return false;
      continue;
    }
    if (c == '.' || c == 'e' || c == 'E') in_integer_part = false;
    if (length + 1 >= capacity) return false;
    out[length++] = c;
  }
  return true;
}

// Fast path for the bulk of Nsight's cells: [-]digits[,ddd...][.digits] with at most 15
// significant digits. Exact: the digits fit a double's 53-bit mantissa and 10^k (k <= 15) is exact,
// so one IEEE division rounds correctly, as from_chars would (Clinger's fast path). Anything else
// (spaces, '+', exponents, missing markers, long numbers) returns false for the general path.
bool parse_plain_decimal(std::string_view text, double& value) {
  static constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p == end || !is_digit(*p)) return false;
  std::uint64_t mantissa = 0;
  int digits = 0;
  std::size_t group_digits = 0;
  bool grouped = false;
  for (; p < end; ++p) {
    if (is_digit(*p)) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      ++digits;
      ++group_digits;
    } else if (*p == ',') {
      // A separator follows 1-3 digits first, exactly 3 afterwards.
      if (grouped ? group_digits != 3 : (group_digits == 0 || group_digits > 3)) return false;
      grouped = true;
      group_digits = 0;
    } else {
      break;
    }
    if (digits > 15) return false;
  }
  if (grouped && group_digits != 3) return false;
  int fraction_digits = 0;
  if (p < end && *p == '.') {
    for (++p; p < end && is_digit(*p); ++p) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      if (++digits > 15) return false;
      ++fraction_digits;
    }
  }
  if (p != end) return false;
  value = static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
  if (negative && mantissa != 0) value = -value;
  return true;
}

}  // namespace

namespace detail {

NumberParse parse_number(std::string_view text, double& value) {
  if (parse_plain_decimal(text, value)) return NumberParse::ok;
  text = trim(text);
  if (is_missing_marker(text)) return NumberParse::missing;
  // Fast path: plain or grouped integers, the bulk of ncu's cells.
  std::int64_t integer = 0;
  if (text.size() <= 24 && parse_integer(text, integer) == NumberParse::ok &&
      text.find_first_of(".eE") == std::string_view::npos) {
    value = static_cast<double>(integer);
    return NumberParse::ok;
  }
  char stack_digits[96];
  std::string heap_digits;  // only for texts longer than the stack buffer, e.g. zero-padded numbers
  char* digits = stack_digits;
  std::size_t capacity = sizeof stack_digits;
  if (text.size() >= capacity) {
    heap_digits.resize(text.size() + 1);
    digits = heap_digits.data();
    capacity = heap_digits.size();
  }
  std::size_t length = 0;
  if (!strip_thousands_separators(text, digits, capacity, length) || length == 0) return NumberParse::invalid;
  const char* first = digits;
  const char* last = digits + length;
  if (*first == '+') ++first;  // from_chars rejects an explicit '+'
  if (first == last || (!is_digit(*first) && *first != '-' && *first != '.' && *first != 'i' && *first != 'I'))
    return NumberParse::invalid;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last) return NumberParse::invalid;
  return NumberParse::ok;
}

NumberParse parse_integer(std::string_view text, std::int64_t& value) {
  text = trim(text);
  if (is_missing_marker(text)) return NumberParse::missing;
  bool negative = false;
  std::size_t i = 0;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size() || !is_digit(text[i])) return NumberParse::invalid;
  std::uint64_t magnitude = 0;
  std::size_t group_digits = 0;
  bool grouped = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      // A separator follows 1-3 digits first, exactly 3 afterwards.
      if ((grouped ? group_digits != 3 : (group_digits == 0 || group_digits > 3))) return NumberParse::invalid;
      grouped = true;
      group_digits = 0;
      continue;
    }
    if (!is_digit(c)) break;
    if (magnitude > (std::uint64_t{1} << 63) / 10) return NumberParse::invalid;
    magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
    ++group_digits;
  }
  if (grouped && group_digits != 3) return NumberParse::invalid;
  if (i < text.size()) {
    // "1234.0" is an integer as nsys prints some counts; any other fraction is not.
    if (text[i] != '.') return NumberParse::invalid;
    for (++i; i < text.size(); ++i)
      if (text[i] != '0') return NumberParse::invalid;
  }
  const std::uint64_t limit = negative ? (std::uint64_t{1} << 63) : (std::uint64_t{1} << 63) - 1;
  if (magnitude > limit) return NumberParse::invalid;
  value = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return NumberParse::ok;
}

}  // namespace detail

Result<std::optional<double>> parse_csv_number(std::string_view text) {
  double value = 0;
  switch (detail::parse_number(text, value)) {
    case detail::NumberParse::ok: return std::optional<double>(value);
    case detail::NumberParse::missing: return std::optional<double>();
    case detail::NumberParse::invalid: break;
  }
  return make_error(ErrorCode::parse_error, "'" + printable_excerpt(text) + "' is not a number", {},
                    std::string(text));
}

Result<std::optional<std::int64_t>> parse_csv_integer(std::string_view text) {
  std::int64_t value = 0;
  switch (detail::parse_integer(text, value)) {
    case detail::NumberParse::ok: return std::optional<std::int64_t>(value);
    case detail::NumberParse::missing: return std::optional<std::int64_t>();
    case detail::NumberParse::invalid: break;
  }
  return make_error(ErrorCode::parse_error, "'" + printable_excerpt(text) + "' is not an integer", {},
                    std::string(text));
}

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
          if (!out) out = quote + 1;  // keep the first quote as the literal character
          else *out++ = '"';
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
    const bool blank = raw_line_.find_first_not_of(" \t") == std::string::npos;
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
