// Error -> exit status (see exit_code.hpp).
#include "llmprof/exit_code.hpp"

#include "core/enum_table.hpp"
#include "llmprof/choice.hpp"

namespace llmprof {
namespace {

using detail::EnumRow;

// The mappings exit_code.hpp documents, one row per enumerator in declaration order.
constexpr EnumRow<ErrorCode, ExitCode> kErrorExits[] = {
    {ErrorCode::invalid_argument, exit_usage},  {ErrorCode::not_found, exit_bad_input},
    {ErrorCode::io_error, exit_not_ready},      {ErrorCode::no_space, exit_not_ready},
    {ErrorCode::parse_error, exit_bad_input},   {ErrorCode::process_failed, exit_not_ready},
    {ErrorCode::timeout, exit_timeout},         {ErrorCode::interrupted, exit_interrupted},
    {ErrorCode::no_report, exit_incomplete},    {ErrorCode::unsupported, exit_not_ready},
    {ErrorCode::already_exists, exit_not_ready}};
static_assert(detail::rows_in_enum_order(kErrorExits));

constexpr EnumRow<GateOutcome, ExitCode> kGateExits[] = {{GateOutcome::passed, exit_ok},
                                                         {GateOutcome::regression, exit_regression},
                                                         {GateOutcome::cannot_compare, exit_inconclusive},
                                                         {GateOutcome::inconclusive, exit_noise}};
static_assert(detail::rows_in_enum_order(kGateExits));

}  // namespace

ExitCode exit_code_for(const Error& error) noexcept {
  return detail::enum_value(kErrorExits, error.code, exit_not_ready);
}

std::span<const std::string_view> choice_names(GateOutcome) noexcept {
  static constexpr std::string_view names[] = {"passed", "regression", "cannot compare", "inconclusive"};
  return names;
}

const char* to_string(GateOutcome outcome) noexcept { return choice_name(outcome).data(); }

ExitCode exit_code_for(GateOutcome outcome) noexcept { return detail::enum_value(kGateExits, outcome, exit_not_ready); }

}  // namespace llmprof
