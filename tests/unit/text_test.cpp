// The one home of the text helpers (core/text.hpp), of percentages (llmprof/percent.hpp) and the one JSON
// integer policy (core/json_fields.hpp). Expected percent texts computed with Python's printf-style
// formatting ("%.0f" % 99.95 == "100", "%.2f" % 99.95 == "99.95").
#include <catch2/catch.hpp>
#include <limits>

#include <boost/json/parse.hpp>

#include "core/json_fields.hpp"
#include "core/text.hpp"
#include "llmprof/percent.hpp"

using namespace llmprof::detail;

TEST_CASE("trim removes ASCII whitespace at both ends and nothing else") {
  CHECK(trim(" \t\r\n\v\fvalue \t\r\n\v\f") == "value");
  CHECK(trim("  inner  space  ") == "inner  space");
  CHECK(trim(" \t\r\n").empty());
  CHECK(trim("").empty());
  // A UTF-8 non-breaking space (C2 A0) is text, not whitespace: the result does not depend on a locale.
  CHECK(trim("\xC2\xA0x\xC2\xA0") == "\xC2\xA0x\xC2\xA0");
}

TEST_CASE("is_blank is true for nothing but kWhitespace, the set trim removes") {
  CHECK(is_blank(""));
  CHECK(is_blank(" \t\r\n\v\f"));
  CHECK_FALSE(is_blank(" x "));
  CHECK_FALSE(is_blank("\xC2\xA0"));  // a UTF-8 non-breaking space is text
}

TEST_CASE("format_fraction_percent: the report's digits, three significant, and never 100% short of whole") {
  using llmprof::format_fraction_percent;
  using llmprof::PercentDigits;
  CHECK(format_fraction_percent(0.37) == "37%");
  CHECK(format_fraction_percent(0.04) == "4.0%");
  CHECK(format_fraction_percent(0.005) == "0.50%");
  CHECK(format_fraction_percent(0.00024) == "< 0.1%");  // two or three digits: below 0.1% they only say "small"
  CHECK(format_fraction_percent(0.001) == "0.10%");
  CHECK(format_fraction_percent(std::nullopt) == "\u2014");  // not computed
  // A coverage of 98.7% against a 99% target must not read "99%".
  CHECK(format_fraction_percent(0.987) == "99%");
  CHECK(format_fraction_percent(0.987, PercentDigits::three_significant) == "98.7%");
  CHECK(format_fraction_percent(0.005, PercentDigits::three_significant) == "0.5%");
  CHECK(format_fraction_percent(0.9995, PercentDigits::short_of_whole) == "99.95%");
  CHECK(format_fraction_percent(0.999, PercentDigits::short_of_whole) == "99.9%");
  CHECK(format_fraction_percent(1.0, PercentDigits::short_of_whole) == "100%");
  CHECK(format_fraction_percent(0.37, PercentDigits::short_of_whole) == "37%");
}

TEST_CASE("join puts the separator between items and can cut a long list") {
  const std::vector<std::string> items{"a", "b", "c"};
  CHECK(join(items, ", ") == "a, b, c");
  CHECK(join(std::vector<std::string>{}, ", ").empty());
  CHECK(join(std::vector<std::string>{"", "x"}, ",") == ",x");  // an empty first item still gets its separator
  CHECK(join(items, " ", 2) == "a b ... (1 more)");
  CHECK(join(items, " ", 3) == "a b c");
  const std::initializer_list<std::string_view> views{"one", "two"};
  CHECK(join(views, "|") == "one|two");
}

TEST_CASE("split keeps empty fields; split_lines ends a line at LF, CRLF or a lone CR") {
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
  CHECK(split("/usr/bin:", ':') == std::vector<std::string>{"/usr/bin", ""});
  CHECK(split_lines("a\r\nb\rc\n") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_lines("a\n\nb") == std::vector<std::string>{"a", "", "b"});
  CHECK(split_lines("").empty());
}

TEST_CASE("edit_distance is the Levenshtein distance") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("decode", "decode") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("nvtx_captur", "nvtx_capture") == 1);
}

TEST_CASE("the three number formats: for people, exact, and for data files") {
  CHECK(format_number(5.0) == "5");
  CHECK(format_number(1.20) == "1.2");
  CHECK(format_number(0.012345) == "0.0123");
  CHECK(format_number(1234.6) == "1235");  // 3 significant digits, but never an exponent
  CHECK(format_number(0.04567, 2) == "0.046");
  // Non-finite values (a ratio against zero) are named, not cast to int through log10 (undefined behaviour).
  CHECK(format_number(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(format_number(-0.0000001) == "0");
  CHECK(format_exact_number(3.0) == "3");
  CHECK(format_exact_number(0.1) == "0.1");
  CHECK(format_exact_number(1e20) == "1e+20");
  CHECK(format_exact_number(-2.5) == "-2.5");
  CHECK(format_data_number(0.125) == "0.125");
  CHECK(format_data_number(1234567891234567.0) == "1.234567891e+15");
}

TEST_CASE("json_to_int64: integers, and whole doubles up to 2^53 only") {
  const auto parse = [](const char* text) { return boost::json::parse(text); };
  CHECK(json_to_int64(parse("42")) == 42);
  CHECK(json_to_int64(parse("-7")) == -7);
  CHECK(json_to_int64(parse("4.0")) == 4);
  CHECK(json_to_int64(parse("9007199254740992.0")) == 9007199254740992);  // 2^53
  CHECK_FALSE(json_to_int64(parse("18014398509481984.0")));               // 2^54: no longer says which integer
  CHECK(json_to_int64(parse("9223372036854775807")) == 9223372036854775807);
  CHECK_FALSE(json_to_int64(parse("9223372036854775808")));  // above INT64_MAX
  CHECK_FALSE(json_to_int64(parse("2.5")));
  CHECK_FALSE(json_to_int64(parse("\"4\"")));
  CHECK(describe_json_value(parse("2.5")) == "the number 2.5E0");
  CHECK(describe_json_value(parse("[1]")) == "an array");
}
