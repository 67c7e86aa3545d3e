#include "sluice/detail/state/rocksdb/rocksdb_backend_core.h"

#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "sluice/detail/state/rocksdb/rocksdb_key_layout.h"

namespace sluice {
namespace detail {
void throw_undecodable_stored_value(const std::string& state, size_t size_bytes, const TypeSerializerSnapshot& type) {
  throw RocksDBError("state '" + state + "': a value of " + std::to_string(size_bytes) +
                     " bytes stored in RocksDB does not decode as " + type.to_string() + " (damaged local database)");
}
}  // namespace detail

// Column family names: a prefix keeps state names clear of RocksDB's reserved "default".
std::string column_family_of(const std::string& state_name) { return "state:" + state_name; }

namespace {

struct StateRef {
  const StateMetaInfo* meta;
  int32_t cf;
  const RocksDBStateCodec* codec;
};

// Writes the canonical snapshot of key group kg from `states` (registered, name order; read through
// new_iterator(cf, lower, upper)) and `pending` (restored, unregistered, name order; names distinct from the
// states'). With no non-empty state: a snapshot without states if write_if_empty, else nothing. Errors come
// before anything is appended to *out.
template <class NewIterator>
Status write_rocksdb_key_group(std::vector<uint8_t>* out, int32_t max_parallelism, KeyGroup kg,
                               const TypeSerializerSnapshot& key_serializer, const std::vector<StateRef>& states,
                               const std::vector<StateSnapshotView>& pending, NewIterator&& new_iterator,
                               bool write_if_empty, std::vector<std::vector<uint8_t>>& buffers,
                               RocksDBCodecScratch& scratch) {
  const std::string lower = rocksdb_layout::key_group_prefix(kg.value());
  const std::string upper = rocksdb_layout::key_group_prefix(kg.value() + 1);
  if (buffers.size() < states.size()) buffers.resize(states.size());
  std::vector<uint64_t> counts(states.size(), 0);
  size_t present = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    buffers[i].clear();
    std::unique_ptr<RocksDBStore::Iterator> it = new_iterator(states[i].cf, lower, upper);
    Result<uint64_t> n = states[i].codec->append_snapshot_entries(*it, buffers[i], scratch);
    if (!n.is_ok()) return n.status().with_context("snapshot of key group " + std::to_string(kg.value()));
    counts[i] = *n;
    if (counts[i] > 0) ++present;
  }
  if (present == 0 && pending.empty() && !write_if_empty) return Status::ok();
  KeyGroupSnapshotWriter writer(out, max_parallelism, kg, key_serializer, present + pending.size());
  size_t si = 0, pi = 0;
  while (true) {
    while (si < states.size() && counts[si] == 0) ++si;
    if (si == states.size() && pi == pending.size()) break;
    if (pi == pending.size() || (si < states.size() && states[si].meta->name < pending[pi].meta.name)) {
      writer.add_state(*states[si].meta, counts[si], buffers[si]);
      ++si;
    } else {
      const StateSnapshotView& p = pending[pi++];
      writer.add_state(p.meta, p.entry_count, p.entries, p.entries_size_bytes);
    }
  }
  writer.finish();
  return Status::ok();
}

std::vector<StateRef> refs_of(const std::vector<RocksDBBackendCore::RegisteredState>& states) {
  std::vector<StateRef> refs;
  refs.reserve(states.size());
  for (const auto& s : states) refs.push_back(StateRef{&s.meta, s.cf, s.codec.get()});
  return refs;
}

// The asynchronous snapshot: a RocksDB snapshot plus what was registered and restored at the synchronous part.
class RocksDBKeyedStateSnapshot final : public KeyedStateSnapshot {
 public:
  RocksDBKeyedStateSnapshot(KeyGroupRange range, int32_t max_parallelism, TypeSerializerSnapshot key_serializer,
                            std::shared_ptr<RocksDBStore::Snapshot> snapshot,
                            std::vector<RocksDBBackendCore::RegisteredState> states, RestoredStateStore pending,
                            Status precondition)
      : KeyedStateSnapshot(range),
        max_parallelism_(max_parallelism),
        key_serializer_(std::move(key_serializer)),
        snapshot_(std::move(snapshot)),
        states_(std::move(states)),
        refs_(refs_of(states_)),
        pending_(std::move(pending)),
        precondition_(std::move(precondition)) {}
  ~RocksDBKeyedStateSnapshot() override { release(); }

