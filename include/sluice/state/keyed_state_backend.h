// KeyedStateBackend<K>: the keyed state of one keyed operator subtask (Flink's KeyedStateBackend).
//
// Lifecycle: the runtime creates one per keyed operator subtask for the subtask's key-group range
// (make_keyed_state_backend), optionally restores key-group snapshots into it, then calls set_current_key
// before each record. User functions register states in open() (get_state & co.) and access them per record.
//
// Per-record path: set_current_key hashes the key once (XXH3 of its serialized bytes) and caches hash, key
// group and table index; each state access is then one hash-table lookup with that cached hash (heap), or one
// RocksDB call with [key group][key][namespace] as key (RocksDB). State accessors are non-virtual templates;
// only the state objects' methods are virtual (one call per access).
//
// Registration: get_*_state with a name registered before returns the same object. The same name with
// another kind, value type, namespace type or TTL on/off throws StatusError (kInvalidArgument) naming the state (it
// comes from user open(); the task fails with that Status, which the restart strategy never restarts), as does an
// empty name or a restored state whose schema is incompatible with the registration (compatible changes migrate:
// state_schema.h; TTL: TtlValue<...>); restored bytes that do not decode throw StatusError (kCorruption).
//
// State TTL: states whose descriptor enables a time-to-live read processing time from the backend's TTL clock
// (set_ttl_clock; default SystemClock). States without TTL pay nothing for the feature: they are other classes.
//
// Requirements on the key type K: TypeSerializer<K> (core/serializer.h), default-constructible,
// copy-assignable. Key identity is the key's serialized bytes: the key group and the hash come from them.
// Equality is operator== when K has one (it must agree with byte equality: a == b iff their serialized
// bytes are equal), bitwise for arithmetic types, and a comparison of the serialized bytes otherwise. So a
// user struct key needs only SLUICE_FIELDS (or custom serialize); adding `bool operator==(const T&) const =
// default;` makes lookups faster. No std::hash<K> is needed.
//
// Errors: set_current_key throws std::logic_error when the key's group is outside this backend's range (a
// routing bug upstream); accessing state with no current key throws std::logic_error. Snapshot/restore
// return Status.
// Thread-safety: none. A backend and its states belong to the subtask's task thread; only the snapshots it
// hands out (snapshot()) are written from other threads.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/state/incremental_snapshot.h"
#include "sluice/state/internal_kv_state.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/keyed_state_snapshot.h"
#include "sluice/state/state.h"
#include "sluice/state/state_backend.h"
#include "sluice/state/state_descriptor.h"
#include "sluice/state/state_schema.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

template <class K>
class HeapKeyedStateBackend;
template <class K>
class RocksDBKeyedStateBackend;

namespace detail {
[[noreturn]] void throw_key_group_out_of_range(int32_t key_group, const KeyGroupRange& range,
                                               int32_t max_parallelism);
[[noreturn]] void throw_no_current_key();
[[noreturn]] void throw_state_conflict(const StateMetaInfo& registered, const StateMetaInfo& requested);
[[noreturn]] void throw_empty_state_name();
}  // namespace detail

template <class K>
class KeyedStateBackend {
 public:
  using key_type = K;

  // Requires 1 <= max_parallelism <= 32768 and range within [0, max_parallelism) (make_keyed_state_backend
  // checks both).
  KeyedStateBackend(KeyGroupRange range, int32_t max_parallelism)
      : range_(range),
        max_parallelism_(max_parallelism),
        pow2_mask_(std::has_single_bit(static_cast<uint32_t>(max_parallelism)) ? max_parallelism - 1 : -1) {}
  virtual ~KeyedStateBackend() = default;
  KeyedStateBackend(const KeyedStateBackend&) = delete;
  KeyedStateBackend& operator=(const KeyedStateBackend&) = delete;

  virtual StateBackendKind kind() const = 0;
  const KeyGroupRange& key_group_range() const { return range_; }
  int32_t max_parallelism() const { return max_parallelism_; }

