// CsvReader and parse_csv_number on hand-made inputs with the quirks of real Nsight files, and on
// the fixtures themselves (row and field counts agree with Python's csv module, see
// tests/tools/fixture_facts.py).
#include <catch2/catch.hpp>

#include <sstream>

#include "llmprof/csv.hpp"
#include "test_support.hpp"

using llmprof::CsvReader;
using llmprof::CsvReaderOptions;
using llmprof::testing::data_path;

namespace {

// All records of `text` (header first), each as owned strings.
std::vector<std::vector<std::string>> read_all(const std::string& text, CsvReaderOptions options = {}) {
  std::istringstream in(text);
  CsvReader reader(in, "memory.csv", std::move(options));
  REQUIRE(reader.read_header().has_value());
  std::vector<std::vector<std::string>> records{reader.header()};
  for (;;) {
    auto more = reader.next();
    REQUIRE(more.has_value());
    if (!*more) break;
    records.emplace_back(reader.fields().begin(), reader.fields().end());
  }
  return records;
}

}  // namespace

TEST_CASE("quoted fields keep commas, doubled quotes and newlines") {
  const auto records = read_all(
      "Name,Value\n"
      "\"void f<int, float>(T1 *, T2)\",1\n"
      "\"say \"\"hi\"\", twice\",2\n"
      "\"line one\nline two\",3\n"
      "plain,\"\"\n");
  REQUIRE(records.size() == 5);
  CHECK(records[1] == std::vector<std::string>{"void f<int, float>(T1 *, T2)", "1"});
  CHECK(records[2] == std::vector<std::string>{"say \"hi\", twice", "2"});
  CHECK(records[3] == std::vector<std::string>{"line one\nline two", "3"});
  CHECK(records[4] == std::vector<std::string>{"plain", ""});
}

TEST_CASE("CRLF line ends are stripped, CR inside quotes is kept") {
  const auto records = read_all("a,b\r\n1,\"x\r\ny\"\r\n2,3\r\n");
  REQUIRE(records.size() == 3);
  CHECK(records[0] == std::vector<std::string>{"a", "b"});
  CHECK(records[1] == std::vector<std::string>{"1", "x\r\ny"});
  CHECK(records[2] == std::vector<std::string>{"2", "3"});
}

TEST_CASE("line numbers count the lines inside quoted fields") {
  std::istringstream in("h1,h2\n\"a\nb\nc\",1\nnext,2\n\nlast,3");
  CsvReader reader(in, "memory.csv");
  REQUIRE(reader.read_header().has_value());
  REQUIRE(*reader.next());
  CHECK(reader.line_number() == 2);
  REQUIRE(*reader.next());
  CHECK(reader.line_number() == 5);
  CHECK(reader.fields()[0] == "next");
  REQUIRE(*reader.next());  // the blank line 6 is skipped
  CHECK(reader.line_number() == 7);
  CHECK(reader.fields()[0] == "last");
  CHECK_FALSE(reader.record_terminated());
  CHECK_FALSE(*reader.next());
}

TEST_CASE("leading non-CSV lines are kept as preamble until the header predicate accepts one") {
  CsvReaderOptions options;
  options.is_header = llmprof::csv_header_with({"ID", "Kernel Name"});
  std::istringstream in(
      "==PROF== Connected to process 1 (/usr/bin/python3)\n"
      "app printed \"an unbalanced quote\n"
      "ok\n"
      "\"ID\",\"Kernel Name\"\n"
      "\"0\",\"k\"\n");
  CsvReader reader(in, "log.csv", options);
  REQUIRE(reader.read_header().has_value());
  CHECK(reader.preamble().size() == 3);
  CHECK(reader.preamble()[1] == "app printed \"an unbalanced quote");
  CHECK(reader.line_number() == 4);
  CHECK(reader.column("Kernel Name") == 1u);
  REQUIRE(*reader.next());
  CHECK(reader.fields()[1] == "k");
  CHECK(reader.line_number() == 5);
}

TEST_CASE("an unterminated quote at end of input is an error naming file and line") {
  std::istringstream in("a,b\n1,2\n3,\"never closed\n4,5\n");
  CsvReader reader(in, "cut.csv");
  REQUIRE(reader.read_header().has_value());
  REQUIRE(*reader.next());
  const auto result = reader.next();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == llmprof::ErrorCode::parse_error);
  CHECK_THAT(result.error().message, Catch::Contains("cut.csv:3:") && Catch::Contains("unterminated quoted field"));
}

TEST_CASE("no header: empty input, ncu error text, random bytes") {
  CsvReaderOptions options;
  options.is_header = llmprof::csv_header_with({"ID"});
  SECTION("empty") {
    std::istringstream in("");
    CsvReader reader(in, "empty.csv", options);
    const auto result = reader.read_header();
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("empty.csv is empty"));
  }
  SECTION("only ncu's error output") {
    std::istringstream in("==PROF== Connected to process 7\n==ERROR== The application returned an error code (1).\n");
    CsvReader reader(in, "err.csv", options);
    const auto result = reader.read_header();
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message,
               Catch::Contains("err.csv holds no CSV table") && Catch::Contains("==ERROR== The application returned"));
  }
  SECTION("random bytes") {
    std::string bytes;
    std::mt19937 random(42);
    for (int i = 0; i < 100000; ++i) bytes += static_cast<char>(random() & 0xff);
    std::istringstream in(bytes);
    CsvReader reader(in, "noise.bin", options);
    const auto result = reader.read_header();
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("noise.bin: no line is the expected CSV header"));
  }
}

