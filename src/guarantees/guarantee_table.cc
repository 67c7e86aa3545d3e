#include "guarantees/guarantee_table.h"

#include <algorithm>
#include <cstdio>

namespace sluice::guarantees {

const char* source_kind_name(SourceKind s) { return s == SourceKind::kReplayable ? "replayable" : "not replayable"; }

const char* sink_kind_name(SinkKind s) {
  switch (s) {
    case SinkKind::kPlain: return "plain";
    case SinkKind::kIdempotent: return "idempotent";
    case SinkKind::kWriteAheadLog: return "write-ahead log";
    case SinkKind::kTwoPhaseCommit: return "two-phase commit";
  }
  return "?";
}

const char* guarantee_name(Guarantee g) {
  switch (g) {
    case Guarantee::kAtMostOnce: return "at-most-once";
    case Guarantee::kAtLeastOnce: return "at-least-once";
    case Guarantee::kExactlyOnce: return "exactly-once";
  }
  return "?";
}

Guarantee expected_guarantee(SourceKind source, SinkKind sink) {
  if (source == SourceKind::kNotReplayable) return Guarantee::kAtMostOnce;  // whatever the sink
  switch (sink) {
    case SinkKind::kPlain:
    case SinkKind::kWriteAheadLog: return Guarantee::kAtLeastOnce;
    case SinkKind::kIdempotent:  // "with a temporary inconsistency while recovering"
    case SinkKind::kTwoPhaseCommit: return Guarantee::kExactlyOnce;
  }
  return Guarantee::kAtMostOnce;
}

Guarantee measured_guarantee(const CellOutcome& o) {
  if (o.lost > 0) return Guarantee::kAtMostOnce;
  if (o.duplicated > 0) return Guarantee::kAtLeastOnce;
  return Guarantee::kExactlyOnce;
}

namespace {

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string cell_text(const Cell& c) {
  if (!c.error.empty()) return "ERROR";
  return guarantee_name(measured_guarantee(c.outcome));
}

}  // namespace

std::string format_table(const std::vector<Cell>& cells, int* mismatches) {
  constexpr size_t kCol = 18;
  std::string out;
  std::vector<std::string> targets;
  size_t first = 16;  // the first column fits "not replayable" and every "measured: <target>"
  for (const auto& c : cells) {
    bool seen = false;
    for (const auto& t : targets) seen = seen || t == c.target;
    if (!seen) targets.push_back(c.target);
    first = std::max(first, std::string("measured: ").size() + c.target.size());
  }
  auto header = [&](const std::string& title) {
    out += pad(title, first);
    for (SinkKind k : kSinkKinds) out += " | " + pad(sink_kind_name(k), kCol);
    out += "\n";
  };
  header("expected");
  for (SourceKind s : kSourceKinds) {
    out += pad(source_kind_name(s), first);
    for (SinkKind k : kSinkKinds) out += " | " + pad(guarantee_name(expected_guarantee(s, k)), kCol);
    out += "\n";
  }
  for (const auto& t : targets) {
    out += "\n";
    header("measured: " + t);
    for (SourceKind s : kSourceKinds) {
      out += pad(source_kind_name(s), first);
      for (SinkKind k : kSinkKinds) {
        std::string text = "-";
        for (const auto& c : cells) {
          if (c.target == t && c.source == s && c.sink == k) text = cell_text(c);
        }
        out += " | " + pad(text, kCol);
      }
      out += "\n";
    }
  }
  out += "\n";
  int bad = 0;
  std::string mismatch_lines;
  for (const auto& c : cells) {
    char line[512];
    std::snprintf(line, sizeof line, "%s, %s source, %s sink: %lld run(s), %lld failure(s), %lld of %lld results lost, %lld duplicated",
                  c.target.c_str(), source_kind_name(c.source), sink_kind_name(c.sink),
                  static_cast<long long>(c.outcome.runs), static_cast<long long>(c.outcome.failures),
                  static_cast<long long>(c.outcome.lost), static_cast<long long>(c.outcome.expected),
                  static_cast<long long>(c.outcome.duplicated));
    out += std::string(line) + " - " + c.scenario + "\n";
    const Guarantee want = expected_guarantee(c.source, c.sink);
    if (!c.error.empty()) {
      ++bad;
      mismatch_lines += "MISMATCH " + c.target + ", " + source_kind_name(c.source) + " source, " +
                        sink_kind_name(c.sink) + " sink: did not run: " + c.error + "\n";
    } else if (measured_guarantee(c.outcome) != want) {
      ++bad;
      mismatch_lines += "MISMATCH " + c.target + ", " + source_kind_name(c.source) + " source, " +
                        sink_kind_name(c.sink) + " sink: measured " + guarantee_name(measured_guarantee(c.outcome)) +
                        ", expected " + guarantee_name(want) + "\n";
    }
  }
  out += mismatch_lines;
  if (mismatches != nullptr) *mismatches = bad;
  return out;
}

}  // namespace sluice::guarantees
