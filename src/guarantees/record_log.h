// RecordLog: the input of the guarantee experiment (`sluice guarantees`), an append-only, in-memory log of
// int64 records that the experiment's driver appends to while the job runs, in phases, and finally closes.
//
// Two ways to read it, the only difference between the two kinds of source of the guarantee table:
//  - by offset (read_at): a reader keeps its position and can go back to any earlier one, as a Kafka consumer
//    does: a replayable source (its position is checkpointed and restored);
//  - by taking (take): every record is handed out once and never again, as by a socket or a message queue that
//    deletes on delivery: a source built on it cannot rewind, whatever its checkpoint says.
// delivered() counts what readers got, so the driver knows when a phase has entered the job.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace sluice::guarantees {

class RecordLog {
 public:
  // Appends records; kept until the log is destroyed. Appending to a closed log throws std::logic_error.
  void append(const std::vector<int64_t>& records);
  // No more records: readers at the end see end of input.
  void close();
  bool closed() const;
  int64_t size() const;

  // Up to `max` records from `offset` on (fewer at the end; none past it). Counts the highest offset read.
  std::vector<int64_t> read_at(int64_t offset, int64_t max);
  // Up to `max` records nobody took yet; each record is taken once, ever.
  std::vector<int64_t> take(int64_t max);
  // For read_at: the highest offset + 1 ever read; for take: the records taken.
  int64_t delivered() const { return delivered_.load(); }

 private:
  mutable std::mutex mu_;
  std::vector<int64_t> records_;
  int64_t taken_ = 0;
  bool closed_ = false;
  std::atomic<int64_t> delivered_{0};
};

}  // namespace sluice::guarantees
