// HeapKeyedStateBackend<K>: the keyed state backend of HashMapStateBackend (Flink's HeapKeyedStateBackend).
// Values live as typed C++ objects, one StateTable per registered state and one StateMap per key group in
// it, so snapshots, restores and copy-on-write versioning work per key group.
//
// Created through make_keyed_state_backend (keyed_state_backend.h). Restore accepts key groups before or after
// the states are registered (restored_state_store.h). snapshot() is asynchronous copy-on-write: it bumps the
// backend's StateVersions and takes every map's view (O(key groups x states)); the maps copy what a live
// snapshot can read before writing it (state_map.h). snapshot_key_group and restore are synchronous.
// Thread-safety: task thread, except the snapshots it hands out (keyed_state_snapshot.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/detail/state/heap/heap_keyed_state_snapshot.h"
#include "sluice/detail/state/heap/heap_states.h"
#include "sluice/detail/state/heap/heap_timer_queue.h"
#include "sluice/detail/state/heap/heap_ttl_states.h"
#include "sluice/detail/state/heap/restored_state_store.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/state/keyed_state_backend.h"

namespace sluice {

// The type the heap backend stores per (key, namespace) for a descriptor.
template <class D>
struct HeapStoredValue;
template <class T>
struct HeapStoredValue<ValueStateDescriptor<T>> {
  using type = T;
};
template <class T>
struct HeapStoredValue<ListStateDescriptor<T>> {
  using type = std::vector<T>;
};
template <class UK, class UV>
struct HeapStoredValue<MapStateDescriptor<UK, UV>> {
  using type = HeapMapValue<UK, UV>;
};
template <class T>
struct HeapStoredValue<ReducingStateDescriptor<T>> {
  using type = T;
};
template <class IN, class ACC, class OUT>
struct HeapStoredValue<AggregatingStateDescriptor<IN, ACC, OUT>> {
  using type = ACC;
};
template <class D>
using heap_stored_value_t = typename HeapStoredValue<D>::type;

// The same for a state with TTL: the value, list element or map value wrapped in TtlValue.
template <class D>
struct HeapTtlStoredValue {
  using type = TtlValue<heap_stored_value_t<D>>;
};
template <class T>
struct HeapTtlStoredValue<ListStateDescriptor<T>> {
  using type = std::vector<TtlValue<T>>;
};
template <class UK, class UV>
struct HeapTtlStoredValue<MapStateDescriptor<UK, UV>> {
  using type = HeapMapValue<UK, TtlValue<UV>>;
};
template <class D>
using heap_ttl_stored_value_t = typename HeapTtlStoredValue<D>::type;

template <class K>
class HeapKeyedStateBackend final : public KeyedStateBackend<K> {
 public:
  HeapKeyedStateBackend(KeyGroupRange range, int32_t max_parallelism)
      : KeyedStateBackend<K>(range, max_parallelism) {}
  // Live snapshots become unwritable (kCancelled); the backend frees everything.
  ~HeapKeyedStateBackend() override { versions_->close(); }

  StateBackendKind kind() const override { return StateBackendKind::kHashMap; }

  int64_t num_entries() const override {
    int64_t n = pending_.num_entries();
    for (const auto& [name, t] : tables_) n += static_cast<int64_t>(t->size());
    return n;
  }
  // Includes the copy-on-write originals kept for live snapshots.
  int64_t state_size_bytes_estimate() const override {
    int64_t n = pending_.size_bytes() + static_cast<int64_t>(versions_->retained_bytes());
    for (const auto& [name, t] : tables_) n += t->size_bytes_estimate();
    return n;
  }

  // Visits every entry of the registered state `d` (namespace N) in key group kg:
  // fn(const K&, const N&, const V&) with V = heap_stored_value_t<D> (T; std::vector<T> for lists;
  // HeapMapValue<UK, UV> for maps; ACC for aggregating). fn must not change state. Throws
  // std::invalid_argument if the state is not registered with these types or kg is outside the range.
  template <class N = VoidNamespace, class D, class F>
  void for_each_entry(const D& d, KeyGroup kg, F&& fn) const {
    for_each_stored_entry<N, heap_stored_value_t<D>>(d, kg, std::forward<F>(fn));
  }
  // The same for a state with TTL: V = heap_ttl_stored_value_t<D> (values with their timestamps).
  template <class N = VoidNamespace, class D, class F>
  void for_each_ttl_entry(const D& d, KeyGroup kg, F&& fn) const {
    for_each_stored_entry<N, heap_ttl_stored_value_t<D>>(d, kg, std::forward<F>(fn));
  }