  // Sets the key that state accesses refer to. Throws std::logic_error if the key's group is not in this
  // backend's range; the previous key stays current then.
  void set_current_key(const K& key) {
    const uint64_t h = hash_key(key);
    const int32_t m = murmur_hash_of_key_hash(h);
    const int32_t kg = pow2_mask_ >= 0 ? (m & pow2_mask_) : (m % max_parallelism_);
    const int32_t index = kg - range_.start();
    if (static_cast<uint32_t>(index) >= static_cast<uint32_t>(range_.num_key_groups())) [[unlikely]] {
      detail::throw_key_group_out_of_range(kg, range_, max_parallelism_);
    }
    current_.key = key;
    current_.key_hash = h;
    current_.key_group = kg;
    current_.key_group_index = index;
    if (!key_change_listeners_.empty()) [[unlikely]] notify_key_change_listeners();
  }
  bool has_current_key() const { return current_.key_group_index >= 0; }
  // Throws std::logic_error if no key was set.
  const K& current_key() const {
    if (!has_current_key()) [[unlikely]] detail::throw_no_current_key();
    return current_.key;
  }
  KeyGroup current_key_group() const {
    if (!has_current_key()) [[unlikely]] detail::throw_no_current_key();
    return KeyGroup(current_.key_group);
  }

  // User state (VoidNamespace). See the header comment for registration rules and errors.
  template <class T>
  ValueState<T>& get_state(const ValueStateDescriptor<T>& d) {
    return get_internal_state<VoidNamespace>(d);
  }
  template <class T>
  ListState<T>& get_list_state(const ListStateDescriptor<T>& d) {
    return get_internal_state<VoidNamespace>(d);
  }
  template <class UK, class UV>
  MapState<UK, UV>& get_map_state(const MapStateDescriptor<UK, UV>& d) {
    return get_internal_state<VoidNamespace>(d);
  }
  template <class T>
  ReducingState<T>& get_reducing_state(const ReducingStateDescriptor<T>& d) {
    return get_internal_state<VoidNamespace>(d);
  }
  template <class IN, class ACC, class OUT>
  AggregatingState<IN, OUT>& get_aggregating_state(const AggregatingStateDescriptor<IN, ACC, OUT>& d) {
    return get_internal_state<VoidNamespace>(d);
  }

  // State scoped by a namespace of type N (windows): the returned state has set_current_namespace
  // (internal_kv_state.h). A name is registered with one namespace type only.
  template <class N, class D>
  internal_state_t<N, D>& get_internal_state(const D& d) {
    using S = internal_state_t<N, D>;
    if (d.name().empty()) detail::throw_empty_state_name();
    auto it = states_.find(d.name());
    if (it != states_.end()) {
      if (it->second.type != std::type_index(typeid(S)) || it->second.ttl != d.ttl_config().is_enabled()) {
        detail::throw_state_conflict(it->second.meta, meta_info_of<N>(d));
      }
      return *static_cast<S*>(it->second.state.get());
    }
    StateMetaInfo meta = meta_info_of<N>(d);
    std::unique_ptr<S> created = create_state<N>(d, meta);
    S* raw = created.get();
    states_.emplace(d.name(), Registered{std::move(meta), std::type_index(typeid(S)), d.ttl_config().is_enabled(),
                                         ErasedState(created.release(), [](void* p) { delete static_cast<S*>(p); })});
    return *raw;
  }

  // The timer queue (timer_queue.h) named `name` with namespace type N: timers stored per key group in this
  // backend (heap: HeapTimerQueue; RocksDB: a column family, or the heap with timer-service.factory HEAP) and
  // checkpointed with the keyed state. The same name returns the same queue. Throws StatusError (kInvalidArgument)
  // for an empty name, a name a state or a queue of another namespace type has, or restored timers of another
  // namespace type (naming the queue). The queue's add/remove take the current-key context: timer services
  // (operators/internal_timer_service.h) pass current_key_context().
  template <class N>
  InternalTimerQueue<K, N>& get_timer_queue(const std::string& name) {
    using Q = InternalTimerQueue<K, N>;
    if (name.empty()) detail::throw_empty_state_name();
    StateMetaInfo meta = timer_queue_meta_info<N>(name);
    auto it = states_.find(name);
    if (it != states_.end()) {
      if (it->second.type != std::type_index(typeid(Q))) detail::throw_state_conflict(it->second.meta, meta);
      return *static_cast<Q*>(it->second.state.get());
    }
    Q* created = create_timer_queue<N>(meta);  // owned by the concrete backend
    states_.emplace(name, Registered{std::move(meta), std::type_index(typeid(Q)), false,
                                     ErasedState(created, [](void*) {})});
    return *created;
  }
  // The current key with its cached hash and key group (timer queues take it). Throws std::logic_error if no
  // key was set.
  const CurrentKeyContext<K>& current_key_context() const {
    if (!has_current_key()) [[unlikely]] detail::throw_no_current_key();
    return current_;
  }

