// ExternalSorter: key order, stability, spilling past the budget, the k-way merge and merge passes beyond the fan-in;
// and the blocking entry files it spills to.
#include "batch/external_sorter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "batch/entry_file.h"

namespace sluice::batch {
namespace {

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("sluice-sorter-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

struct Entry {
  std::string key;
  std::string record;
};

std::vector<Entry> drain(ExternalSorter& sorter) {
  std::vector<Entry> out;
  runtime::BlockingRecordView v;
  while (true) {
    auto has = sorter.next(&v);
    EXPECT_TRUE(has.is_ok()) << has.status().to_string();
    if (!has.is_ok() || !*has) break;
    out.push_back({std::string(reinterpret_cast<const char*>(v.key), v.key_size),
                   std::string(reinterpret_cast<const char*>(v.record), v.record_size)});
  }
  return out;
}

// Oracle: keys in byte order, each key's records in insertion order.
std::vector<Entry> expected_order(const std::vector<Entry>& in) {
  std::map<std::string, std::vector<std::string>> by_key;
  for (const Entry& e : in) by_key[e.key].push_back(e.record);
  std::vector<Entry> out;
  for (auto& [k, records] : by_key)
    for (auto& r : records) out.push_back({k, r});
  return out;
}

std::vector<Entry> random_entries(uint32_t seed, int n, int keys) {
  std::mt19937 rng(seed);
  std::vector<Entry> in;
  for (int i = 0; i < n; ++i) {
    std::string key = "k" + std::to_string(rng() % static_cast<uint32_t>(keys));
    if (rng() % 7 == 0) key.push_back('\0');  // embedded zero bytes and prefixes of other keys
    in.push_back({key, "r" + std::to_string(i) + std::string(rng() % 40, 'x')});
  }
  return in;
}

void check(const std::vector<Entry>& got, const std::vector<Entry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].key, want[i].key) << "at " << i;
    ASSERT_EQ(got[i].record, want[i].record) << "at " << i;
  }
}

TEST(ExternalSorterTest, InMemoryGroupsByKeyAndKeepsInsertionOrderPerKey) {
  const std::string dir = temp_dir("mem");
  const uint32_t seed = 11;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<Entry> in = random_entries(seed, 2000, 50);
  ExternalSorter sorter(64 << 20, dir, "t");
  for (const Entry& e : in) {
    ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size(),
                           reinterpret_cast<const uint8_t*>(e.record.data()), e.record.size()).is_ok());
  }
  ASSERT_TRUE(sorter.finish().is_ok());
  EXPECT_EQ(sorter.stats().spilled_runs, 0);
  check(drain(sorter), expected_order(in));
}

// The sort compares 8-byte big-endian key prefixes first (normalized keys): keys longer than 8 bytes that share
// them, keys that are prefixes of others up to zero bytes, and bytes above 0x7f must still sort as bytes.
TEST(ExternalSorterTest, KeysSharingTheirFirstEightBytesOrHighBytesSortAsBytes) {
  const std::string dir = temp_dir("prefix");
  for (uint32_t seed : {5u, 6u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const std::string alphabet("\x00\x01\x7f\x80\xff" "ab", 7);
    std::vector<Entry> in;
    for (int i = 0; i < 6000; ++i) {
      std::string key = rng() % 2 == 0 ? std::string("sameprefix") : std::string();
      const size_t len = rng() % 11;
      for (size_t j = 0; j < len; ++j) key.push_back(alphabet[rng() % alphabet.size()]);
      in.push_back({key, "r" + std::to_string(i)});
    }
    for (int64_t budget : {int64_t{64} << 20, int64_t{16} << 10}) {  // in memory, then spilled and merged
      ExternalSorter sorter(budget, dir, "p" + std::to_string(seed) + "-" + std::to_string(budget));
      for (const Entry& e : in) {
        ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size(),
                               reinterpret_cast<const uint8_t*>(e.record.data()), e.record.size()).is_ok());
      }
      ASSERT_TRUE(sorter.finish().is_ok());
      EXPECT_EQ(sorter.stats().spilled_runs > 0, budget < (1 << 20));
      check(drain(sorter), expected_order(in));
    }
  }
}