  Status write_key_group(KeyGroup kg, std::vector<uint8_t>* out) override {
    if (!range().contains(kg)) {
      return Status::invalid_argument("snapshot write_key_group: key group " + std::to_string(kg.value()) +
                                      " is outside the snapshot's range " + range().to_string());
    }
    SLUICE_RETURN_IF_ERROR(precondition_);
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) {
      return Status::failed_precondition("snapshot write_key_group: the RocksDB snapshot was already released");
    }
    if (!snapshot_->acquire_reader()) {
      return Status::cancelled("snapshot write_key_group: the RocksDB keyed state backend was disposed before "
                               "the snapshot was written");
    }
    struct ReaderGuard {
      RocksDBStore::Snapshot& s;
      ~ReaderGuard() { s.release_reader(); }
    } guard{*snapshot_};
    return write_rocksdb_key_group(
        out, max_parallelism_, kg, key_serializer_, refs_, pending_.views_of_key_group(kg),
        [&](int32_t cf, std::string_view lo, std::string_view up) { return snapshot_->new_iterator(cf, lo, up); },
        /*write_if_empty=*/false, buffers_, scratch_);
  }

  void release() override {
    {
      std::lock_guard<std::mutex> lock(mu_);  // waits for a write_key_group in progress
      if (released_) return;
      released_ = true;
    }
    snapshot_->release();
  }

 private:
  const int32_t max_parallelism_;
  const TypeSerializerSnapshot key_serializer_;
  const std::shared_ptr<RocksDBStore::Snapshot> snapshot_;
  const std::vector<RocksDBBackendCore::RegisteredState> states_;  // name order; codecs shared with the backend
  const std::vector<StateRef> refs_;
  const RestoredStateStore pending_;
  const Status precondition_;

  std::mutex mu_;
  bool released_ = false;                       // guarded by mu_
  std::vector<std::vector<uint8_t>> buffers_;   // guarded by mu_
  RocksDBCodecScratch scratch_;                 // guarded by mu_
};

}  // namespace

RocksDBBackendCore::RocksDBBackendCore(KeyGroupRange range, int32_t max_parallelism,
                                       TypeSerializerSnapshot key_serializer, std::unique_ptr<RocksDBStore> store,
                                       RocksDBStateBackendOptions options)
    : range_(range),
      max_parallelism_(max_parallelism),
      key_serializer_(std::move(key_serializer)),
      store_(std::move(store)),
      options_(std::move(options)),
      backend_id_(new_backend_id(options_)),
      tracker_(new_upload_tracker()) {}

RocksDBBackendCore::~RocksDBBackendCore() = default;

Result<std::unique_ptr<RocksDBBackendCore>> RocksDBBackendCore::open(KeyGroupRange range, int32_t max_parallelism,
                                                                     TypeSerializerSnapshot key_serializer,
                                                                     const RocksDBStateBackendOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RocksDBStore> store, RocksDBStore::open(options));
  return std::unique_ptr<RocksDBBackendCore>(
      new RocksDBBackendCore(range, max_parallelism, std::move(key_serializer), std::move(store), options));
}

Status RocksDBBackendCore::add_restored(const RocksDBStateCodec& codec, const StateMetaInfo& registered,
                                        const StateSnapshotView& view, KeyGroup kg, int32_t cf,
                                        RocksDBStore::WriteBatch& batch, RocksDBCodecScratch& scratch,
                                        std::vector<StateSchemaReport>& reports) const {
  SLUICE_ASSIGN_OR_RETURN(StateSchemaResolution r, codec.resolve_restored(view.meta, registered));
  uint64_t migrated = 0;
  if (r.compatibility.is_as_is()) {
    SLUICE_RETURN_IF_ERROR(codec.add_restored_entries(view, kg, max_parallelism_, cf, batch, scratch));
  } else {
    // Migrated at restore (Flink's RocksDB backend rewrites at registration too): the column family only ever
    // holds values of the registered serializers.
    std::vector<uint8_t> entries;
    SLUICE_RETURN_IF_ERROR(codec.migrate_restored(r.plan, view, entries));
    SLUICE_RETURN_IF_ERROR(codec.add_restored_entries(
        StateSnapshotView{registered, view.entry_count, entries.data(), entries.size()}, kg, max_parallelism_, cf,
        batch, scratch));
    migrated = view.entry_count;
  }
  reports.push_back(make_schema_report(view.meta, registered, r.compatibility, migrated));
  return Status::ok();
}