TEST_CASE("records larger than the initial buffer are read whole") {
  std::string wide = "h\n\"";
  wide.append(3u << 20, 'x');  // 3 MiB, past the 1 MiB initial buffer
  wide += "\"\nend\n";
  const auto records = read_all(wide);
  REQUIRE(records.size() == 3);
  CHECK(records[1][0].size() == (3u << 20));
  CHECK(records[2][0] == "end");
}

TEST_CASE("the fixtures split into the same records as Python's csv module") {
  // (file, records after the header, fields per record) from tests/tools/fixture_facts.py.
  const std::vector<std::tuple<std::string, std::size_t, std::size_t>> expected{
      {"nsys/ns1_st_cuda_gpu_kern_sum.csv", 17, 9},
      {"nsys/ns1_st_nvtx_kern_sum.csv", 20, 13},
      {"ncu/nc1_raw.csv", 41, 1317},  // units row + 40 launches
      {"ncu/gemm_raw.csv", 2, 1317},
  };
  for (const auto& [file, count, width] : expected) {
    auto reader = CsvReader::open(data_path("h100-nsight-2025.3/" + file));
    REQUIRE(reader.has_value());
    REQUIRE(reader->read_header().has_value());
    CHECK(reader->header().size() == width);
    std::size_t records = 0;
    while (*reader->next()) {
      CHECK(reader->fields().size() == width);
      ++records;
    }
    CHECK(records == count);
  }
}

TEST_CASE("opening a missing file is not_found") {
  const auto reader = CsvReader::open("/nonexistent/dir/x.csv");
  REQUIRE_FALSE(reader.has_value());
  CHECK(reader.error().code == llmprof::ErrorCode::not_found);
  CHECK_THAT(reader.error().message, Catch::Contains("/nonexistent/dir/x.csv"));
}

TEST_CASE("parse_csv_number reads Nsight's number spellings") {
  using llmprof::parse_csv_number;
  CHECK(*parse_csv_number("16,896").value() == 16896.0);
  CHECK(*parse_csv_number("1,712,814,376,811,594.25").value() == Approx(1712814376811594.25).epsilon(1e-15));
  CHECK(*parse_csv_number("-3.5e-2").value() == -0.035);
  CHECK(*parse_csv_number(" 7 ").value() == 7.0);
  CHECK(*parse_csv_number("+2").value() == 2.0);
  CHECK(*parse_csv_number("0.459201").value() == 0.459201);
  // Exactly the missing-value markers csv.hpp documents.
  for (const char* missing : {"", "n/a", "N/A", "-", "nan", "NaN", " n/a "}) {
    INFO(missing);
    CHECK_FALSE(parse_csv_number(missing).value().has_value());
  }
  for (const char* bad : {"abc", "1,2", "12,34,567", "1.2.3", "1e", ",123", "1,234.5,6", "No-CC", "--1"}) {
    INFO(bad);
    const auto result = parse_csv_number(bad);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().subject == bad);
  }
}

TEST_CASE("parse_csv_integer is exact beyond 2^53") {
  using llmprof::parse_csv_integer;
  CHECK(*parse_csv_integer("9,007,199,254,740,993").value() == 9007199254740993LL);
  CHECK(*parse_csv_integer("1226511862").value() == 1226511862LL);
  CHECK(*parse_csv_integer("-42").value() == -42);
  CHECK(*parse_csv_integer("1019381.0").value() == 1019381);
  CHECK(*parse_csv_integer("9223372036854775807").value() == INT64_MAX);
  CHECK_FALSE(parse_csv_integer("n/a").value().has_value());
  CHECK_FALSE(parse_csv_integer("1.5").has_value());
  CHECK_FALSE(parse_csv_integer("9223372036854775808").has_value());
  CHECK_FALSE(parse_csv_integer("1,23").has_value());
}

TEST_CASE("a zero-padded number longer than the digit buffer is a number as well as an integer (fuzz regression)") {
  // Found by fuzz/csv_reader_fuzzer.cpp: parse_csv_integer accepted 118 zeros, parse_csv_number
  // rejected them because they did not fit its 96-byte digit buffer.
  auto reader = CsvReader::open(data_path("fuzz-regressions/csv_long_zero_padded_number.csv"));
  REQUIRE(reader);
  REQUIRE(reader->read_header());
  const double expected[] = {0, 42};
  for (double value : expected) {
    auto more = reader->next();
    REQUIRE(more);
    REQUIRE(*more);
    const auto field = reader->fields()[1];
    REQUIRE(field.size() > 96);
    const auto integer = llmprof::parse_csv_integer(field);
    const auto number = llmprof::parse_csv_number(field);
    REQUIRE(integer);
    REQUIRE(number);
    CHECK(**integer == static_cast<std::int64_t>(value));
    CHECK(**number == value);
  }
}