// Within a key, entries come in timestamp order (Flink's sorted inputs), equal timestamps in arrival order; entries
// without a timestamp first. In memory, spilled and merged, and merged in passes.
TEST(ExternalSorterTest, AKeysEntriesComeInTimestampOrder) {
  const std::string dir = temp_dir("ts");
  std::mt19937 rng(9);
  struct Timed {
    Entry e;
    int64_t ts;
  };
  std::vector<Timed> in;
  for (int i = 0; i < 8000; ++i) {
    const int64_t ts = rng() % 10 == 0 ? ExternalSorter::kNoTimestamp : static_cast<int64_t>(rng() % 50) - 25;
    in.push_back({{"key" + std::to_string(rng() % 40), "r" + std::to_string(i)}, ts});
  }
  std::vector<Timed> want = in;
  std::stable_sort(want.begin(), want.end(), [](const Timed& a, const Timed& b) {
    return a.e.key != b.e.key ? a.e.key < b.e.key : a.ts < b.ts;
  });
  std::vector<Entry> want_entries;
  for (const Timed& t : want) want_entries.push_back(t.e);
  for (auto [budget, fan_in] : {std::pair<int64_t, int32_t>{64 << 20, 128}, {16 << 10, 128}, {16 << 10, 3}}) {
    SCOPED_TRACE("budget " + std::to_string(budget) + ", fan-in " + std::to_string(fan_in));
    ExternalSorter sorter(budget, dir, "ts-" + std::to_string(budget) + "-" + std::to_string(fan_in), fan_in);
    for (const Timed& t : in) {
      ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(t.e.key.data()), t.e.key.size(),
                             reinterpret_cast<const uint8_t*>(t.e.record.data()), t.e.record.size(), t.ts).is_ok());
    }
    ASSERT_TRUE(sorter.finish().is_ok());
    EXPECT_EQ(sorter.stats().spilled_runs > 0, budget < (1 << 20));
    EXPECT_EQ(sorter.stats().merge_passes > 0, fan_in == 3);
    check(drain(sorter), want_entries);
  }
}

TEST(ExternalSorterTest, AboveItsBudgetSpillsSortedRunsAndMergesThem) {
  const std::string dir = temp_dir("spill");
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<Entry> in = random_entries(seed, 20000, 300);
    std::vector<std::string> files;
    {
      ExternalSorter sorter(64 << 10, dir, "s" + std::to_string(seed));
      for (const Entry& e : in) {
        ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size(),
                               reinterpret_cast<const uint8_t*>(e.record.data()), e.record.size()).is_ok());
      }
      ASSERT_TRUE(sorter.finish().is_ok());
      EXPECT_GT(sorter.stats().spilled_runs, 5);
      EXPECT_LE(sorter.stats().peak_memory_bytes, 64 << 10);
      files = sorter.spill_files();
      for (const std::string& f : files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
      check(drain(sorter), expected_order(in));
    }
    for (const std::string& f : files) EXPECT_FALSE(std::filesystem::exists(f)) << f << " left behind";
  }
}