  // Metrics hooks: entries over all states and key groups (a list or map per (key, namespace) is one entry),
  // and an estimate of the memory (heap) or disk (RocksDB) the state takes.
  virtual int64_t num_entries() const = 0;
  virtual int64_t state_size_bytes_estimate() const = 0;

  // The synchronous part of an asynchronous snapshot (keyed_state_snapshot.h): fixes the state as it is now
  // and returns at once; the snapshot's write_key_group may then run on another thread while this backend
  // keeps changing. Task thread. Release snapshots before destroying the backend (writes to a snapshot that
  // outlives it fail with kCancelled).
  virtual std::unique_ptr<KeyedStateSnapshot> snapshot() = 0;

  // Appends the canonical snapshot of key group kg (key_group_snapshot.h) to *out, also for an empty key
  // group. kInvalidArgument if kg is not in this backend's range. Synchronous: runs on the task thread.
  virtual Status snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const = 0;
  // Replaces the contents of the snapshot's key group with the snapshot's. kCorruption if the bytes are
  // damaged or truncated; kInvalidArgument if the key group is outside this backend's range, the max
  // parallelism or key serializer differ, or a registered state's schema is incompatible (state_schema.h).
  // On error nothing changes. States not registered yet are kept and checked when they are registered.
  virtual Status restore_key_group(const uint8_t* data, size_t size) = 0;

  // Drops every state entry and timer of key group kg (BATCH execution: the state of a key whose input ended;
  // docs/batch.md). kInvalidArgument if kg is outside this backend's range. The heap backend implements it (BATCH
  // jobs always run on it, as Flink's batch state backend replaces the configured one); others:
  // kFailedPrecondition. Task thread.
  virtual Status clear_key_group(KeyGroup kg) {
    return Status::failed_precondition("clearing key group " + std::to_string(kg.value()) +
                                       ": only the heap keyed state backend supports it");
  }

  // ---- incremental snapshots (incremental_snapshot.h; the RocksDB backend only) ----
  // The synchronous part of an incremental snapshot for checkpoint (or native savepoint) `id`; `reuse` says
  // whether it may refer to earlier uploads. Others: kFailedPrecondition.
  virtual Result<std::unique_ptr<IncrementalKeyedSnapshot>> snapshot_incremental(
      CheckpointId id, SnapshotFileReuse reuse = SnapshotFileReuse::kReuseCompletedUploads) {
    (void)reuse;
    return Status::failed_precondition("checkpoint " + std::to_string(id.value()) + ": the " +
                                       std::string(state_backend_kind_name(kind())) +
                                       " state backend takes no incremental snapshots");
  }
  // Restores incremental handles (any key-group ranges) into a fresh backend. Others: kInvalidArgument naming
  // the handle.
  virtual Status restore_incremental(const std::vector<IncrementalRestoreHandle>& handles) {
    if (handles.empty()) return Status::ok();
    return Status::invalid_argument(handles.front().what + ": an incremental RocksDB snapshot restores only into "
                                    "the RocksDB state backend (state.backend.type: rocksdb); this is the " +
                                    std::string(state_backend_kind_name(kind())) +
                                    " backend. Full snapshots (execution.checkpointing.incremental: false, and "
                                    "savepoints) are portable between backends");
  }
  // Checkpoint `id` completed / was aborted (the backends that reuse uploads track them). Task thread.
  virtual void notify_checkpoint_complete(CheckpointId) {}
  virtual void notify_checkpoint_aborted(CheckpointId) {}

  // Restores those snapshots whose key group is in this backend's range and skips the others (rescaling:
  // hand every snapshot of the old subtasks whose range intersects ours).
  Status restore_intersecting_key_groups(const std::vector<std::vector<uint8_t>>& snapshots) {
    for (const auto& s : snapshots) {
      SLUICE_ASSIGN_OR_RETURN(KeyGroupSnapshotHeader h, peek_key_group_snapshot(s.data(), s.size()));
      if (h.max_parallelism == max_parallelism_ && !range_.contains(h.key_group)) continue;
      SLUICE_RETURN_IF_ERROR(restore_key_group(s.data(), s.size()));
    }
    return Status::ok();
  }

