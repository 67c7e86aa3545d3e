// ExternalSorter: groups a task's input by key within a memory budget (BATCH, docs/batch.md; the idea of Flink's
// sorted inputs / external merge sort, our own code).
//
// add() copies each (key, record) entry into an in-memory run. When the run would exceed the budget
// (execution.sorted-inputs.memory: entry bytes plus a 24-byte index per entry), it is sorted and spilled to a
// file `<spill_dir>/<prefix>-run-<n>`. finish() sorts what is left; if nothing was spilled the entries are read
// from memory, else the rest is spilled too and next() merges the runs k-way with a heap (one buffered reader per
// run). At most max_fan_in runs are merged at once: with more, finish() first merges them in passes - each pass
// merges groups of max_fan_in consecutive runs into one run file (`<prefix>-merge-<pass>-<n>`, the inputs removed)
// until at most max_fan_in are left, which next() merges. Every entry is then written and read once more per pass.
// Order: by key bytes (lexicographic, shorter first on a common prefix), so equal keys are adjacent; within a key
// by the entry's timestamp (Flink's sorted inputs order a key's records by timestamp, across all inputs of the
// operator); stable: entries with equal keys and timestamps come out in the order they were added (runs are merged
// with ties going to the earlier run, and a pass merges consecutive runs in order). Each entry stores its timestamp
// as 8 bytes in front of its record bytes (in memory and in the run files); next() hands out the record without
// them. An entry larger than the budget forms a run of its own. Spill
// files are removed by the destructor.
// Sorting compares normalized keys (Flink's idea for its sorters): the index holds each key's first 8 bytes as a
// big-endian integer next to the entry's offset, so most comparisons never touch the arena; equal prefixes fall back
// to the full key bytes (not even that when both keys fit in the prefix: then their sizes decide), then to the
// timestamp and the offset (arrival order: stability without a stable sort).
// Errors: kIOError naming the spill file; kFailedPrecondition for add() after finish() or next() before it.
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/network/blocking_record_framing.h"
#include "sluice/core/status.h"

namespace sluice::batch {

class EntryFileReader;

struct SorterStats {
  int64_t records = 0;
  int64_t spilled_runs = 0;
  int64_t spilled_bytes = 0;
  int64_t merge_passes = 0;        // intermediate merge passes (0: the spilled runs were merged in one)
  int64_t merge_written_bytes = 0;  // what the intermediate passes wrote
  int64_t peak_memory_bytes = 0;  // the largest in-memory run, with its index
};

// Merges sorted run files k-way with a heap: one buffered reader (EntryFileReader: a 256 KiB read buffer and an
// open file) per run; the smallest key first, ties to the earlier run.
class RunMerger {
 public:
  RunMerger();
  ~RunMerger();
  RunMerger(const RunMerger&) = delete;
  RunMerger& operator=(const RunMerger&) = delete;
  Status open(const std::vector<std::string>& runs);
  // The next entry (valid until the next call), or false once all were returned.
  Result<bool> next(runtime::BlockingRecordView* out);

 private:
  struct Head {
    runtime::BlockingRecordView view;
    size_t run = 0;
  };
  std::vector<std::unique_ptr<EntryFileReader>> readers_;
  std::vector<Head> heap_;  // min-heap by (key, run)
  size_t pending_refill_ = SIZE_MAX;  // the run whose head was returned last: refilled on the next call
};

class ExternalSorter {
 public:
  // How many runs one merge reads at once. Each open run costs a file descriptor and a 256 KiB read buffer outside
  // the memory budget: 128 runs are 32 MiB, half of the default execution.sorted-inputs.memory, and well below the
  // usual 1024 open files. Flink's taskmanager.runtime.max-fan has the same default.
  static constexpr int32_t kDefaultMaxFanIn = 128;

  // memory_budget_bytes > 0; max_fan_in >= 2.
  ExternalSorter(int64_t memory_budget_bytes, std::string spill_dir, std::string prefix,
                 int32_t max_fan_in = kDefaultMaxFanIn);
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;
  ~ExternalSorter();

  // timestamp_ms: the record's timestamp, kNoTimestamp for a record without one (they sort first within a key).
  static constexpr int64_t kNoTimestamp = INT64_MIN;
  Status add(const uint8_t* key, size_t key_size, const uint8_t* record, size_t record_size,
             int64_t timestamp_ms = kNoTimestamp);
  Status finish();
  // The next entry in key order (valid until the next call), or false once all were returned.
  Result<bool> next(runtime::BlockingRecordView* out);

  const SorterStats& stats() const { return stats_; }
  const std::vector<std::string>& spill_files() const { return spill_files_; }

 private:
  Status spill();
  void sort_run();
  Status merge_pass();

  const int64_t budget_;
  const std::string spill_dir_;
  const std::string prefix_;
  const int32_t max_fan_in_;
  std::vector<uint8_t> arena_;     // framed entries back to back
  struct IndexEntry {
    uint64_t key_prefix;  // the key's first 8 bytes, big-endian, zero-padded
    uint64_t position;    // entry start in arena_ (increasing with arrival) << 16 | min(key size, 0xFFFF)
    int64_t timestamp_ms;
    uint64_t offset() const { return position >> 16; }
    uint64_t key_size() const { return position & 0xFFFF; }
  };
  std::vector<IndexEntry> index_;  // sorted by sort_run()
  std::vector<std::string> spill_files_;  // the current runs, in order
  SorterStats stats_;
  bool finished_ = false;
  size_t memory_next_ = 0;  // next position in index_ when reading from memory

  std::unique_ptr<RunMerger> merger_;  // the final merge; null when reading from memory
};

// Key order of the sorter: lexicographic over the bytes, a prefix first.
int compare_keys(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size);

}  // namespace sluice::batch
