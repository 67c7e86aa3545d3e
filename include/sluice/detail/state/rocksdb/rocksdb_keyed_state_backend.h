// RocksDBKeyedStateBackend<K>: the keyed state backend of EmbeddedRocksDBStateBackend (Flink's
// RocksDBKeyedStateBackend). State lives as serialized bytes in an embedded RocksDB instance in the subtask's
// own working directory (rocksdb_key_layout.h), so it is bounded by disk, not memory.
//
// The template layer is thin: registration creates the typed state objects (rocksdb_states.h) and a typed
// codec (rocksdb_state_codec.h); everything else (store, snapshots, restore, metrics) is the non-template
// RocksDBBackendCore, so RocksDB's headers are compiled once, in src/state/rocksdb/.
//
// Created through make_keyed_state_backend (keyed_state_backend.h) or create(). Snapshots use the canonical
// key-group format, so checkpoints restore across backends (heap <-> RocksDB) and parallelisms.
// num_entries() is RocksDB's estimate (estimate-num-keys: a map counts one per user key; overwrites not yet
// compacted are counted again) plus restored-but-unregistered entries; state_size_bytes_estimate() is the SST
// files plus the memtables.
//
// Requirements on types: as the heap backend (keyed_state_backend.h); ListState element types must serialize
// to at least one byte (elements are stored back to back). Identity of keys, namespaces and map user keys is
// their serialized bytes.
// Thread-safety: task thread, except the snapshots it hands out (keyed_state_snapshot.h).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/detail/state/rocksdb/rocksdb_backend_core.h"
#include "sluice/detail/state/rocksdb/rocksdb_state_codec.h"
#include "sluice/detail/state/rocksdb/rocksdb_states.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/detail/state/rocksdb/rocksdb_timer_queue.h"
#include "sluice/detail/state/rocksdb/rocksdb_ttl_states.h"
#include "sluice/state/keyed_state_backend.h"