  // The clock that states with TTL read processing time from (state_ttl_config.h). Set it before registering
  // TTL states: each state keeps the clock it was created with. Tests inject a ManualClock. Null is ignored.
  void set_ttl_clock(std::shared_ptr<const Clock> clock) {
    if (clock) ttl_clock_ = std::move(clock);
  }
  const std::shared_ptr<const Clock>& ttl_clock() const { return ttl_clock_; }

  // Names of the states registered so far (unordered).
  std::vector<std::string> registered_state_names() const {
    std::vector<std::string> names;
    for (const auto& [name, r] : states_) names.push_back(name);
    return names;
  }

  // How restored states met their registrations (state schema evolution, state_schema.h): one report per state
  // that had restored entries, in the order they were resolved, with the entries a migration rewrote. The
  // runtime logs them after the operators opened (the restore check cannot know them before: the serializers are
  // the types of the program's state descriptors, registered in open()).
  const std::vector<StateSchemaReport>& schema_reports() const { return schema_reports_; }

 protected:
  // Adds to the report of r.state, or starts it.
  void report_schema(StateSchemaReport r) {
    for (StateSchemaReport& known : schema_reports_) {
      if (known.state != r.state) continue;
      known.migrated_entries += r.migrated_entries;
      if (known.kind == SchemaCompatibilityKind::kCompatibleAsIs) {
        const uint64_t n = known.migrated_entries;
        known = std::move(r);
        known.migrated_entries = n;
      }
      return;
    }
    schema_reports_.push_back(std::move(r));
  }

  const CurrentKeyContext<K>& key_context() const { return current_; }
  // Called after every set_current_key (heap TTL cleanup for every record). The listener must live as long
  // as the backend. With no listener set_current_key pays one predictable branch.
  void add_key_change_listener(std::function<void()> listener) {
    key_change_listeners_.push_back(std::move(listener));
  }

 private:
  using ErasedState = std::unique_ptr<void, void (*)(void*)>;
  struct Registered {
    StateMetaInfo meta;
    std::type_index type;
    bool ttl;  // registered with a time-to-live
    ErasedState state;
  };

  // With TTL the stored value (Value, Reducing: T; Aggregating: ACC; List: the element; Map: UV) is a
  // TtlValue of it: the last value serializer is wrapped.
  template <class N, class D>
  static StateMetaInfo meta_info_of(const D& d) {
    std::vector<TypeSerializerSnapshot> values = D::value_serializer_snapshots();
    if (d.ttl_config().is_enabled()) values.back() = ttl_serializer_snapshot(std::move(values.back()));
    return StateMetaInfo{d.name(), D::kKind, TypeSerializer<N>::snapshot(), std::move(values)};
  }

  void notify_key_change_listeners() {
    for (const auto& l : key_change_listeners_) l();
  }

  // Dispatches to the concrete backend's typed factory.
  template <class N, class D>
  std::unique_ptr<internal_state_t<N, D>> create_state(const D& d, const StateMetaInfo& meta) {
    switch (kind()) {
      case StateBackendKind::kHashMap:
        return static_cast<HeapKeyedStateBackend<K>&>(*this).template create_heap_state<N>(d, meta);
      case StateBackendKind::kRocksDB:
        return static_cast<RocksDBKeyedStateBackend<K>&>(*this).template create_rocksdb_state<N>(d, meta);
    }
    throw std::logic_error("state '" + d.name() + "': unknown state backend kind");
  }

  template <class N>
  InternalTimerQueue<K, N>* create_timer_queue(const StateMetaInfo& meta) {
    switch (kind()) {
      case StateBackendKind::kHashMap:
        return static_cast<HeapKeyedStateBackend<K>&>(*this).template create_heap_timer_queue<N>(meta);
      case StateBackendKind::kRocksDB:
        return static_cast<RocksDBKeyedStateBackend<K>&>(*this).template create_rocksdb_timer_queue<N>(meta);
    }
    throw std::logic_error("timer queue '" + meta.name + "': unknown state backend kind");
  }

