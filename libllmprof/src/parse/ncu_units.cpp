// Nsight Compute unit normalisation and the NVTX range column.
//
// ncu (2025.3) scales values for display: "Kbyte", "Mbyte/s" ... are decimal (1000-based), as
// `--print-units base` confirms on the same report (nc1_raw.csv vs nc1_raw_base.csv). Time is
// printed as ns/us/ms/s (older versions: nsecond/usecond/msecond/second), frequency as
// hz/Khz/Mhz/Ghz, bandwidth as byte/s or <prefix>byte/s (also spelled .../second).
#include <array>
#include <string>
#include <utility>

#include "llmprof/ncu_metrics.hpp"
#include "parse/ncu_units.hpp"

namespace llmprof {
namespace {

struct Prefix {
  std::string_view text;
  double factor;
};
constexpr std::array<Prefix, 6> kDecimalPrefixes{
    {{"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}}};

// Seconds per unit of time, or 0 when `unit` is not a time unit.
double seconds_per(std::string_view unit) {
  if (unit == "s" || unit == "second" || unit == "sec") return 1;
  if (unit == "ms" || unit == "msecond") return 1e-3;
  if (unit == "us" || unit == "usecond") return 1e-6;
  if (unit == "ns" || unit == "nsecond") return 1e-9;
  return 0;
}

// Counted quantities ncu may print with a decimal prefix.
bool is_countable(std::string_view word) {
  static constexpr std::array<std::string_view, 9> words{"byte",   "inst",  "cycle",   "sector", "warp",
                                                         "thread", "block", "request", "flop"};
  for (auto candidate : words)
    if (word == candidate) return true;
  return false;
}

bool is_hertz(std::string_view word) { return word == "hz" || word == "Hz"; }

// A unit without '/': time -> ns, frequency -> hz, prefixed counts -> the count. nullopt: unknown.
std::optional<detail::UnitScale> simple_unit(std::string_view unit) {
  if (const double seconds = seconds_per(unit); seconds > 0) return detail::UnitScale{seconds * 1e9, "ns"};
  if (is_hertz(unit)) return detail::UnitScale{1, "hz"};
  if (is_countable(unit)) return detail::UnitScale{1, std::string(unit)};
  for (const auto& prefix : kDecimalPrefixes) {
    if (!unit.starts_with(prefix.text)) continue;
    const auto rest = unit.substr(prefix.text.size());
    if (is_hertz(rest) || rest == "Hz" || rest == "HZ") return detail::UnitScale{prefix.factor, "hz"};
    if (is_countable(rest)) return detail::UnitScale{prefix.factor, std::string(rest)};
  }
  return std::nullopt;
}

}  // namespace

namespace detail {

UnitScale unit_scale(std::string_view unit) {
  if (unit.empty() || unit == "%") return {1, std::string(unit)};
  if (auto simple = simple_unit(unit)) return *simple;
  const auto slash = unit.find('/');
  if (slash != std::string_view::npos) {
    const auto numerator = unit.substr(0, slash);
    const auto denominator = unit.substr(slash + 1);
    auto top = simple_unit(numerator);
    if (!top) top = UnitScale{1, std::string(numerator)};
    // Rates are normalised to per second ("Gbyte/s", "Tbyte/second" -> byte/second).
    if (const double seconds = seconds_per(denominator); seconds > 0)
      return {top->factor / seconds, top->unit + "/second"};
    if (const auto bottom = simple_unit(denominator); bottom && bottom->factor != 1)
      return {top->factor / bottom->factor, top->unit + "/" + bottom->unit};
    return {top->factor, top->unit + "/" + std::string(denominator)};
  }
  return {1, std::string(unit)};  // unknown: kept as printed, never guessed
}

}  // namespace detail

NormalizedValue normalize_to_base_unit(double value, std::string_view unit) {
  auto scale = detail::unit_scale(unit);
  return {value * scale.factor, std::move(scale.unit)};
}

namespace {

// One entry "domain:range:pl_type:pl_value:clr_type:color:msg_type:msg" -> (domain, range).
NvtxRangeName parse_nvtx_entry(std::string_view entry) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto colon = entry.find(':', start);
    parts.push_back(entry.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  NvtxRangeName range;
  if (parts.size() == 1) {
    range.name = std::string(parts[0]);
    return range;
  }
  range.domain = parts[0] == "<default domain>" ? std::string() : std::string(parts[0]);
  // With all eight fields present the last six are attributes, so a name may hold ':'.
  const std::size_t name_end = parts.size() >= 8 ? parts.size() - 6 : 2;
  for (std::size_t i = 1; i < name_end; ++i) {
    if (i > 1) range.name += ':';
    range.name += parts[i];
  }
  return range;
}

}  // namespace

std::vector<NvtxRangeName> parse_ncu_nvtx_stack(std::string_view cell) {
  std::vector<NvtxRangeName> stack;
  std::size_t position = 0;
  for (;;) {
    const auto open = cell.find('"', position);
    if (open == std::string_view::npos) break;
    const auto close = cell.find('"', open + 1);
    if (close == std::string_view::npos) break;  // damaged cell: keep what was complete
    const auto entry = cell.substr(open + 1, close - open - 1);
    if (!entry.empty()) stack.push_back(parse_nvtx_entry(entry));
    position = close + 1;
  }
  return stack;
}

}  // namespace llmprof