 private:
  template <class N, class Stored, class D, class F>
  void for_each_stored_entry(const D& d, KeyGroup kg, F&& fn) const {
    using Table = StateTable<K, N, Stored>;
    auto it = tables_.find(d.name());
    const Table* table = it == tables_.end() ? nullptr : dynamic_cast<const Table*>(it->second.get());
    if (table == nullptr) {
      throw StatusError(
          Status::invalid_argument("for_each_entry: state '" + d.name() + "' is not registered with these types"));
    }
    if (!this->key_group_range().contains(kg)) {
      throw StatusError(
          Status::invalid_argument("for_each_entry: key group " + std::to_string(kg.value()) + " is outside " +
                                   this->key_group_range().to_string()));
    }
    table->for_each_entry(this->key_group_range().index_of(kg), std::forward<F>(fn));
  }

 public:

  Status snapshot_key_group(KeyGroup kg, std::vector<uint8_t>* out) const override {
    const KeyGroupRange& range = this->key_group_range();
    if (!range.contains(kg)) {
      return Status::invalid_argument("snapshot_key_group: key group " + std::to_string(kg.value()) +
                                      " is outside this backend's range " + range.to_string());
    }
    std::vector<const StateTableBase*> tables;
    for (const auto& [name, t] : tables_) tables.push_back(t.get());
    detail::write_heap_key_group(out, this->max_parallelism(), kg, range.index_of(kg), TypeSerializer<K>::snapshot(),
                                 tables, pending_.views_of_key_group(kg), /*write_if_empty=*/true);
    return Status::ok();
  }

  std::unique_ptr<KeyedStateSnapshot> snapshot() override {
    const uint64_t version = versions_->begin_snapshot();
    try {
      std::vector<std::unique_ptr<StateTableSnapshot>> tables;
      tables.reserve(tables_.size());
      for (const auto& [name, t] : tables_) tables.push_back(t->snapshot());  // name order
      return std::make_unique<HeapKeyedStateSnapshot>(this->key_group_range(), this->max_parallelism(),
                                                      TypeSerializer<K>::snapshot(), versions_, version,
                                                      std::move(tables), pending_);
    } catch (...) {  // out of memory: do not leave the version live forever
      versions_->release(version);
      throw;
    }
  }

  // The copy-on-write bookkeeping (retained objects, live snapshots), for tests and metrics.
  const StateVersions& state_versions() const { return *versions_; }

  Status restore_key_group(const uint8_t* data, size_t size) override {
    SLUICE_ASSIGN_OR_RETURN(KeyGroupSnapshotView view, parse_key_group_snapshot(data, size));
    const KeyGroupRange& range = this->key_group_range();
    const std::string what = "restoring key group " + std::to_string(view.key_group.value());
    if (view.max_parallelism != this->max_parallelism()) {
      return Status::invalid_argument(what + ": the snapshot was taken with max parallelism " +
                                      std::to_string(view.max_parallelism) + ", this backend has " +
                                      std::to_string(this->max_parallelism()) +
                                      " (key groups only carry over at the same max parallelism)");
    }
    if (!range.contains(view.key_group)) {
      return Status::invalid_argument(what + ": outside this backend's key-group range " + range.to_string());
    }
    SLUICE_RETURN_IF_ERROR(check_key_serializer(what, view.key_serializer, TypeSerializer<K>::snapshot()));
    const int32_t index = range.index_of(view.key_group);

    // Phase 1: check and decode everything; nothing visible changes.
    Status st = Status::ok();
    std::vector<StateSchemaReport> reports;
    for (const StateSnapshotView& s : view.states) {
      auto it = tables_.find(s.meta.name);
      if (it != tables_.end()) {
        uint64_t migrated = 0;
        Result<SchemaCompatibility> c =
            it->second->stage_restored(view.key_group, index, s, this->max_parallelism(), &migrated);
        st = c.status();
        if (c.is_ok()) reports.push_back(make_schema_report(s.meta, it->second->meta(), *c, migrated));
      } else {
        st = pending_.check_consistent(s.meta);
      }
      if (!st.is_ok()) break;
    }
    if (!st.is_ok()) {
      for (auto& [name, t] : tables_) t->discard_staged();
      return st.with_context(what);
    }
    // Phase 2: replace the key group in every registered table and in the pending store.
    for (auto& [name, t] : tables_) t->commit_staged(index);
    for (StateSchemaReport& r : reports) this->report_schema(std::move(r));
    pending_.clear_key_group(view.key_group);
    for (const StateSnapshotView& s : view.states) {
      if (tables_.find(s.meta.name) == tables_.end()) pending_.put_key_group(view.key_group, s);
    }
    return Status::ok();
  }

