#include "verify.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>

namespace sluice::cli {
namespace {

struct Seen {
  std::vector<uint32_t> times;  // times[c] = how often count c appeared (index 0 unused)
  int64_t sum_at_max = 0, max_at_max = 0;
  int64_t beyond = 0;
};

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

Result<VerifyReport> verify_per_auction_output(
    const std::string& output_dir, const std::unordered_map<int64_t, nexmark::AuctionAggregate>& oracle) {
  namespace fs = std::filesystem;
  VerifyReport r;
  r.auctions = static_cast<int64_t>(oracle.size());
  std::unordered_map<int64_t, Seen> seen;
  seen.reserve(oracle.size());
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return Status::not_found("output directory '" + output_dir + "' does not exist");
  for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
    if (!entry.is_regular_file() || entry.path().filename().string().rfind("part-", 0) != 0) continue;
    std::ifstream in(entry.path());
    if (!in) return Status::io_error("cannot read '" + entry.path().string() + "'");
    std::string line;
    while (std::getline(in, line)) {
      ++r.records;
      int64_t v[4];
      if (!parse_line(line, v) || v[1] < 1) {
        ++r.malformed;
        note(r, entry.path().filename().string() + ": malformed line '" + line + "'");
        continue;
      }
      auto o = oracle.find(v[0]);
      int64_t n = o == oracle.end() ? 0 : o->second.count;
      Seen& s = seen[v[0]];
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
    for (int64_t c = 1; c <= agg.count; ++c) {
      uint32_t t = s.times[static_cast<size_t>(c)];
      if (t == 0) {
        ++r.missing;
        note(r, "auction " + std::to_string(auction) + ": count " + std::to_string(c) + " missing");
      } else if (t > 1) {
        r.duplicates += t - 1;
        note(r, "auction " + std::to_string(auction) + ": count " + std::to_string(c) + " appears " +
                    std::to_string(t) + " times");
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