std::vector<StateSchemaReport> RocksDBBackendCore::take_schema_reports() { return std::exchange(reports_, {}); }

int32_t RocksDBBackendCore::register_state(const StateMetaInfo& meta, std::shared_ptr<const RocksDBStateCodec> codec,
                                           const TtlCompactionFilterConfig* ttl) {
  if (auto it = restored_cf_meta_.find(meta.name); it != restored_cf_meta_.end()) {
    // Restored from RocksDB files (incremental checkpoint, native savepoint): the entries are in the column family already, in the layout of the snapshot's
    // serializers. Rewriting them in place is not built: such a restore needs them compatible as is.
    Result<StateSchemaResolution> r = codec->resolve_restored(it->second, meta);
    if (!r.is_ok()) throw StatusError(r.status());
    if (!r->compatibility.is_as_is()) {
      throw StatusError(Status::invalid_argument(
          "state '" + meta.name + "': restored from RocksDB files (an incremental checkpoint or a native savepoint) as " +
          it->second.type_description() + ", registered as " + meta.type_description() + " (" +
          r->compatibility.reason + "): migrating state restored from RocksDB files is not supported; restore from a canonical savepoint "
          "or a full checkpoint (execution.checkpointing.incremental: false), which migrates"));
    }
    reports_.push_back(make_schema_report(it->second, meta, r->compatibility, 0));
    Result<int32_t> cf = store_->column_family(column_family_of(meta.name));
    if (!cf.is_ok()) throw RocksDBError(cf.status().to_string());
    restored_cf_meta_.erase(it);
    if (published_.insert(*cf).second) store_->publish_native_metrics(*cf, meta.name);
    if (ttl != nullptr) store_->configure_restored_ttl(*cf, *ttl);
    states_.emplace(meta.name, RegisteredState{meta, *cf, std::move(codec)});
    return *cf;
  }
  const RestoredStateStore::State* restored = pending_.find(meta.name);
  if (restored != nullptr) {
    Result<StateSchemaResolution> r = codec->resolve_restored(restored->meta, meta);
    if (!r.is_ok()) throw StatusError(r.status());
  }
  // A column family left by a registration that failed below is empty and reused.
  Result<int32_t> cf = store_->column_family(column_family_of(meta.name), ttl);
  if (!cf.is_ok()) throw RocksDBError(cf.status().to_string());
  if (published_.insert(*cf).second) store_->publish_native_metrics(*cf, meta.name);
  if (restored != nullptr) {
    RocksDBStore::WriteBatch batch(*store_);
    RocksDBCodecScratch scratch;
    std::vector<StateSchemaReport> reports;
    for (const auto& [kg, entries] : restored->key_groups) {
      const std::vector<uint8_t>& bytes = *entries.bytes;
      StateSnapshotView view{restored->meta, entries.count, bytes.data(), bytes.size()};
      Status st = add_restored(*codec, meta, view, KeyGroup(kg), *cf, batch, scratch, reports);
      if (!st.is_ok()) throw StatusError(st);
    }
    Status st = store_->try_write(batch);
    if (!st.is_ok()) throw RocksDBError(st.to_string());
    pending_.erase(meta.name);
    for (StateSchemaReport& r : reports) reports_.push_back(std::move(r));
  }
  states_.emplace(meta.name, RegisteredState{meta, *cf, std::move(codec)});
  return *cf;
}