  Status clear_key_group(KeyGroup kg) override {
    const KeyGroupRange& range = this->key_group_range();
    if (!range.contains(kg)) {
      return Status::invalid_argument("clearing key group " + std::to_string(kg.value()) + ": not in this backend's " +
                                      range.to_string());
    }
    const int32_t index = range.index_of(kg);
    for (auto& [name, t] : tables_) {
      t->discard_staged();
      t->commit_staged(index);  // nothing staged: the key group's map becomes empty
    }
    pending_.clear_key_group(kg);
    return Status::ok();
  }

 private:
  friend class KeyedStateBackend<K>;

  // Called by KeyedStateBackend::get_internal_state for a name registered for the first time.
  template <class N, class D>
  std::unique_ptr<internal_state_t<N, D>> create_heap_state(const D& d, const StateMetaInfo& meta) {
    if (d.ttl_config().is_enabled()) return create_heap_table<N, heap_ttl_stored_value_t<D>>(d, meta);
    return create_heap_table<N, heap_stored_value_t<D>>(d, meta);
  }

  template <class N, class V, class D>
  std::unique_ptr<internal_state_t<N, D>> create_heap_table(const D& d, const StateMetaInfo& meta) {
    using Table = StateTable<K, N, V>;
    auto table = std::make_unique<Table>(meta, this->key_group_range().num_key_groups(), *versions_);
    std::optional<StateSchemaReport> report;
    if (const RestoredStateStore::State* restored = pending_.find(meta.name)) {
      Status st = Status::ok();
      SchemaCompatibility compatibility;
      uint64_t migrated = 0;
      for (auto it = restored->key_groups.begin(); st.is_ok() && it != restored->key_groups.end(); ++it) {
        const KeyGroup kg(it->first);
        const int32_t index = this->key_group_range().index_of(kg);
        const std::vector<uint8_t>& bytes = *it->second.bytes;
        StateSnapshotView view{restored->meta, it->second.count, bytes.data(), bytes.size()};
        Result<SchemaCompatibility> c = table->stage_restored(kg, index, view, this->max_parallelism(), &migrated);
        st = c.status();
        if (c.is_ok()) {
          compatibility = *c;
          table->commit_staged(index);
        }
      }
      if (!st.is_ok()) throw StatusError(st);
      report = make_schema_report(restored->meta, meta, compatibility, migrated);
    }
    auto state = make_state<N>(d, table.get());  // may throw: nothing has changed yet
    if (report) this->report_schema(std::move(*report));
    if constexpr (detail::TtlStored<V>::kIsTtl) {
      const StateTtlConfig& ttl = d.ttl_config();
      if (ttl.cleanup_in_full_snapshot()) table->set_ttl_snapshot_filter(this->ttl_clock(), ttl.ttl_ms());
      auto inc = ttl.incremental_cleanup();
      if (inc && inc->run_cleanup_for_every_record) {
        auto* cleanup = &state->ttl();
        const auto size = static_cast<size_t>(inc->cleanup_size);
        this->add_key_change_listener([cleanup, size] { cleanup->run(size, cleanup->now()); });
      }
    }
    pending_.erase(meta.name);
    tables_.emplace(meta.name, std::move(table));
    return state;
  }

  // Called by KeyedStateBackend::get_timer_queue for a name registered for the first time: a table like a
  // state's (snapshots, restores and rescaling come with it), filled from restored timers if any.
  template <class N>
  InternalTimerQueue<K, N>* create_heap_timer_queue(const StateMetaInfo& meta) {
    auto queue = std::make_unique<HeapTimerQueue<K, N>>(meta, this->key_group_range(), this->max_parallelism());
    if (const RestoredStateStore::State* restored = pending_.find(meta.name)) {
      Status st = check_state_compatible(restored->meta, meta);
      for (auto it = restored->key_groups.begin(); st.is_ok() && it != restored->key_groups.end(); ++it) {
        const KeyGroup kg(it->first);
        const int32_t index = this->key_group_range().index_of(kg);
        const std::vector<uint8_t>& bytes = *it->second.bytes;
        StateSnapshotView view{restored->meta, it->second.count, bytes.data(), bytes.size()};
        st = queue->stage_key_group(kg, index, view, this->max_parallelism());
        if (st.is_ok()) queue->commit_staged(index);
      }
      if (!st.is_ok()) throw StatusError(st);
    }
    HeapTimerQueue<K, N>* raw = queue.get();
    pending_.erase(meta.name);
    tables_.emplace(meta.name, std::move(queue));
    return raw;
  }