// More runs than the merge fan-in: merged in passes of fan-in consecutive runs, the inputs removed after each
// merge; the order is the one-pass order (keys, and per key the insertion order).
TEST(ExternalSorterTest, MoreRunsThanTheFanInAreMergedInPasses) {
  const std::string dir = temp_dir("passes");
  for (uint32_t seed : {4u, 5u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<Entry> in = random_entries(seed, 20000, 300);
    const std::string prefix = "p" + std::to_string(seed);
    {
      ExternalSorter sorter(16 << 10, dir, prefix, /*max_fan_in=*/3);
      for (const Entry& e : in) {
        ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size(),
                               reinterpret_cast<const uint8_t*>(e.record.data()), e.record.size()).is_ok());
      }
      ASSERT_TRUE(sorter.finish().is_ok());
      const SorterStats& st = sorter.stats();
      EXPECT_GT(st.spilled_runs, 27);  // > 3^3 runs: at least three passes before the final merge
      int64_t expected_passes = 0;
      for (int64_t runs = st.spilled_runs; runs > 3; runs = (runs + 2) / 3) ++expected_passes;
      EXPECT_EQ(st.merge_passes, expected_passes);
      EXPECT_GE(st.merge_passes, 3);
      EXPECT_GE(st.merge_written_bytes, st.spilled_bytes);  // the first pass rewrites every entry
      // What is left on disk: the runs of the final merge, no input of an earlier pass.
      EXPECT_LE(sorter.spill_files().size(), 3u);
      int on_disk = 0;
      for (const auto& f : std::filesystem::directory_iterator(dir))
        if (f.path().filename().string().rfind(prefix + "-", 0) == 0) ++on_disk;
      EXPECT_EQ(on_disk, static_cast<int>(sorter.spill_files().size()));
      check(drain(sorter), expected_order(in));
    }
    for (const auto& f : std::filesystem::directory_iterator(dir))
      EXPECT_NE(f.path().filename().string().rfind(prefix + "-", 0), 0u) << f.path() << " left behind";
  }
}

TEST(ExternalSorterTest, AnEntryLargerThanTheBudgetIsARunOfItsOwn) {
  const std::string dir = temp_dir("big");
  std::vector<Entry> in = {{"b", std::string(200 << 10, 'b')}, {"a", "small"}, {"b", "after"}};
  ExternalSorter sorter(64 << 10, dir, "big");
  for (const Entry& e : in) {
    ASSERT_TRUE(sorter.add(reinterpret_cast<const uint8_t*>(e.key.data()), e.key.size(),
                           reinterpret_cast<const uint8_t*>(e.record.data()), e.record.size()).is_ok());
  }
  ASSERT_TRUE(sorter.finish().is_ok());
  EXPECT_GE(sorter.stats().spilled_runs, 2);
  check(drain(sorter), expected_order(in));
}

TEST(ExternalSorterTest, MisuseIsAnError) {
  ExternalSorter sorter(1 << 20, temp_dir("misuse"), "m");
  runtime::BlockingRecordView v;
  EXPECT_EQ(sorter.next(&v).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(sorter.finish().is_ok());
  EXPECT_EQ(sorter.add(nullptr, 0, nullptr, 0).code(), StatusCode::kFailedPrecondition);
}

TEST(EntryFileTest, UncommittedFilesVanishAndTruncatedFilesAreCorrupt) {
  const std::string dir = temp_dir("files");
  {
    EntryFileWriter w;
    ASSERT_TRUE(w.open(dir + "/a").is_ok());
    std::vector<uint8_t> entry;
    runtime::frame_blocking_record(nullptr, 0, reinterpret_cast<const uint8_t*>("xyz"), 3, &entry);
    ASSERT_TRUE(w.append(entry.data(), entry.size()).is_ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/a"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.inprogress"));
  {
    EntryFileWriter w;
    ASSERT_TRUE(w.open(dir + "/b").is_ok());
    std::vector<uint8_t> entry;
    runtime::frame_blocking_record(reinterpret_cast<const uint8_t*>("k"), 1, reinterpret_cast<const uint8_t*>("xyz"), 3,
                                   &entry);
    ASSERT_TRUE(w.append(entry.data(), entry.size() - 1).is_ok());  // cut inside the entry
    ASSERT_TRUE(w.commit().is_ok());
  }
  EntryFileReader r;
  ASSERT_TRUE(r.open(dir + "/b").is_ok());
  runtime::BlockingRecordView v;
  EXPECT_EQ(r.next(&v).status().code(), StatusCode::kCorruption);
  EntryFileReader missing;
  EXPECT_EQ(missing.open(dir + "/none").code(), StatusCode::kIOError);
}

}  // namespace
}  // namespace sluice::batch
