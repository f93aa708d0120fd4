// Steps from the launch sequence and its synchronisations (analysis/step_sequence.hpp).
#include "analysis/step_sequence.hpp"

#include <algorithm>
#include <map>

namespace llmprof::detail {
namespace {

// Alike: at least this share of the larger segment's calls match the other's. PyTorch 2.11's decode steps differ
// in 2 of 65 calls (the HF static-cache window) from one step to the next; a mixed step and a decode step differ
// in most.
constexpr double kAlike = 0.9;
constexpr std::size_t kMostSegmentsPerStep = 8;
constexpr std::size_t kFewestRepeats = 3;
constexpr std::size_t kMostClasses = 256;  // segments past this many classes each form their own

struct Segment {
  std::size_t first = 0, last = 0;    // call indices, inclusive
  std::vector<std::int64_t> tokens;   // sorted
  std::size_t calls() const { return last - first + 1; }
};

std::vector<Segment> cut_segments(const std::vector<SequenceCall>& calls) {
  std::vector<Segment> segments;
  std::size_t start = 0;
  bool computed = false;
  for (std::size_t i = 0; i < calls.size();) {
    if (!calls[i].synchronizes) {
      computed = computed || calls[i].computes;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end + 1 < calls.size() && calls[end + 1].synchronizes) ++end;
    if (computed) {
      Segment segment{start, end, {}};
      for (std::size_t c = start; c <= end; ++c) segment.tokens.push_back(calls[c].token);
      std::sort(segment.tokens.begin(), segment.tokens.end());
      segments.push_back(std::move(segment));
      start = end + 1;
      computed = false;
    }
    i = end + 1;
  }
  return segments;
}

bool alike(const Segment& a, const Segment& b) {
  const std::size_t larger = std::max(a.tokens.size(), b.tokens.size());
  const std::size_t smaller = std::min(a.tokens.size(), b.tokens.size());
  if (double(smaller) < kAlike * double(larger)) return false;
  std::size_t shared = 0;
  for (auto x = a.tokens.begin(), y = b.tokens.begin(); x != a.tokens.end() && y != b.tokens.end();) {
    if (*x < *y) {
      ++x;
    } else if (*y < *x) {
      ++y;
    } else {
      ++shared, ++x, ++y;
    }
  }
  return double(shared) >= kAlike * double(larger);
}

// Each segment's class: the first earlier segment (a class's leader) it is alike.
std::vector<std::size_t> classify(const std::vector<Segment>& segments) {
  std::vector<std::size_t> leaders, classes;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    std::size_t found = segments.size() + s;  // its own class, unless alike a leader
    for (std::size_t leader : leaders)
      if (alike(segments[leader], segments[s])) {
        found = leader;
        break;
      }
    if (found >= segments.size()) {
      found = s;
      if (leaders.size() < kMostClasses) leaders.push_back(s);
    }
    classes.push_back(found);
  }
  return classes;
}

struct Repeats {
  std::size_t period = 0;
  std::vector<std::size_t> starts;  // segment index of each repeat, non-overlapping
};

// Whether segments [from, to) launch a GEMM or a graph: what a forward pass launches.
bool launches_pass(const std::vector<SequenceCall>& calls, const std::vector<Segment>& segments, std::size_t from,
                   std::size_t to) {
  for (std::size_t c = segments[from].first; c <= segments[to - 1].last; ++c)
    if (calls[c].marks_pass) return true;
  return false;
}

// The p-tuple of classes that repeats most often, its first segment its longest, its classes distinct (an engine's
// six decode steps and a mixed one repeat too, as seven steps), launching a GEMM or a graph.
Repeats repeats_of_period(const std::vector<SequenceCall>& calls, const std::vector<Segment>& segments,
                          const std::vector<std::size_t>& classes, std::size_t period) {
  const std::size_t count = segments.size();
  std::map<std::vector<std::size_t>, std::pair<std::int64_t, std::size_t>> tuples;  // -> (count, first start)
  for (std::size_t j = 0; j + period <= count; ++j) {
    bool first_longest = true;
    for (std::size_t q = 1; q < period; ++q) first_longest = first_longest && segments[j + q].calls() <= segments[j].calls();
    if (!first_longest || !launches_pass(calls, segments, j, j + period)) continue;
    std::vector<std::size_t> key(classes.begin() + std::ptrdiff_t(j), classes.begin() + std::ptrdiff_t(j + period));
    std::vector<std::size_t> distinct = key;
    std::sort(distinct.begin(), distinct.end());
    if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) continue;  // several steps of a kind
    auto& entry = tuples.try_emplace(key, std::pair<std::int64_t, std::size_t>{0, j}).first->second;
    ++entry.first;
  }
  std::vector<std::pair<const std::vector<std::size_t>*, std::pair<std::int64_t, std::size_t>>> ranked;
  for (const auto& [key, entry] : tuples) ranked.emplace_back(&key, entry);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.second.second < b.second.second;
  });
  Repeats best{period, {}};
  for (std::size_t r = 0; r < std::min<std::size_t>(5, ranked.size()); ++r) {
    const auto& key = *ranked[r].first;
    std::vector<std::size_t> starts;
    for (std::size_t j = 0; j + period <= count;) {
      if (std::equal(key.begin(), key.end(), classes.begin() + std::ptrdiff_t(j))) {
        starts.push_back(j);
        j += period;
      } else {
        ++j;
      }
    }
    if (starts.size() > best.starts.size()) best.starts = std::move(starts);
  }
  return best;
}