void RocksDBBackendCore::register_heap_state(StateTableBase* table, std::shared_ptr<const RocksDBStateCodec> codec) {
  const StateMetaInfo& meta = table->meta();
  auto fill = [&](KeyGroup kg, const StateSnapshotView& view) {
    const int32_t index = range_.index_of(kg);
    Result<SchemaCompatibility> c = table->stage_restored(kg, index, view, max_parallelism_, nullptr);
    if (!c.is_ok()) {
      table->discard_staged();
      throw StatusError(c.status());
    }
    table->commit_staged(index);
  };
  if (auto it = restored_cf_meta_.find(meta.name); it != restored_cf_meta_.end()) {
    // Restored incrementally: read the column family into the table, then empty it.
    Status st = check_state_compatible(it->second, meta);
    if (!st.is_ok()) throw StatusError(st);
    Result<int32_t> cf = store_->column_family(column_family_of(meta.name));
    if (!cf.is_ok()) throw RocksDBError(cf.status().to_string());
    RocksDBCodecScratch scratch;
    std::vector<uint8_t> entries;
    for (KeyGroup kg : range_) {
      entries.clear();
      auto iter = store_->new_iterator(*cf, rocksdb_layout::key_group_prefix(kg.value()),
                                       rocksdb_layout::key_group_prefix(kg.value() + 1));
      Result<uint64_t> n = codec->append_snapshot_entries(*iter, entries, scratch);
      if (!n.is_ok()) throw StatusError(n.status());
      if (*n > 0) fill(kg, StateSnapshotView{meta, *n, entries.data(), entries.size()});
    }
    RocksDBStore::WriteBatch batch(*store_);
    batch.delete_range(*cf, rocksdb_layout::key_group_prefix(0), rocksdb_layout::key_group_prefix(max_parallelism_));
    st = store_->try_write(batch);
    if (!st.is_ok()) throw RocksDBError(st.to_string());
    restored_cf_meta_.erase(it);
  } else if (const RestoredStateStore::State* restored = pending_.find(meta.name)) {
    for (const auto& [kg, e] : restored->key_groups) {
      fill(KeyGroup(kg), StateSnapshotView{restored->meta, e.count, e.bytes->data(), e.bytes->size()});
    }
    pending_.erase(meta.name);
  }
  heap_states_.emplace(meta.name, HeapState{table, std::move(codec)});
}

RestoredStateStore RocksDBBackendCore::pending_with_heap_states(const KeyGroup* only) const {
  RestoredStateStore p = pending_;
  std::vector<uint8_t> entries;
  for (const auto& [name, h] : heap_states_) {
    for (KeyGroup kg : range_) {
      if (only != nullptr && kg != *only) continue;
      entries.clear();
      const uint64_t n = h.table->write_key_group(range_.index_of(kg), entries);
      if (n > 0) p.put_key_group(kg, StateSnapshotView{h.table->meta(), n, entries.data(), entries.size()});
    }
  }
  return p;
}

Status RocksDBBackendCore::write_heap_states_to_column_families() {
  RocksDBCodecScratch scratch;
  std::vector<uint8_t> entries;
  for (const auto& [name, h] : heap_states_) {
    SLUICE_ASSIGN_OR_RETURN(int32_t cf, store_->column_family(column_family_of(name)));
    RocksDBStore::WriteBatch batch(*store_);
    batch.delete_range(cf, rocksdb_layout::key_group_prefix(0), rocksdb_layout::key_group_prefix(max_parallelism_));
    for (KeyGroup kg : range_) {
      entries.clear();
      const uint64_t n = h.table->write_key_group(range_.index_of(kg), entries);
      if (n == 0) continue;
      SLUICE_RETURN_IF_ERROR(h.codec->add_restored_entries(StateSnapshotView{h.table->meta(), n, entries.data(),
                                                                             entries.size()},
                                                           kg, max_parallelism_, cf, batch, scratch));
    }
    SLUICE_RETURN_IF_ERROR(store_->try_write(batch));
  }
  return Status::ok();
}

int64_t RocksDBBackendCore::num_entries() const {
  int64_t n = store_->estimate_num_keys() + pending_.num_entries();
  for (const auto& [name, h] : heap_states_) n += static_cast<int64_t>(h.table->size());
  return n;
}

int64_t RocksDBBackendCore::state_size_bytes_estimate() const {
  int64_t n = store_->estimate_size_bytes() + pending_.size_bytes();
  for (const auto& [name, h] : heap_states_) n += h.table->size_bytes_estimate();
  return n;
}

Status RocksDBBackendCore::full_snapshot_precondition() const {
  if (restored_cf_meta_.empty()) return Status::ok();
  return Status::failed_precondition(
      "state '" + restored_cf_meta_.begin()->first + "' was restored from an incremental checkpoint and is not "
      "registered by the program: a full snapshot needs its serializers to write it in the canonical format "
      "(register the state, or keep taking incremental checkpoints)");
}

