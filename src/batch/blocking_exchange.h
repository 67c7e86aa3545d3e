// The two ends of a blocking exchange (BATCH, docs/batch.md) around unchanged StreamTasks.
//
// ExchangeSpiller (producer side): an InputGate over every output channel of a stage's tasks; one thread drains
// it and appends each data buffer - whole blocking-record entries (runtime/network/blocking_record_framing.h) - to the
// file of its (edge, producer subtask, subpartition). A channel's EndOfPartition commits its file (rename from
// .inprogress), so only a producer that finished leaves a file. Watermarks and other events are not written.
//
// InputReplayer (consumer side): one thread per consumer task. It feeds the task's input channels, in the gate's
// channel order, from the files the previous stage committed: each file's records into its own channel, or,
// when the task's input is sorted, every file's entries through an ExternalSorter into the first channel (in key
// order, a key's records by timestamp as Flink's sorted inputs; the other channels only end). A sorted two-input head's records go through the sorter together, each
// tagged with its input (runtime/network/blocking_record_framing.h, frame_tagged_record), and come out in one key order on
// the first channel - which of the head's inputs that channel belongs to does not matter, the task dispatches by
// tag - so both inputs' records of a key arrive before any of the next key (Flink's MultiInputSortingDataInput
// merges per-input sorted streams by key instead; one sorter is simpler and keeps the ties in file order). Every
// channel then gets the final watermark (MAX, as a bounded source ends: BATCH keeps no intermediate watermarks)
// and EndOfPartition. Back-pressure: the replayer blocks on the channel's credits like a producer task.
//
// Errors (I/O, a missing or damaged file) end the thread with a status and call on_done; the stage fails.
// Thread-safety: start / cancel / join / status from the control thread; on_done runs on the worker thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "batch/external_sorter.h"
#include "runtime/network/channel.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/network_config.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/task_notifier.h"
#include "sluice/core/clock.h"

namespace sluice::batch {

struct SpillTarget {
  std::shared_ptr<runtime::Channel> channel;
  std::string path;  // committed file
};

class ExchangeSpiller {
 public:
  ExchangeSpiller(std::vector<SpillTarget> targets, std::function<void()> on_done);
  ~ExchangeSpiller();
  void start();
  void cancel();  // stops draining; files not committed yet are removed
  void join();
  // Ok once every channel ended and its file was committed; the error otherwise (after join or on_done).
  Status status() const;
  int64_t bytes_written() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  void run();
  std::vector<SpillTarget> targets_;
  std::function<void()> on_done_;
  runtime::TaskNotifier notifier_;
  std::unique_ptr<runtime::InputGate> gate_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> bytes_{0};
  mutable std::mutex mu_;
  Status status_ = Status::cancelled("not finished");
  std::thread thread_;
};

struct ReplayConfig {
  runtime::NetworkConfig network;
  std::shared_ptr<Clock> clock;
  bool sorted = false;
  // Sorted two-input head: the input (1 or 2) each file feeds, parallel to the files; empty for one input.
  std::vector<uint8_t> file_inputs;
  // Sorted input: per file, whether its records start with their timestamp (the edge carries timestamps); a key's
  // records are sorted by it. Empty: none do.
  std::vector<uint8_t> file_timestamps;
  int64_t sort_memory_bytes = 64 << 20;  // execution.sorted-inputs.memory
  std::string spill_dir;
  std::string spill_prefix;
};

class InputReplayer {
 public:
  // files[i]: the committed file that feeds gate channel i.
  InputReplayer(std::vector<std::string> files, ReplayConfig config, std::function<void()> on_done);
  ~InputReplayer();
  // The channels for the consumer task's InputGate, in order.
  std::vector<std::shared_ptr<runtime::Channel>> channels() const;
  void start();
  void cancel();
  void join();
  Status status() const;
  SorterStats sorter_stats() const;

 private:
  void run();
  Status replay();
  Status replay_sorted();
  std::vector<std::string> files_;
  ReplayConfig config_;
  std::function<void()> on_done_;
  std::vector<std::unique_ptr<runtime::ResultPartition>> partitions_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  Status status_ = Status::cancelled("not finished");
  SorterStats sorter_stats_;
  std::thread thread_;
};

}  // namespace sluice::batch