std::optional<Repeats> find_repeats(const std::vector<SequenceCall>& calls, const std::vector<Segment>& segments,
                                    std::string& why_not) {
  const std::vector<std::size_t> classes = classify(segments);
  std::vector<Repeats> found;
  std::size_t most_covered = 0;
  for (std::size_t period = 1; period <= kMostSegmentsPerStep && kFewestRepeats * period <= segments.size(); ++period) {
    Repeats repeats = repeats_of_period(calls, segments, classes, period);
    if (repeats.starts.size() < kFewestRepeats) continue;
    most_covered = std::max(most_covered, repeats.starts.size() * period);
    found.push_back(std::move(repeats));
  }
  for (auto& repeats : found)  // by period, ascending: the smallest that covers the most
    if (repeats.starts.size() * repeats.period == most_covered) {
      if (2 * repeats.starts.size() * repeats.period < segments.size()) {
        why_not = "no launch sequence repeats between most synchronisations: the most regular, " +
                  std::to_string(repeats.starts.size()) + " repeats of " + std::to_string(repeats.period) +
                  " segment(s), covers " + std::to_string(repeats.starts.size() * repeats.period) + " of the " +
                  std::to_string(segments.size()) + " segments";
        return std::nullopt;
      }
      return std::move(repeats);
    }
  why_not = "no launch sequence between synchronisations repeats " + std::to_string(kFewestRepeats) + " times (" +
            std::to_string(segments.size()) + " segments)";
  return std::nullopt;
}

// The segments [from, to) between two repeats (or after the last), `period` at a time; a group that launches no GEMM
// or graph is no forward pass and joins the next group (the last, the one before): Hugging Face generate()'s second
// call prepares its inputs behind two synchronisations of its own before its prefill. A gap of such groups only
// stays one step.
std::vector<std::pair<std::size_t, std::size_t>> gap_groups(const std::vector<SequenceCall>& calls,
                                                            const std::vector<Segment>& segments, std::size_t from,
                                                            std::size_t to, std::size_t period) {
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  std::optional<std::size_t> pending;  // the start of groups without a pass, waiting for one
  for (std::size_t gap = from; gap < to; gap += period) {
    const std::size_t end = std::min(gap + period, to);
    const std::size_t begin = pending.value_or(gap);
    if (!launches_pass(calls, segments, gap, end) && end < to) {
      pending = begin;
      continue;
    }
    if (!launches_pass(calls, segments, begin, end) && !groups.empty())
      groups.back().second = end;
    else
      groups.emplace_back(begin, end);
    pending.reset();
  }
  return groups;
}

// The token launched once in the repeat starting at segment `start`: a graph launch, else the last GEMM.
std::optional<std::int64_t> once_per_step(const std::vector<SequenceCall>& calls, const std::vector<Segment>& segments,
                                          std::size_t start, std::size_t period) {
  const std::size_t first = segments[start].first, last = segments[start + period - 1].last;
  std::map<std::int64_t, std::int64_t> counts;
  for (std::size_t c = first; c <= last; ++c) ++counts[calls[c].token];
  std::optional<std::int64_t> graph, gemm;
  for (std::size_t c = first; c <= last; ++c) {
    if (!calls[c].marks_pass || counts[calls[c].token] != 1) continue;
    if (calls[c].graph && !graph) graph = calls[c].token;
    if (!calls[c].graph) gemm = calls[c].token;
  }
  return graph ? graph : gemm;
}

}  // namespace

SequenceSteps find_sequence_steps(const std::vector<SequenceCall>& calls) {
  SequenceSteps found;
  const std::vector<Segment> segments = cut_segments(calls);
  found.segments = std::int64_t(segments.size());
  const auto one_per_segment = [&] {
    for (const auto& segment : segments) found.steps.push_back({segment.first, segment.last, false, 0});
  };
  const auto repeats = find_repeats(calls, segments, found.disagreement);
  if (!repeats) {
    one_per_segment();
    return found;
  }
  const std::size_t period = repeats->period;
  found.unit_segments = std::int64_t(period);
  found.repeats = std::int64_t(repeats->starts.size());
  const std::size_t unit_first = repeats->starts.front();
  found.unit_calls = std::int64_t(segments[unit_first + period - 1].last - segments[unit_first].first + 1);
  const auto group = [&](std::size_t from, std::size_t to, bool repeat) {  // segments [from, to)
    if (from < to) found.steps.push_back({segments[from].first, segments[to - 1].last, repeat, 0});
  };
  group(0, unit_first, false);
  for (std::size_t r = 0; r < repeats->starts.size(); ++r) {
    const std::size_t start = repeats->starts[r];
    group(start, start + period, true);
    const std::size_t next = r + 1 < repeats->starts.size() ? repeats->starts[r + 1] : segments.size();
    for (const auto& [from, to] : gap_groups(calls, segments, start + period, next, period)) group(from, to, false);
  }
  found.once_per_step = once_per_step(calls, segments, unit_first, period);
  if (!found.once_per_step) {
    found.disagreement = "no GEMM or graph launch occurs once in the repeating sequence of " +
                         std::to_string(found.unit_calls) + " calls: each synchronisation closes several forward passes";
    return found;
  }
  for (auto& step : found.steps)
    for (std::size_t c = step.first; c <= step.last; ++c) step.marks += calls[c].token == *found.once_per_step;
  if (unit_first > 0 && found.steps.front().marks > 1) {
    found.lead_in_marks_left_out = found.steps.front().marks;
    found.steps.erase(found.steps.begin());
  }
  const auto several = std::count_if(found.steps.begin(), found.steps.end(),
                                     [](const SequenceStep& step) { return step.marks > 1; });
  if (several > 0)
    found.disagreement = std::to_string(several) + " step(s) between synchronisations hold the once-per-step launch " +
                         "more than once: their synchronisation closes more than one forward pass";
  return found;
}

}  // namespace llmprof::detail