Status RocksDBBackendCore::snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const {
  SLUICE_RETURN_IF_ERROR(full_snapshot_precondition());
  if (!range_.contains(kg)) {
    return Status::invalid_argument("snapshot_key_group: key group " + std::to_string(kg.value()) +
                                    " is outside this backend's range " + range_.to_string());
  }
  std::vector<StateRef> refs;
  refs.reserve(states_.size());
  for (const auto& [name, s] : states_) refs.push_back(StateRef{&s.meta, s.cf, s.codec.get()});
  std::vector<std::vector<uint8_t>> buffers;
  RocksDBCodecScratch scratch;
  const RestoredStateStore pending = heap_states_.empty() ? RestoredStateStore() : pending_with_heap_states(&kg);
  return write_rocksdb_key_group(
      out, max_parallelism_, kg, key_serializer_, refs,
      heap_states_.empty() ? pending_.views_of_key_group(kg) : pending.views_of_key_group(kg),
      [&](int32_t cf, std::string_view lo, std::string_view up) { return store_->new_iterator(cf, lo, up); },
      /*write_if_empty=*/true, buffers, scratch);
}

std::unique_ptr<KeyedStateSnapshot> RocksDBBackendCore::snapshot() {
  std::vector<RegisteredState> states;
  states.reserve(states_.size());
  for (const auto& [name, s] : states_) states.push_back(s);
  return std::make_unique<RocksDBKeyedStateSnapshot>(range_, max_parallelism_, key_serializer_, store_->snapshot(),
                                                     std::move(states),
                                                     heap_states_.empty() ? pending_ : pending_with_heap_states(nullptr),
                                                     full_snapshot_precondition());
}

Status RocksDBBackendCore::restore_key_group(const uint8_t* data, size_t size) {
  SLUICE_ASSIGN_OR_RETURN(KeyGroupSnapshotView view, parse_key_group_snapshot(data, size));
  const std::string what = "restoring key group " + std::to_string(view.key_group.value());
  if (view.max_parallelism != max_parallelism_) {
    return Status::invalid_argument(what + ": the snapshot was taken with max parallelism " +
                                    std::to_string(view.max_parallelism) + ", this backend has " +
                                    std::to_string(max_parallelism_) +
                                    " (key groups only carry over at the same max parallelism)");
  }
  if (!range_.contains(view.key_group)) {
    return Status::invalid_argument(what + ": outside this backend's key-group range " + range_.to_string());
  }
  SLUICE_RETURN_IF_ERROR(check_key_serializer(what, view.key_serializer, key_serializer_));
  const int32_t kg = view.key_group.value();
  const std::string lower = rocksdb_layout::key_group_prefix(kg);
  const std::string upper = rocksdb_layout::key_group_prefix(kg + 1);

  // One batch: first empty the key group in every registered state, then the snapshot's entries (later
  // writes in a batch win). Everything is checked before the batch is written, so an error changes nothing.
  RocksDBStore::WriteBatch batch(*store_);
  for (const auto& [name, s] : states_) {
    if (store_->has_key_in(s.cf, lower, upper)) batch.delete_range(s.cf, lower, upper);
  }
  RocksDBCodecScratch scratch;
  const int32_t index = range_.index_of(view.key_group);
  std::vector<StateSchemaReport> reports;
  for (const StateSnapshotView& s : view.states) {
    auto it = states_.find(s.meta.name);
    auto heap = heap_states_.find(s.meta.name);
    Status st;
    if (heap != heap_states_.end()) {
      st = heap->second.table->stage_restored(view.key_group, index, s, max_parallelism_, nullptr).status();
    } else if (it != states_.end()) {
      st = add_restored(*it->second.codec, it->second.meta, s, view.key_group, it->second.cf, batch, scratch, reports);
    } else {
      st = pending_.check_consistent(s.meta);
    }
    if (!st.is_ok()) {
      for (auto& [name, h] : heap_states_) h.table->discard_staged();
      return st.with_context(what);
    }
  }
  Status written = store_->try_write(batch).with_context(what);
  if (!written.is_ok()) {
    for (auto& [name, h] : heap_states_) h.table->discard_staged();
    return written;
  }
  for (auto& [name, h] : heap_states_) h.table->commit_staged(index);
  for (StateSchemaReport& r : reports) reports_.push_back(std::move(r));
  pending_.clear_key_group(view.key_group);
  for (const StateSnapshotView& s : view.states) {
    if (states_.find(s.meta.name) == states_.end() && heap_states_.find(s.meta.name) == heap_states_.end()) {
      pending_.put_key_group(view.key_group, s);
    }
  }
  return Status::ok();
}

}  // namespace sluice
