#include "verify.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <iterator>
#include <map>

#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "fs/path.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/nexmark/generator.h"

namespace sluice::cli {
namespace {

struct Seen {
  std::vector<uint32_t> times;  // times[c] = how often count c appeared (index 0 unused)
  int64_t sum_at_max = 0, max_at_max = 0;
  int64_t beyond = 0;
  // With bid prices: the sum of the first update of each count, counts 1..n by index (kUnseen: none), beyond n
  // in the map (few: the replays of an at-least-once run).
  std::vector<int64_t> sum_at;
  std::map<int64_t, int64_t> sum_beyond;
};

constexpr int64_t kUnseen = INT64_MIN;

// Bids of `expected` (prices) that the updates' price steps (sum_c - sum_(c-1)) do not account for; 0 when the
// counts have a gap (the steps are unknown there; the count check reports it).
int64_t missing_bids(const Seen& s, std::vector<int64_t> expected) {
  std::vector<int64_t> steps;
  int64_t previous_count = 0, previous_sum = 0;
  auto step = [&](int64_t count, int64_t sum) {
    if (sum == kUnseen || count != previous_count + 1) return false;
    steps.push_back(sum - previous_sum);
    previous_count = count;
    previous_sum = sum;
    return true;
  };
  for (size_t c = 1; c < s.sum_at.size(); ++c) {
    if (!step(static_cast<int64_t>(c), s.sum_at[c])) return 0;
  }
  for (const auto& [count, sum] : s.sum_beyond) {
    if (!step(count, sum)) break;  // a gap beyond n: what follows it is not a step of this auction's lineage
  }
  std::sort(steps.begin(), steps.end());
  std::sort(expected.begin(), expected.end());
  std::vector<int64_t> lost;
  std::set_difference(expected.begin(), expected.end(), steps.begin(), steps.end(), std::back_inserter(lost));
  return static_cast<int64_t>(lost.size());
}

bool parse_line(const std::string& line, int64_t v[4]) {
  const char* p = line.data();
  const char* end = p + line.size();
  for (int i = 0; i < 4; ++i) {
    auto [q, ec] = std::from_chars(p, end, v[i]);
    if (ec != std::errc()) return false;
    p = q;
    if (i < 3) {
      if (p == end || *p != ',') return false;
      ++p;
    }
  }
  return p == end;
}

void note(VerifyReport& r, std::string s) {
  if (r.first_mismatches.size() < 10) r.first_mismatches.push_back(std::move(s));
}

}  // namespace

AuctionBidPrices compute_auction_bid_prices(const nexmark::GeneratorConfig& config, int64_t num_events) {
  const nexmark::Generator generator(config);
  AuctionBidPrices out;
  nexmark::Event event;
  for (int64_t n = 0; n < num_events; ++n) {
    if (generator.event_kind(n) != nexmark::EventKind::kBid) continue;
    generator.fill(n, event);
    out[event.bid().auction].push_back(event.bid().price);
  }
  return out;
}

Result<VerifyReport> verify_per_auction_output(
    const std::string& output_dir, const std::unordered_map<int64_t, nexmark::AuctionAggregate>& oracle,
    const AuctionBidPrices* bid_prices, const fs::FileSystemRegistry* file_systems) {
  VerifyReport r;
  r.auctions = static_cast<int64_t>(oracle.size());
  std::unordered_map<int64_t, Seen> seen;
  seen.reserve(oracle.size());
  static const fs::FileSystemRegistry local_only;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> fsys,
                          (file_systems ? *file_systems : local_only).for_path(output_dir));
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fsys->stat(output_dir));
  if (kind != fs::PathKind::kDirectory) return Status::not_found("output directory '" + output_dir + "' does not exist");
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fsys->list_dir(output_dir));
  for (const fs::DirEntry& entry : entries) {
    if (entry.kind != fs::PathKind::kFile || !file::is_part_file_name(entry.name)) continue;  // the sink's files only
    const std::string path = fs::join_path(output_dir, entry.name);
    auto bytes = fsys->read_file(path);
    if (!bytes.is_ok()) return bytes.status().with_context("reading the output file '" + path + "'");
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    for (size_t begin = 0; begin < text.size();) {
      size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      const std::string line(text.substr(begin, end - begin));
      begin = end + 1;
      ++r.records;
      int64_t v[4];
      if (!parse_line(line, v) || v[1] < 1) {
        ++r.malformed;
        note(r, entry.name + ": malformed line '" + line + "'");
        continue;
      }
      auto o = oracle.find(v[0]);
      int64_t n = o == oracle.end() ? 0 : o->second.count;
      Seen& s = seen[v[0]];
      if (bid_prices != nullptr) {
        if (v[1] > n) {
          s.sum_beyond.emplace(v[1], v[2]);
        } else {
          if (s.sum_at.empty()) s.sum_at.assign(static_cast<size_t>(n) + 1, kUnseen);
          int64_t& first = s.sum_at[static_cast<size_t>(v[1])];
          if (first == kUnseen) first = v[2];
        }
      }
      if (v[1] > n) {
        ++s.beyond;
        continue;
      }
      if (s.times.empty()) s.times.assign(static_cast<size_t>(n) + 1, 0);
      s.times[static_cast<size_t>(v[1])]++;
      if (v[1] == n) {
        s.sum_at_max = v[2];
        s.max_at_max = v[3];
      }
    }
  }
  for (const auto& [auction, agg] : oracle) {
    auto it = seen.find(auction);
    if (it == seen.end() || it->second.times.empty()) {
      r.missing += agg.count;
      note(r, "auction " + std::to_string(auction) + ": no updates (expected counts 1.." + std::to_string(agg.count) + ")");
      continue;
    }
    const Seen& s = it->second;
    int64_t gaps = 0;
    for (int64_t c = 1; c <= agg.count; ++c) {
      uint32_t t = s.times[static_cast<size_t>(c)];
      if (t == 0) {
        ++r.missing;
        ++gaps;
        note(r, "auction " + std::to_string(auction) + ": count " + std::to_string(c) + " missing");
      } else if (t > 1) {
        r.duplicates += t - 1;
        note(r, "auction " + std::to_string(auction) + ": count " + std::to_string(c) + " appears " +
                    std::to_string(t) + " times");
      }
    }
    if (bid_prices != nullptr && gaps == 0) {
      auto prices = bid_prices->find(auction);
      const int64_t lost = missing_bids(s, prices == bid_prices->end() ? std::vector<int64_t>() : prices->second);
      if (lost > 0) {
        r.missing += lost;
        note(r, "auction " + std::to_string(auction) + ": " + std::to_string(lost) +
                    " bids that no update added (by price; the counts reach " + std::to_string(agg.count) +
                    " through duplicates)");
      }
    }
    if (s.times[static_cast<size_t>(agg.count)] > 0 && (s.sum_at_max != agg.sum || s.max_at_max != agg.max)) {
      ++r.wrong_finals;
      note(r, "auction " + std::to_string(auction) + ": final sum/max " + std::to_string(s.sum_at_max) + "/" +
                  std::to_string(s.max_at_max) + ", expected " + std::to_string(agg.sum) + "/" + std::to_string(agg.max));
    }
  }
  for (const auto& [auction, s] : seen) {
    if (s.beyond > 0) {
      r.duplicates += s.beyond;
      note(r, "auction " + std::to_string(auction) + ": " + std::to_string(s.beyond) + " updates with counts beyond the oracle's");
    }
  }
  return r;
}

}  // namespace sluice::cli
