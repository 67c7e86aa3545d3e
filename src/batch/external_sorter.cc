#include "batch/external_sorter.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "batch/entry_file.h"

namespace sluice::batch {

int compare_keys(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size) {
  const size_t n = std::min(a_size, b_size);
  const int c = n == 0 ? 0 : std::memcmp(a, b, n);
  if (c != 0) return c;
  return a_size < b_size ? -1 : (a_size > b_size ? 1 : 0);
}

namespace {

runtime::BlockingRecordView view_at(const std::vector<uint8_t>& arena, uint64_t offset) {
  runtime::BlockingRecordView v;
  (void)runtime::parse_blocking_record(arena.data() + offset, arena.size() - offset, &v);
  return v;
}

constexpr size_t kTimestampBytes = 8;  // in front of each stored record

int64_t stored_timestamp(const runtime::BlockingRecordView& v) {
  int64_t ts;
  std::memcpy(&ts, v.record, kTimestampBytes);
  return ts;
}

// The stored entry as the caller added it: the record without its timestamp.
runtime::BlockingRecordView without_timestamp(runtime::BlockingRecordView v) {
  v.record += kTimestampBytes;
  v.record_size -= kTimestampBytes;
  return v;
}

// Heap order: the smallest (key, timestamp) on top; equal ones: the earlier run first (stability).
bool heap_after(const runtime::BlockingRecordView& a, size_t a_run, const runtime::BlockingRecordView& b,
                size_t b_run) {
  const int c = compare_keys(a.key, a.key_size, b.key, b.key_size);
  if (c != 0) return c > 0;
  const int64_t ta = stored_timestamp(a), tb = stored_timestamp(b);
  return ta != tb ? ta > tb : a_run > b_run;
}

}  // namespace

// ---- RunMerger ----

RunMerger::RunMerger() = default;
RunMerger::~RunMerger() = default;

Status RunMerger::open(const std::vector<std::string>& runs) {
  for (const std::string& path : runs) {
    auto reader = std::make_unique<EntryFileReader>();
    SLUICE_RETURN_IF_ERROR(reader->open(path));
    readers_.push_back(std::move(reader));
  }
  auto cmp = [](const Head& a, const Head& b) { return heap_after(a.view, a.run, b.view, b.run); };
  for (size_t run = 0; run < readers_.size(); ++run) {
    Head h;
    h.run = run;
    SLUICE_ASSIGN_OR_RETURN(bool has, readers_[run]->next(&h.view));
    if (has) heap_.push_back(h);
  }
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  return Status::ok();
}

Result<bool> RunMerger::next(runtime::BlockingRecordView* out) {
  auto cmp = [](const Head& a, const Head& b) { return heap_after(a.view, a.run, b.view, b.run); };
  // The entry returned last lives in its reader's buffer until now: only now may that reader move on.
  if (pending_refill_ != SIZE_MAX) {
    Head h;
    h.run = pending_refill_;
    pending_refill_ = SIZE_MAX;
    SLUICE_ASSIGN_OR_RETURN(bool has, readers_[h.run]->next(&h.view));
    if (has) {
      heap_.push_back(h);
      std::push_heap(heap_.begin(), heap_.end(), cmp);
    }
  }
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), cmp);
  const Head top = heap_.back();
  heap_.pop_back();
  *out = top.view;  // stored form, with its timestamp: merge passes write it as it is
  pending_refill_ = top.run;
  return true;
}

// ---- ExternalSorter ----

ExternalSorter::ExternalSorter(int64_t memory_budget_bytes, std::string spill_dir, std::string prefix,
                               int32_t max_fan_in)
    : budget_(std::max<int64_t>(memory_budget_bytes, 1)), spill_dir_(std::move(spill_dir)), prefix_(std::move(prefix)),
      max_fan_in_(std::max<int32_t>(max_fan_in, 2)) {}

ExternalSorter::~ExternalSorter() {
  merger_.reset();
  for (const std::string& f : spill_files_) {
    std::error_code ec;
    std::filesystem::remove(f, ec);
  }
}

Status ExternalSorter::add(const uint8_t* key, size_t key_size, const uint8_t* record, size_t record_size,
                           int64_t timestamp_ms) {
  if (finished_) return Status::failed_precondition("ExternalSorter::add after finish()");
  const auto entry = static_cast<int64_t>(8 + key_size + kTimestampBytes + record_size);
  const auto in_memory = static_cast<int64_t>(arena_.size() + index_.size() * sizeof(IndexEntry));
  if (!index_.empty() && in_memory + entry + static_cast<int64_t>(sizeof(IndexEntry)) > budget_) {
    SLUICE_RETURN_IF_ERROR(spill());
  }
  if (arena_.capacity() == 0) {
    // One allocation for the run: pages are committed as they are written, and growing by doubling would copy
    // the whole run several times.
    arena_.reserve(static_cast<size_t>(std::min<int64_t>(budget_, int64_t{1} << 30)));
  }
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) prefix = (prefix << 8) | (i < key_size ? key[i] : 0);
  index_.push_back(IndexEntry{prefix, static_cast<uint64_t>(arena_.size()) << 16 | std::min<size_t>(key_size, 0xFFFF),
                              timestamp_ms});
  // The entry framed as append_blocking_record frames it, its record bytes being [timestamp][record].
  const size_t at = arena_.size();
  runtime::append_blocking_record(key, key_size, nullptr, 0, &arena_);
  const auto stored_size = static_cast<uint32_t>(kTimestampBytes + record_size);
  std::memcpy(arena_.data() + at + 4 + key_size, &stored_size, 4);
  arena_.resize(arena_.size() + stored_size);
  std::memcpy(arena_.data() + at + 8 + key_size, &timestamp_ms, kTimestampBytes);
  if (record_size != 0) std::memcpy(arena_.data() + at + 8 + key_size + kTimestampBytes, record, record_size);
  ++stats_.records;
  stats_.peak_memory_bytes =
      std::max(stats_.peak_memory_bytes, static_cast<int64_t>(arena_.size() + index_.size() * sizeof(IndexEntry)));
  return Status::ok();
}