  KeyGroupRange range_;
  int32_t max_parallelism_;
  int32_t pow2_mask_;  // max_parallelism - 1 if it is a power of two (key group by mask), else -1
  CurrentKeyContext<K> current_;
  std::vector<std::function<void()>> key_change_listeners_;
  std::shared_ptr<const Clock> ttl_clock_ = SystemClock::shared();
  std::unordered_map<std::string, Registered> states_;
  std::vector<StateSchemaReport> schema_reports_;
};

}  // namespace sluice

// The backends, complete before any get_*_state is instantiated.
#include "sluice/detail/state/heap/heap_keyed_state_backend.h"
#include "sluice/detail/state/rocksdb/rocksdb_keyed_state_backend.h"

namespace sluice {

// Creates the keyed state backend of one keyed operator subtask. kInvalidArgument if max_parallelism is
// outside [1, 32768] or the range is not inside [0, max_parallelism); kIOError if the RocksDB backend cannot
// create its working directory or database (`rocksdb` says where; the heap backend ignores it).
template <class K>
Result<std::unique_ptr<KeyedStateBackend<K>>> make_keyed_state_backend(
    StateBackendKind kind, KeyGroupRange range, int32_t max_parallelism,
    const RocksDBStateBackendOptions& rocksdb = {}) {
  SLUICE_RETURN_IF_ERROR(check_max_parallelism(max_parallelism, 1));
  if (!range.is_empty() && range.end_inclusive() >= max_parallelism) {
    return Status::invalid_argument("key-group range " + range.to_string() + " is not inside [0, " +
                                    std::to_string(max_parallelism - 1) + "] (max parallelism " +
                                    std::to_string(max_parallelism) + ")");
  }
  switch (kind) {
    case StateBackendKind::kHashMap:
      return std::unique_ptr<KeyedStateBackend<K>>(
          std::make_unique<HeapKeyedStateBackend<K>>(range, max_parallelism));
    case StateBackendKind::kRocksDB: {
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RocksDBKeyedStateBackend<K>> b,
                              RocksDBKeyedStateBackend<K>::create(range, max_parallelism, rocksdb));
      return std::unique_ptr<KeyedStateBackend<K>>(std::move(b));
    }
  }
  return Status::invalid_argument("unknown state backend kind " + std::to_string(static_cast<int>(kind)));
}

// The same from a `state.backend.type` string, for operator setup code that reports failures by exception:
// throws StatusError with that Status (kInvalidArgument, or kIOError for a disk that refused).
template <class K>
std::unique_ptr<KeyedStateBackend<K>> create_keyed_state_backend(std::string_view state_backend_type,
                                                                 KeyGroupRange range, int32_t max_parallelism,
                                                                 const RocksDBStateBackendOptions& rocksdb = {}) {
  Result<StateBackendKind> kind = parse_state_backend_type(state_backend_type);
  if (!kind) throw StatusError(kind.status());
  auto backend = make_keyed_state_backend<K>(*kind, range, max_parallelism, rocksdb);
  if (!backend) throw StatusError(backend.status());  // keeps its code: kIOError for a disk that refused
  return std::move(backend).value();
}

// Keys of int64_t and std::string are the most common: the backends' non-template members for them are compiled
// once, in the state library, instead of in every program that keys by them (about 60 of this project's test
// programs key by int64_t; a word count keys by std::string: 2 s of its compile, docs/benchmarks.md "Build time").
// The member templates (one per state type: get_state & co.) still instantiate where they are used. The backends'
// own declarations end their headers (heap_keyed_state_backend.h, rocksdb_keyed_state_backend.h).
extern template class KeyedStateBackend<int64_t>;
extern template Result<std::unique_ptr<KeyedStateBackend<int64_t>>> make_keyed_state_backend<int64_t>(
    StateBackendKind, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
extern template std::unique_ptr<KeyedStateBackend<int64_t>> create_keyed_state_backend<int64_t>(
    std::string_view, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
extern template class KeyedStateBackend<std::string>;
extern template Result<std::unique_ptr<KeyedStateBackend<std::string>>> make_keyed_state_backend<std::string>(
    StateBackendKind, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
extern template std::unique_ptr<KeyedStateBackend<std::string>> create_keyed_state_backend<std::string>(
    std::string_view, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);

}  // namespace sluice