namespace sluice {

template <class K>
class RocksDBKeyedStateBackend final : public KeyedStateBackend<K> {
 public:
  // Opens the backend's RocksDB instance in a new working directory under options.local_dir. kIOError if
  // the directory or the database cannot be created. Range and max parallelism as make_keyed_state_backend.
  static Result<std::unique_ptr<RocksDBKeyedStateBackend>> create(KeyGroupRange range, int32_t max_parallelism,
                                                                  const RocksDBStateBackendOptions& options = {}) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RocksDBBackendCore> core,
                            RocksDBBackendCore::open(range, max_parallelism, TypeSerializer<K>::snapshot(), options));
    return std::unique_ptr<RocksDBKeyedStateBackend>(new RocksDBKeyedStateBackend(range, max_parallelism,
                                                                                  std::move(core)));
  }

  StateBackendKind kind() const override { return StateBackendKind::kRocksDB; }
  int64_t num_entries() const override { return core_->num_entries(); }
  int64_t state_size_bytes_estimate() const override { return core_->state_size_bytes_estimate(); }
  std::unique_ptr<KeyedStateSnapshot> snapshot() override { return core_->snapshot(); }
  Status snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const override {
    return core_->snapshot_key_group(kg, out);
  }
  Status restore_key_group(const uint8_t* data, size_t size) override {
    Status st = core_->restore_key_group(data, size);
    for (const auto& invalidate : timer_invalidators_) invalidate();  // timer column families changed
    take_schema_reports();
    return st;
  }
  Result<std::unique_ptr<IncrementalKeyedSnapshot>> snapshot_incremental(
      CheckpointId id, SnapshotFileReuse reuse = SnapshotFileReuse::kReuseCompletedUploads) override {
    return core_->snapshot_incremental(id, reuse);
  }
  Status restore_incremental(const std::vector<IncrementalRestoreHandle>& handles) override {
    return core_->restore_incremental(handles);
  }
  void notify_checkpoint_complete(CheckpointId id) override { core_->notify_checkpoint_complete(id); }
  void notify_checkpoint_aborted(CheckpointId id) override { core_->notify_checkpoint_aborted(id); }
  // The backend instance's id (incremental handles record it) and what its next incremental snapshot reuses.
  const std::string& backend_id() const { return core_->backend_id(); }
  std::map<std::string, SharedFileRef> reusable_shared_files() const { return core_->reusable_shared_files(); }

  // The working directory (deleted with the backend).
  const std::string& working_directory() const { return core_->store().path(); }
  // The store, for inspection (tests, tools). A state's column family id is its registration order.
  const RocksDBStore& store() const { return core_->store(); }
  // RocksDB snapshots held for live KeyedStateSnapshots (0 once every snapshot was released).
  size_t live_snapshots() const { return core_->store().live_snapshots(); }
  // Flushes and fully compacts every state's column family, so TTL compaction filters see every value (test
  // and tool hook; RocksDB compacts on its own schedule otherwise). kIOError if RocksDB fails.
  Status compact_all() {
    for (const std::string& name : this->registered_state_names()) {
      SLUICE_ASSIGN_OR_RETURN(int32_t cf, core_->store().column_family("state:" + name));
      SLUICE_RETURN_IF_ERROR(core_->store().compact_all(cf));
    }
    return Status::ok();
  }

 private:
  friend class KeyedStateBackend<K>;

  RocksDBKeyedStateBackend(KeyGroupRange range, int32_t max_parallelism, std::unique_ptr<RocksDBBackendCore> core)
      : KeyedStateBackend<K>(range, max_parallelism), core_(std::move(core)) {}

  // Called by KeyedStateBackend::get_internal_state for a name registered for the first time.
  template <class N, class D>
  std::unique_ptr<internal_state_t<N, D>> create_rocksdb_state(const D& d, const StateMetaInfo& meta) {
    check_descriptor(d);
    if (d.ttl_config().is_enabled()) return create_ttl_state<N>(d, meta);
    auto codec = std::make_shared<TypedRocksDBStateCodec<K, N, D>>(meta.name);
    const int32_t cf = core_->register_state(meta, std::move(codec));
    take_schema_reports();
    return make_state<N>(d, cf);
  }

  void take_schema_reports() {
    for (StateSchemaReport& r : core_->take_schema_reports()) this->report_schema(std::move(r));
  }

  // Called by KeyedStateBackend::get_timer_queue for a name registered for the first time: a timer column
  // family (rocksdb_timer_queue.h), or a heap queue held by the core with timer-service.factory HEAP.
  template <class N>
  InternalTimerQueue<K, N>* create_rocksdb_timer_queue(const StateMetaInfo& meta) {
    auto codec = std::make_shared<TimerRocksDBStateCodec<K, N>>(meta.name);
    if (core_->timer_service_factory() == RocksDBTimerServiceFactory::kHeap) {
      auto queue = std::make_shared<HeapTimerQueue<K, N>>(meta, this->key_group_range(), this->max_parallelism());
      core_->register_heap_state(queue.get(), std::move(codec));
      timer_queues_.push_back(queue);
      return queue.get();
    }
    const int32_t cf = core_->register_state(meta, std::move(codec));
    auto queue = std::make_shared<RocksDBTimerQueue<K, N>>(meta.name, &core_->store(), cf, this->key_group_range());
    timer_invalidators_.push_back([q = queue.get()] { q->invalidate(); });
    timer_queues_.push_back(queue);
    return queue.get();
  }

  // States with TTL: the codec of the TTL-wrapped descriptor, the compaction filter, the TTL state classes.
  template <class N, class D>
  std::unique_ptr<internal_state_t<N, D>> create_ttl_state(const D& d, const StateMetaInfo& meta) {
    using Stored = typename TtlStoredDescriptor<D>::type;
    const StateTtlConfig& ttl = d.ttl_config();
    auto codec = std::make_shared<TypedRocksDBStateCodec<K, N, Stored>>(meta.name);
    if (ttl.cleanup_in_full_snapshot()) codec->set_ttl_snapshot_filter(this->ttl_clock(), ttl.ttl_ms());
    std::optional<TtlCompactionFilterConfig> filter;
    if (auto c = ttl.rocksdb_compact_filter_cleanup()) {
      filter = TtlCompactionFilterConfig{this->ttl_clock(), ttl.ttl_ms(), c->query_time_after_num_entries, nullptr};
      if constexpr (D::kKind == StateKind::kList) filter->list_element_size = &ttl_list_element_size<Stored>;
    }
    const int32_t cf = core_->register_state(meta, std::move(codec), filter ? &*filter : nullptr);
    take_schema_reports();
    return make_ttl_state<N>(d, cf);
  }

  // The descriptor whose codec reads a TTL state's bytes.
  template <class D>
  struct TtlStoredDescriptor {
    using type = ValueStateDescriptor<TtlValue<typename detail::RocksDBStored<D>::value_type>>;
  };
  template <class T>
  struct TtlStoredDescriptor<ListStateDescriptor<T>> {
    using type = ListStateDescriptor<TtlValue<T>>;
  };
  template <class UK, class UV>
  struct TtlStoredDescriptor<MapStateDescriptor<UK, UV>> {
    using type = MapStateDescriptor<UK, TtlValue<UV>>;
  };

  // The byte length of the TtlValue list element at the start of `bytes`, or -1 (compaction filter).
  template <class ListD>
  static int64_t ttl_list_element_size(std::string_view bytes) {
    DataInputView in(bytes);
    if (!rocksdb_layout::skip_serialized<typename ListD::element_type>(in)) return -1;
    return static_cast<int64_t>(in.position());
  }

  template <class N, class T>
  std::unique_ptr<InternalValueState<N, T>> make_ttl_state(const ValueStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBTtlValueState<K, N, T>>(ctx(), &core_->store(), cf, d.name(), d.ttl_config(),
                                                           this->ttl_clock());
  }
  template <class N, class T>
  std::unique_ptr<InternalListState<N, T>> make_ttl_state(const ListStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBTtlListState<K, N, T>>(ctx(), &core_->store(), cf, d.name(), d.ttl_config(),
                                                          this->ttl_clock());
  }
  template <class N, class UK, class UV>
  std::unique_ptr<InternalMapState<N, UK, UV>> make_ttl_state(const MapStateDescriptor<UK, UV>& d, int32_t cf) {
    return std::make_unique<RocksDBTtlMapState<K, N, UK, UV>>(ctx(), &core_->store(), cf, d.name(), d.ttl_config(),
                                                              this->ttl_clock());
  }
  template <class N, class T>
  std::unique_ptr<InternalReducingState<N, T>> make_ttl_state(const ReducingStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBTtlReducingState<K, N, T>>(ctx(), &core_->store(), cf, d.name(),
                                                              d.reduce_function(), d.ttl_config(), this->ttl_clock());
  }
  template <class N, class IN, class ACC, class OUT>
  std::unique_ptr<InternalAggregatingState<N, IN, ACC, OUT>> make_ttl_state(
      const AggregatingStateDescriptor<IN, ACC, OUT>& d, int32_t cf) {
    return std::make_unique<RocksDBTtlAggregatingState<K, N, IN, ACC, OUT>>(
        ctx(), &core_->store(), cf, d.name(), d.aggregate_function(), d.ttl_config(), this->ttl_clock());
  }

  template <class T>
  static void check_descriptor(const ValueStateDescriptor<T>&) {}
  template <class T>
  static void check_descriptor(const ListStateDescriptor<T>& d) {
    if constexpr (std::is_default_constructible_v<T>) {
      if (serialize_bytes(T{}).empty()) {
        throw StatusError(
            Status::invalid_argument("state '" + d.name() + "': the RocksDB backend stores list elements back to "
                                     "back and needs an element type that serializes to at least one byte; " +
                                     TypeSerializer<T>::snapshot().to_string() + " serializes to none"));
      }
    }
  }
  template <class UK, class UV>
  static void check_descriptor(const MapStateDescriptor<UK, UV>&) {}
  template <class T>
  static void check_descriptor(const ReducingStateDescriptor<T>& d) {
    if (!d.reduce_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': ReducingStateDescriptor needs a reduce function"));
    }
  }
  template <class IN, class ACC, class OUT>
  static void check_descriptor(const AggregatingStateDescriptor<IN, ACC, OUT>& d) {
    if (!d.aggregate_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': AggregatingStateDescriptor needs an aggregate function"));
    }
  }

  const CurrentKeyContext<K>* ctx() const { return &this->key_context(); }

  template <class N, class T>
  std::unique_ptr<InternalValueState<N, T>> make_state(const ValueStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBValueState<K, N, T>>(ctx(), &core_->store(), cf, d.name());
  }
  template <class N, class T>
  std::unique_ptr<InternalListState<N, T>> make_state(const ListStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBListState<K, N, T>>(ctx(), &core_->store(), cf, d.name());
  }
  template <class N, class UK, class UV>
  std::unique_ptr<InternalMapState<N, UK, UV>> make_state(const MapStateDescriptor<UK, UV>& d, int32_t cf) {
    return std::make_unique<RocksDBMapState<K, N, UK, UV>>(ctx(), &core_->store(), cf, d.name());
  }
  template <class N, class T>
  std::unique_ptr<InternalReducingState<N, T>> make_state(const ReducingStateDescriptor<T>& d, int32_t cf) {
    return std::make_unique<RocksDBReducingState<K, N, T>>(ctx(), &core_->store(), cf, d.name(),
                                                           d.reduce_function());
  }
  template <class N, class IN, class ACC, class OUT>
  std::unique_ptr<InternalAggregatingState<N, IN, ACC, OUT>> make_state(
      const AggregatingStateDescriptor<IN, ACC, OUT>& d, int32_t cf) {
    return std::make_unique<RocksDBAggregatingState<K, N, IN, ACC, OUT>>(ctx(), &core_->store(), cf, d.name(),
                                                                         d.aggregate_function());
  }

  std::unique_ptr<RocksDBBackendCore> core_;
  // Owned timer queues; declared after core_, so destroyed before it (they use its store).
  std::vector<std::shared_ptr<void>> timer_queues_;
  std::vector<std::function<void()>> timer_invalidators_;
};

// Compiled once in the state library (see the end of keyed_state_backend.h).
extern template class RocksDBKeyedStateBackend<int64_t>;
extern template class RocksDBKeyedStateBackend<std::string>;

}  // namespace sluice
