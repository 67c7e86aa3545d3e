// Reference answers for the Nexmark queries: straightforward single-threaded passes over the same events the
// engine reads, written without the engine's window code, for verifying the engine's DataStream versions.
// docs/nexmark.md pins each query's semantics (windows, joins, ties, what "final state" means for updating
// queries, and the watermark settings under which the engine's output must equal these answers).
//
// Every reference_qN takes an EventInput: a GeneratorConfig and an event count (event numbers [0, num_events)
// of the single-generator stream, equal to the union of any number of splits) or an explicit event list.
// Results come back in canonical order (sorted by their columns). The references do not depend on the order
// of the events in the input (hand-built lists may be in any order), except that for a repeated person or
// auction id only the first occurrence counts.
//
// Memory: per-key state is kept as prices, times and event numbers; strings are re-read from the input for
// the final rows and exact ties only (q9: one entry per auction, q18: per (bidder, auction), q19: ten per
// auction). Preconditions as EventInput's. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/connectors/nexmark/events.h"
#include "sluice/connectors/nexmark/generator.h"
#include "sluice/connectors/nexmark/reference/compare.h"
#include "sluice/connectors/nexmark/reference/event_input.h"
#include "sluice/connectors/nexmark/reference/rows.h"
#include "sluice/core/status.h"

namespace sluice::nexmark::reference {

// Window sizes of the Flink suite (docs/nexmark.md).
inline constexpr int64_t kTumblingWindowMs = 10'000;   // q7, q8, q12
inline constexpr int64_t kQ5WindowMs = 10'000;         // q5 size
inline constexpr int64_t kQ5SlideMs = 2'000;           // q5 slide
inline constexpr int64_t kSessionGapMs = 10'000;       // q11
inline constexpr int64_t kQ2AuctionModulus = 123;      // q2 keeps auction % 123 == 0
inline constexpr int64_t kQ1RateMilli = 908;           // q1: 0.908 in thousandths
inline constexpr int64_t kQ19TopN = 10;

// Whether a winning bid (q4, q9) must reach the auction's reserve. Beam's Nexmark requires it and so does
// Sluice by default; Flink's SQL does not (use kIgnoreReserve to compare with Flink's output).
enum class ReserveRule : uint8_t { kPriceAtLeastReserve, kIgnoreReserve };

// Stateless queries: the row for one bid, and whether the bid passes (q2).
Q0Row q0_row(const Bid& bid);
Q1Row q1_row(const Bid& bid);
bool q2_selects(const Bid& bid);

std::vector<Q0Row> reference_q0(const EventInput& input);
std::vector<Q1Row> reference_q1(const EventInput& input);
std::vector<Q2Row> reference_q2(const EventInput& input);
// The digests of the same rows without keeping them (for millions of bids): compare with digest_of() or a
// MultisetDigest the engine's sink fills.
MultisetDigest reference_digest_q0(const EventInput& input);
MultisetDigest reference_digest_q1(const EventInput& input);
MultisetDigest reference_digest_q2(const EventInput& input);
std::vector<Q3Row> reference_q3(const EventInput& input);
std::vector<Q4Row> reference_q4(const EventInput& input, ReserveRule rule = ReserveRule::kPriceAtLeastReserve);
std::vector<Q5Row> reference_q5(const EventInput& input);
std::vector<Q7Row> reference_q7(const EventInput& input);
std::vector<Q8Row> reference_q8(const EventInput& input);
std::vector<Q9Row> reference_q9(const EventInput& input, ReserveRule rule = ReserveRule::kPriceAtLeastReserve);
std::vector<Q11Row> reference_q11(const EventInput& input);
std::vector<Q17Row> reference_q17(const EventInput& input);
std::vector<Q18Row> reference_q18(const EventInput& input);
std::vector<Q19Row> reference_q19(const EventInput& input);
// q18's and q19's results hold every (bidder, auction) resp. ten bids per auction with their strings (about
// 250 MB resp. 400 MB for 3 M events): the digests of the same rows, without keeping them.
MultisetDigest reference_digest_q18(const EventInput& input);
MultisetDigest reference_digest_q19(const EventInput& input);

// The same over event numbers [0, num_events) of the stream of `config`.
inline std::vector<Q0Row> reference_q0(const GeneratorConfig& c, int64_t n) { return reference_q0({c, n}); }
inline std::vector<Q1Row> reference_q1(const GeneratorConfig& c, int64_t n) { return reference_q1({c, n}); }
inline std::vector<Q2Row> reference_q2(const GeneratorConfig& c, int64_t n) { return reference_q2({c, n}); }
inline std::vector<Q3Row> reference_q3(const GeneratorConfig& c, int64_t n) { return reference_q3({c, n}); }
inline std::vector<Q4Row> reference_q4(const GeneratorConfig& c, int64_t n,
                                       ReserveRule rule = ReserveRule::kPriceAtLeastReserve) {
  return reference_q4({c, n}, rule);
}
inline std::vector<Q5Row> reference_q5(const GeneratorConfig& c, int64_t n) { return reference_q5({c, n}); }
inline std::vector<Q7Row> reference_q7(const GeneratorConfig& c, int64_t n) { return reference_q7({c, n}); }
inline std::vector<Q8Row> reference_q8(const GeneratorConfig& c, int64_t n) { return reference_q8({c, n}); }
inline std::vector<Q9Row> reference_q9(const GeneratorConfig& c, int64_t n,
                                       ReserveRule rule = ReserveRule::kPriceAtLeastReserve) {
  return reference_q9({c, n}, rule);
}
inline std::vector<Q11Row> reference_q11(const GeneratorConfig& c, int64_t n) { return reference_q11({c, n}); }
inline std::vector<Q17Row> reference_q17(const GeneratorConfig& c, int64_t n) { return reference_q17({c, n}); }
inline std::vector<Q18Row> reference_q18(const GeneratorConfig& c, int64_t n) { return reference_q18({c, n}); }
inline std::vector<Q19Row> reference_q19(const GeneratorConfig& c, int64_t n) { return reference_q19({c, n}); }

// q12 (processing time) is checked by invariants of the engine's rows, in any order: windows aligned to
// kTumblingWindowMs, no (bidder, window) twice, every bid_count >= 1, and per bidder the counts sum to the
// bidder's number of bids in `input` (no bidder invented or missing). FailedPrecondition naming the first
// violated invariant and the row or bidder concerned.
Status check_q12(const EventInput& input, const std::vector<Q12Row>& engine_rows);

// q17's day column: the UTC calendar date of an event time, "yyyy-MM-dd".
std::string utc_day(int64_t time_ms);

}  // namespace sluice::nexmark::reference
