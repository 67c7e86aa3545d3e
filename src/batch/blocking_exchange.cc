#include "batch/blocking_exchange.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "batch/entry_file.h"
#include "runtime/network/watermark_event.h"
#include "sluice/functions/output.h"

namespace sluice::batch {

// ---- ExchangeSpiller ----

ExchangeSpiller::ExchangeSpiller(std::vector<SpillTarget> targets, std::function<void()> on_done)
    : targets_(std::move(targets)), on_done_(std::move(on_done)) {
  std::vector<std::shared_ptr<runtime::Channel>> channels;
  channels.reserve(targets_.size());
  for (const SpillTarget& t : targets_) channels.push_back(t.channel);
  gate_ = std::make_unique<runtime::InputGate>(std::move(channels), &notifier_);
}

ExchangeSpiller::~ExchangeSpiller() {
  cancel();
  join();
}

void ExchangeSpiller::start() {
  thread_ = std::thread([this] { run(); });
}

void ExchangeSpiller::cancel() {
  cancelled_.store(true);
  notifier_.notify();
}

void ExchangeSpiller::join() {
  if (thread_.joinable()) thread_.join();
}

Status ExchangeSpiller::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void ExchangeSpiller::run() {
  std::vector<std::unique_ptr<EntryFileWriter>> writers(targets_.size());
  Status st = Status::ok();
  for (size_t i = 0; i < targets_.size() && st.is_ok(); ++i) {
    writers[i] = std::make_unique<EntryFileWriter>();
    st = writers[i]->open(targets_[i].path);
  }
  while (st.is_ok() && !gate_->is_finished()) {
    if (cancelled_.load()) {
      st = Status::cancelled("blocking exchange spiller cancelled");
      break;
    }
    std::optional<runtime::BufferOrEvent> next = gate_->poll_next();
    if (!next) {
      notifier_.wait(std::chrono::milliseconds(50));
      continue;
    }
    const auto ch = static_cast<size_t>(next->channel_index);
    if (next->is_buffer()) {
      runtime::Buffer& b = next->buffer();
      st = writers[ch]->append(b.bytes.data(), b.bytes.size());
      bytes_.fetch_add(static_cast<int64_t>(b.bytes.size()), std::memory_order_relaxed);
      gate_->recycle(std::move(b));
    } else if (next->event().type == runtime::EventType::kEndOfPartition) {
      st = writers[ch]->commit();
    }
  }
  writers.clear();  // removes uncommitted files
  gate_.reset();    // detaches: producers stop blocking
  {
    std::lock_guard lock(mu_);
    status_ = st;
  }
  if (on_done_) on_done_();
}

// ---- InputReplayer ----

InputReplayer::InputReplayer(std::vector<std::string> files, ReplayConfig config, std::function<void()> on_done)
    : files_(std::move(files)), config_(std::move(config)), on_done_(std::move(on_done)) {
  if (!config_.file_inputs.empty() && config_.file_inputs.size() != files_.size()) {
    throw std::invalid_argument("input replayer: " + std::to_string(config_.file_inputs.size()) +
                                " file inputs for " + std::to_string(files_.size()) + " files");
  }
  for (size_t i = 0; i < files_.size(); ++i) {
    partitions_.push_back(std::make_unique<runtime::ResultPartition>(1, config_.network, nullptr, config_.clock));
  }
}

InputReplayer::~InputReplayer() {
  cancel();
  join();
}

std::vector<std::shared_ptr<runtime::Channel>> InputReplayer::channels() const {
  std::vector<std::shared_ptr<runtime::Channel>> out;
  for (const auto& p : partitions_) out.push_back(p->channel(0));
  return out;
}

void InputReplayer::start() {
  thread_ = std::thread([this] { run(); });
}

void InputReplayer::cancel() {
  cancelled_.store(true);
  for (auto& p : partitions_) p->cancel();  // wakes an emit blocked on credits
}

void InputReplayer::join() {
  if (thread_.joinable()) thread_.join();
}

Status InputReplayer::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

SorterStats InputReplayer::sorter_stats() const {
  std::lock_guard lock(mu_);
  return sorter_stats_;
}

void InputReplayer::run() {
  Status st = config_.sorted ? replay_sorted() : replay();
  if (st.is_ok() && cancelled_.load()) st = Status::cancelled("input replay cancelled");
  if (st.is_ok()) {
    for (auto& p : partitions_) {
      p->broadcast_event(runtime::encode_watermark(kMaxWatermark));
      p->finish();
    }
  }
  {
    std::lock_guard lock(mu_);
    status_ = st;
  }
  if (on_done_) on_done_();
}

Status InputReplayer::replay() {
  for (size_t i = 0; i < files_.size(); ++i) {
    EntryFileReader reader;
    SLUICE_RETURN_IF_ERROR(reader.open(files_[i]));
    runtime::BlockingRecordView v;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(bool has, reader.next(&v));
      if (!has || cancelled_.load(std::memory_order_relaxed)) break;
      partitions_[i]->emit_record(0, v.record, v.record_size);
    }
  }
  return Status::ok();
}

Status InputReplayer::replay_sorted() {
  ExternalSorter sorter(config_.sort_memory_bytes, config_.spill_dir, config_.spill_prefix);
  const bool tagged = !config_.file_inputs.empty();  // two inputs: each record carries its input
  std::vector<uint8_t> scratch;
  for (size_t f = 0; f < files_.size(); ++f) {
    EntryFileReader reader;
    SLUICE_RETURN_IF_ERROR(reader.open(files_[f]));
    // The exchange keeps the pipelined record bytes: an edge with timestamps writes the record's first (int64,
    // little-endian, kNoRecordTimestamp when it has none - the sorter's kNoTimestamp too).
    const bool with_timestamps = f < config_.file_timestamps.size() && config_.file_timestamps[f] != 0;
    runtime::BlockingRecordView v;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(bool has, reader.next(&v));
      if (!has) break;
      if (cancelled_.load(std::memory_order_relaxed)) return Status::ok();
      int64_t ts = ExternalSorter::kNoTimestamp;
      if (with_timestamps && v.record_size >= sizeof(ts)) std::memcpy(&ts, v.record, sizeof(ts));
      if (tagged) {
        runtime::frame_tagged_record(config_.file_inputs[f], v.record, v.record_size, &scratch);
        SLUICE_RETURN_IF_ERROR(sorter.add(v.key, v.key_size, scratch.data(), scratch.size(), ts));
      } else {
        SLUICE_RETURN_IF_ERROR(sorter.add(v.key, v.key_size, v.record, v.record_size, ts));
      }
    }
  }
  SLUICE_RETURN_IF_ERROR(sorter.finish());
  {
    std::lock_guard lock(mu_);
    sorter_stats_ = sorter.stats();
  }
  runtime::BlockingRecordView v;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool has, sorter.next(&v));
    if (!has || cancelled_.load(std::memory_order_relaxed)) break;
    partitions_[0]->emit_record(0, v.record, v.record_size);
  }
  return Status::ok();
}

}  // namespace sluice::batch