void ExternalSorter::sort_run() {
  // Lexicographic by key bytes as compare_keys: the big-endian prefixes order keys that differ in their first
  // 8 bytes (a shorter key's zero padding sorts it first unless the longer one continues with zero bytes, which
  // leaves the prefixes equal); equal prefixes compare the full keys; equal keys go by timestamp, then arrival.
  std::sort(index_.begin(), index_.end(), [this](const IndexEntry& a, const IndexEntry& b) {
    if (a.key_prefix != b.key_prefix) return a.key_prefix < b.key_prefix;
    if (a.key_size() <= 8 && b.key_size() <= 8) {  // the prefixes hold both keys whole
      if (a.key_size() != b.key_size()) return a.key_size() < b.key_size();
    } else {
      const runtime::BlockingRecordView va = view_at(arena_, a.offset()), vb = view_at(arena_, b.offset());
      const int c = compare_keys(va.key, va.key_size, vb.key, vb.key_size);
      if (c != 0) return c < 0;
    }
    return a.timestamp_ms != b.timestamp_ms ? a.timestamp_ms < b.timestamp_ms : a.offset() < b.offset();
  });
}

Status ExternalSorter::spill() {
  sort_run();
  const std::string path =
      spill_dir_ + "/" + prefix_ + "-run-" + std::to_string(stats_.spilled_runs);
  EntryFileWriter w;
  SLUICE_RETURN_IF_ERROR(w.open(path));
  // In key order the entries are scattered over the arena: fetch a few ahead.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < index_.size(); ++i) {
    if (i + kAhead < index_.size()) __builtin_prefetch(arena_.data() + index_[i + kAhead].offset());
    const uint64_t off = index_[i].offset();
    const runtime::BlockingRecordView v = view_at(arena_, off);
    SLUICE_RETURN_IF_ERROR(w.append(arena_.data() + off, v.entry_size()));
  }
  SLUICE_RETURN_IF_ERROR(w.commit());
  spill_files_.push_back(path);
  ++stats_.spilled_runs;
  stats_.spilled_bytes += w.bytes_written();
  arena_.clear();
  index_.clear();
  return Status::ok();
}

Status ExternalSorter::finish() {
  if (finished_) return Status::ok();
  finished_ = true;
  if (spill_files_.empty()) {
    sort_run();
    return Status::ok();
  }
  if (!index_.empty()) SLUICE_RETURN_IF_ERROR(spill());
  arena_ = {};
  index_ = {};
  while (spill_files_.size() > static_cast<size_t>(max_fan_in_)) SLUICE_RETURN_IF_ERROR(merge_pass());
  merger_ = std::make_unique<RunMerger>();
  return merger_->open(spill_files_);
}

// Groups of max_fan_in_ consecutive runs become one run each (a last group of one stays as it is): the order of the
// runs, and so the stability, is kept.
Status ExternalSorter::merge_pass() {
  const int64_t pass = ++stats_.merge_passes;
  std::vector<std::string> merged;
  for (size_t first = 0; first < spill_files_.size(); first += static_cast<size_t>(max_fan_in_)) {
    const size_t last = std::min(spill_files_.size(), first + static_cast<size_t>(max_fan_in_));
    if (last - first == 1) {
      merged.push_back(spill_files_[first]);
      continue;
    }
    const std::vector<std::string> group(spill_files_.begin() + static_cast<std::ptrdiff_t>(first),
                                         spill_files_.begin() + static_cast<std::ptrdiff_t>(last));
    const std::string path = spill_dir_ + "/" + prefix_ + "-merge-" + std::to_string(pass) + "-" +
                             std::to_string(merged.size());
    {
      RunMerger in;
      SLUICE_RETURN_IF_ERROR(in.open(group));
      EntryFileWriter out;
      SLUICE_RETURN_IF_ERROR(out.open(path));
      runtime::BlockingRecordView v;
      std::vector<uint8_t> entry;
      while (true) {
        SLUICE_ASSIGN_OR_RETURN(bool has, in.next(&v));
        if (!has) break;
        entry.clear();
        runtime::append_blocking_record(v.key, v.key_size, v.record, v.record_size, &entry);
        SLUICE_RETURN_IF_ERROR(out.append(entry.data(), entry.size()));
      }
      SLUICE_RETURN_IF_ERROR(out.commit());
      stats_.merge_written_bytes += out.bytes_written();
    }
    merged.push_back(path);
    for (const std::string& f : group) {
      std::error_code ec;
      std::filesystem::remove(f, ec);
    }
  }
  spill_files_ = std::move(merged);
  return Status::ok();
}

Result<bool> ExternalSorter::next(runtime::BlockingRecordView* out) {
  if (!finished_) return Status::failed_precondition("ExternalSorter::next before finish()");
  if (!merger_) {
    if (memory_next_ >= index_.size()) return false;
    *out = without_timestamp(view_at(arena_, index_[memory_next_++].offset()));
    return true;
  }
  SLUICE_ASSIGN_OR_RETURN(bool has, merger_->next(out));
  if (has) *out = without_timestamp(*out);
  return has;
}

}  // namespace sluice::batch
