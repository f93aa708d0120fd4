// Stage: the stages of a deep-profile run, in the order they run, and the one table of their names.
//
// A stage's name is what run.json records (StageRecord::name), what progress lines and the log show, and
// the folder its files go to where it has one. The bare run of the workload is Stage::workload; its
// recorded name and folder stay "stage1" so that run directories written before this enum read the same.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace llmprof {

enum class Stage { probe, workload, nsys, select, ncu, analyze, report };

// Every stage, in the order a run runs them.
inline constexpr std::array<Stage, 7> kStages = {Stage::probe, Stage::workload, Stage::nsys,  Stage::select,
                                                 Stage::ncu,   Stage::analyze,  Stage::report};

// The recorded name: probe, stage1, nsys, select, ncu, analyze, report.
const char* to_string(Stage stage) noexcept;
// The stage a recorded name stands for; nullopt for a name that is no stage.
std::optional<Stage> parse_stage(std::string_view name) noexcept;

}  // namespace llmprof
