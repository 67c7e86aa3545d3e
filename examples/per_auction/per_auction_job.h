// The main job, as a user writes it: Nexmark bids -> key_by(auction) -> running count, sum and max price
// per auction in keyed ValueState -> one update line per bid in part files ("auction,count,sum,max"),
// written exactly once through a two-phase-commit file sink.
// `sluice demo` runs exactly this job (tools/sluice), and main.cc here is the standalone program.
#pragma once

#include <algorithm>
#include <charconv>
#include <string>

#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sluice.h"

namespace per_auction {

// The per-auction running aggregate kept in state (and emitted as the update record).
struct AuctionUpdate {
  int64_t auction = 0;
  int64_t count = 0;
  int64_t sum = 0;  // cents
  int64_t max = 0;  // cents
  SLUICE_FIELDS(AuctionUpdate, auction, count, sum, max)
};

// The sink's line format, "auction,count,sum,max" (what `sluice demo --verify` and the tests parse).
// Formatted with std::to_chars into one stack buffer: no temporary string per number.
inline void append_csv_line(const AuctionUpdate& u, std::string& line) {
  char buf[4 * 21];  // four int64 (at most 20 characters each) and three commas
  char* p = buf;
  const int64_t fields[] = {u.auction, u.count, u.sum, u.max};
  for (size_t i = 0; i < 4; ++i) {
    if (i > 0) *p++ = ',';
    p = std::to_chars(p, buf + sizeof(buf), fields[i]).ptr;
  }
  line.append(buf, static_cast<size_t>(p - buf));
}

class CountSumMax final : public sluice::KeyedProcessFunction<int64_t, sluice::nexmark::Bid, AuctionUpdate> {
 public:
  void open(sluice::RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    state_ = &get_state(sluice::ValueStateDescriptor<AuctionUpdate>("per-auction"));
  }
  void process_element(const sluice::nexmark::Bid& bid, sluice::KeyedProcessContext<int64_t>&,
                       sluice::Collector<AuctionUpdate>& out) override {
    AuctionUpdate u = state_->value().value_or(AuctionUpdate{bid.auction, 0, 0, 0});
    u.count += 1;
    u.sum += bid.price;
    u.max = std::max(u.max, bid.price);
    state_->update(u);
    out.collect(u);
  }

 private:
  sluice::ValueState<AuctionUpdate>* state_ = nullptr;
};

struct JobOptions {
  sluice::nexmark::NexmarkSourceOptions source;
  std::string output_dir = "out/per-auction";
};

inline void build(sluice::StreamExecutionEnvironment& env, const JobOptions& options) {
  env.from_source(sluice::nexmark::NexmarkSource(options.source), "bids")
      .uid("bids")
      .filter([](const sluice::nexmark::Event& e) { return e.is_bid(); })
      .name("only-bids")
      .uid("only-bids")
      .map([](sluice::nexmark::Event&& e) { return e.bid(); })
      .name("to-bid")
      .uid("to-bid")
      .key_by([](const sluice::nexmark::Bid& b) { return b.auction; })
      .process(CountSumMax{})
      .name("per-auction")
      .uid("per-auction")
      // Exactly-once: part files roll at every checkpoint and become visible when it completes.
      .sink_to(sluice::file::TransactionalFileSink<AuctionUpdate>(options.output_dir, append_csv_line,
                                                                  sluice::file::RollingPolicy::on_checkpoint()))
      .name("sink")
      .uid("sink");
}

}  // namespace per_auction