  // States with TTL (the table holds TTL values).
  template <class N, class T>
  std::unique_ptr<HeapTtlValueState<K, N, T>> make_state(const ValueStateDescriptor<T>& d,
                                                         StateTable<K, N, TtlValue<T>>* t) {
    return std::make_unique<HeapTtlValueState<K, N, T>>(&this->key_context(), t, d.ttl_config(), this->ttl_clock());
  }
  template <class N, class T>
  std::unique_ptr<HeapTtlListState<K, N, T>> make_state(const ListStateDescriptor<T>& d,
                                                        StateTable<K, N, std::vector<TtlValue<T>>>* t) {
    return std::make_unique<HeapTtlListState<K, N, T>>(&this->key_context(), t, d.ttl_config(), this->ttl_clock());
  }
  template <class N, class UK, class UV>
  std::unique_ptr<HeapTtlMapState<K, N, UK, UV>> make_state(const MapStateDescriptor<UK, UV>& d,
                                                            StateTable<K, N, HeapMapValue<UK, TtlValue<UV>>>* t) {
    return std::make_unique<HeapTtlMapState<K, N, UK, UV>>(&this->key_context(), t, d.ttl_config(),
                                                           this->ttl_clock());
  }
  template <class N, class T>
  std::unique_ptr<HeapTtlReducingState<K, N, T>> make_state(const ReducingStateDescriptor<T>& d,
                                                            StateTable<K, N, TtlValue<T>>* t) {
    if (!d.reduce_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': ReducingStateDescriptor needs a reduce function"));
    }
    return std::make_unique<HeapTtlReducingState<K, N, T>>(&this->key_context(), t, d.reduce_function(),
                                                           d.ttl_config(), this->ttl_clock());
  }
  template <class N, class IN, class ACC, class OUT>
  std::unique_ptr<HeapTtlAggregatingState<K, N, IN, ACC, OUT>> make_state(
      const AggregatingStateDescriptor<IN, ACC, OUT>& d, StateTable<K, N, TtlValue<ACC>>* t) {
    if (!d.aggregate_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': AggregatingStateDescriptor needs an aggregate function"));
    }
    return std::make_unique<HeapTtlAggregatingState<K, N, IN, ACC, OUT>>(
        &this->key_context(), t, d.aggregate_function(), d.ttl_config(), this->ttl_clock());
  }

  template <class N, class T>
  std::unique_ptr<InternalValueState<N, T>> make_state(const ValueStateDescriptor<T>&, StateTable<K, N, T>* t) {
    return std::make_unique<HeapValueState<K, N, T>>(&this->key_context(), t);
  }
  template <class N, class T>
  std::unique_ptr<InternalListState<N, T>> make_state(const ListStateDescriptor<T>&,
                                                      StateTable<K, N, std::vector<T>>* t) {
    return std::make_unique<HeapListState<K, N, T>>(&this->key_context(), t);
  }
  template <class N, class UK, class UV>
  std::unique_ptr<InternalMapState<N, UK, UV>> make_state(const MapStateDescriptor<UK, UV>&,
                                                          StateTable<K, N, HeapMapValue<UK, UV>>* t) {
    return std::make_unique<HeapMapState<K, N, UK, UV>>(&this->key_context(), t);
  }
  template <class N, class T>
  std::unique_ptr<InternalReducingState<N, T>> make_state(const ReducingStateDescriptor<T>& d,
                                                          StateTable<K, N, T>* t) {
    if (!d.reduce_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': ReducingStateDescriptor needs a reduce function"));
    }
    return std::make_unique<HeapReducingState<K, N, T>>(&this->key_context(), t, d.reduce_function());
  }
  template <class N, class IN, class ACC, class OUT>
  std::unique_ptr<InternalAggregatingState<N, IN, ACC, OUT>> make_state(
      const AggregatingStateDescriptor<IN, ACC, OUT>& d, StateTable<K, N, ACC>* t) {
    if (!d.aggregate_function()) {
      throw StatusError(
          Status::invalid_argument("state '" + d.name() + "': AggregatingStateDescriptor needs an aggregate function"));
    }
    return std::make_unique<HeapAggregatingState<K, N, IN, ACC, OUT>>(&this->key_context(), t,
                                                                       d.aggregate_function());
  }

  // Declared first: outlives the tables, whose maps use it until destroyed.
  std::shared_ptr<StateVersions> versions_ = std::make_shared<StateVersions>();
  std::map<std::string, std::unique_ptr<StateTableBase>, std::less<>> tables_;  // by name: snapshot order
  RestoredStateStore pending_;
};

// Compiled once in the state library (see the end of keyed_state_backend.h).
extern template class HeapKeyedStateBackend<int64_t>;
extern template class HeapKeyedStateBackend<std::string>;

}  // namespace sluice
