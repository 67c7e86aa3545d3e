// OperatorStateStore: non-keyed state of one operator subtask (Flink's OperatorStateStore): named list
// states and broadcast states, used by sources (their splits), sinks (their committables) and user functions
// (through CheckpointedFunction).
//
// Redistribution when a job is restored (Flink's modes):
//  - list state (get_list_state): at an unchanged parallelism each subtask keeps its own elements (so a subtask
//    restarted alone by region failover gets back what it snapshotted); otherwise the elements of all subtasks
//    are split evenly across the new subtasks;
//  - union list state (get_union_list_state): every new subtask gets all elements of all old subtasks;
//  - broadcast state (get_broadcast_state): a map kept identical on every subtask; each gets subtask 0's copy.
// Elements are serialized one by one (TypeSerializer<T>), so redistribution treats them as opaque bytes
// (see redistribute_operator_state). States are typed C++ objects while the job runs; snapshot() serializes
// them synchronously (operator state is small: offsets, committables, user bookkeeping).
//
// Snapshot format (varint/string as in key_group_snapshot.h):
//   "SLOS" magic, varint format version (1), varint state_count, then per state (sorted by name):
//   string name, u8 mode, TypeSerializerSnapshot element serializer, varint n, n x string element bytes;
//   then u64 XXH3-64 of all preceding bytes.
// Errors: restore of malformed bytes is kCorruption; registering a name with another mode or element type
// than restored throws StatusError (kInvalidArgument) naming the state (it happens in user initialize_state()).
// Thread-safety: the task thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/state/state.h"
#include "sluice/state/state_descriptor.h"

namespace sluice {

enum class OperatorStateMode : uint8_t { kSplitDistribute = 0, kUnion = 1, kBroadcast = 2 };
const char* operator_state_mode_name(OperatorStateMode m);

// One state's serialized form: what snapshots hold and redistribution moves.
struct SerializedOperatorState {
  std::string name;
  OperatorStateMode mode = OperatorStateMode::kSplitDistribute;
  TypeSerializerSnapshot element_serializer;
  std::vector<std::string> elements;  // each element's bytes
  bool operator==(const SerializedOperatorState&) const = default;
};

std::vector<uint8_t> encode_operator_state(const std::vector<SerializedOperatorState>& states);
Result<std::vector<SerializedOperatorState>> decode_operator_state(const uint8_t* data, size_t size,
                                                                   std::string_view what);

// The operator state subtask `new_index` of `new_parallelism` gets, from the snapshots of all old subtasks
// (in old subtask order; an old subtask without operator state contributes an empty vector).
Result<std::vector<uint8_t>> redistribute_operator_state(const std::vector<std::vector<uint8_t>>& old_subtasks,
                                                         int32_t new_index, int32_t new_parallelism);

namespace detail {
class OperatorStateBase {
 public:
  virtual ~OperatorStateBase() = default;
  virtual SerializedOperatorState serialize() const = 0;
};

template <class T>
class OperatorListState final : public ListState<T>, public OperatorStateBase {
 public:
  OperatorListState(std::string name, OperatorStateMode mode) : name_(std::move(name)), mode_(mode) {}
  std::vector<T> get() const override { return elements_; }
  void add(T value) override { elements_.push_back(std::move(value)); }
  void add_all(std::vector<T> values) override {
    for (auto& v : values) elements_.push_back(std::move(v));
  }
  void update(std::vector<T> values) override { elements_ = std::move(values); }
  void clear() override { elements_.clear(); }
  SerializedOperatorState serialize() const override {
    SerializedOperatorState s{name_, mode_, TypeSerializer<T>::snapshot(), {}};
    for (const auto& e : elements_) {
      auto b = serialize_bytes(e);
      s.elements.emplace_back(b.begin(), b.end());
    }
    return s;
  }

 private:
  std::string name_;
  OperatorStateMode mode_;
  std::vector<T> elements_;
};

template <class K, class V>
class BroadcastMapState final : public MapState<K, V>, public OperatorStateBase {
 public:
  explicit BroadcastMapState(std::string name) : name_(std::move(name)) {}
  std::optional<V> get(const K& key) const override {
    auto it = map_.find(key);
    return it == map_.end() ? std::nullopt : std::optional<V>(it->second);
  }
  void put(K key, V value) override { map_[std::move(key)] = std::move(value); }
  void put_all(std::vector<std::pair<K, V>> entries) override {
    for (auto& [k, v] : entries) map_[std::move(k)] = std::move(v);
  }
  void remove(const K& key) override { map_.erase(key); }
  bool contains(const K& key) const override { return map_.count(key) > 0; }
  bool is_empty() const override { return map_.empty(); }
  std::vector<std::pair<K, V>> entries() const override { return {map_.begin(), map_.end()}; }
  std::vector<K> keys() const override {
    std::vector<K> r;
    for (const auto& e : map_) r.push_back(e.first);
    return r;
  }
  std::vector<V> values() const override {
    std::vector<V> r;
    for (const auto& e : map_) r.push_back(e.second);
    return r;
  }
  void for_each(const std::function<void(const K&, const V&)>& fn) const override {
    for (const auto& [k, v] : map_) fn(k, v);
  }
  void clear() override { map_.clear(); }
  SerializedOperatorState serialize() const override {
    SerializedOperatorState s{name_, OperatorStateMode::kBroadcast, TypeSerializer<std::pair<K, V>>::snapshot(), {}};
    for (const auto& [k, v] : map_) {
      auto b = serialize_bytes(std::pair<K, V>(k, v));
      s.elements.emplace_back(b.begin(), b.end());
    }
    return s;
  }

 private:
  std::string name_;
  std::map<K, V> map_;
};
}  // namespace detail

class OperatorStateStore {
 public:
  // Installs restored state (from redistribute_operator_state); registration later picks it up.
  Status restore(const std::vector<uint8_t>& bytes, std::string_view what);
  bool is_restored() const { return restored_; }

  template <class T>
  ListState<T>& get_list_state(const ListStateDescriptor<T>& d) {
    return get_list<T>(d.name(), OperatorStateMode::kSplitDistribute);
  }
  template <class T>
  ListState<T>& get_union_list_state(const ListStateDescriptor<T>& d) {
    return get_list<T>(d.name(), OperatorStateMode::kUnion);
  }
  template <class K, class V>
  MapState<K, V>& get_broadcast_state(const MapStateDescriptor<K, V>& d) {
    auto* existing = find_registered(d.name(), OperatorStateMode::kBroadcast, TypeSerializer<std::pair<K, V>>::snapshot());
    if (existing) return *static_cast<detail::BroadcastMapState<K, V>*>(existing);
    auto state = std::make_unique<detail::BroadcastMapState<K, V>>(d.name());
    for (const auto& bytes : take_restored(d.name(), OperatorStateMode::kBroadcast, TypeSerializer<std::pair<K, V>>::snapshot())) {
      auto kv = deserialize_bytes<std::pair<K, V>>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                                   "broadcast state '" + d.name() + "'");
      if (!kv.is_ok()) throw StatusError(kv.status());
      state->put(std::move(kv->first), std::move(kv->second));
    }
    auto* raw = state.get();
    register_state(d.name(), OperatorStateMode::kBroadcast, TypeSerializer<std::pair<K, V>>::snapshot(), std::move(state));
    return *raw;
  }

  // Serializes every registered state, plus restored states the program has not registered (yet), so
  // state survives a restore into code that looks at it later.
  std::vector<uint8_t> snapshot() const;
  bool empty() const { return states_.empty() && pending_.empty(); }

 private:
  struct Registered {
    OperatorStateMode mode;
    TypeSerializerSnapshot serializer;
    std::unique_ptr<detail::OperatorStateBase> state;
  };

  template <class T>
  ListState<T>& get_list(const std::string& name, OperatorStateMode mode) {
    auto* existing = find_registered(name, mode, TypeSerializer<T>::snapshot());
    if (existing) return *static_cast<detail::OperatorListState<T>*>(existing);
    auto state = std::make_unique<detail::OperatorListState<T>>(name, mode);
    for (const auto& bytes : take_restored(name, mode, TypeSerializer<T>::snapshot())) {
      auto v = deserialize_bytes<T>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                    "operator state '" + name + "'");
      if (!v.is_ok()) throw StatusError(v.status());
      state->add(std::move(v).value());
    }
    auto* raw = state.get();
    register_state(name, mode, TypeSerializer<T>::snapshot(), std::move(state));
    return *raw;
  }
  // The registered state's base, checking mode and type; nullptr if not registered.
  detail::OperatorStateBase* find_registered(const std::string& name, OperatorStateMode mode,
                                             const TypeSerializerSnapshot& serializer);
  // Removes and returns a restored state's elements after checking mode and type (throws on mismatch).
  std::vector<std::string> take_restored(const std::string& name, OperatorStateMode mode,
                                         const TypeSerializerSnapshot& serializer);
  void register_state(const std::string& name, OperatorStateMode mode, TypeSerializerSnapshot serializer,
                      std::unique_ptr<detail::OperatorStateBase> state);

  std::map<std::string, Registered> states_;
  std::map<std::string, SerializedOperatorState> pending_;  // restored, not yet registered
  bool restored_ = false;
};

// Byte-string list states (sources' enumerator state, sinks' writer state) are in every job: compiled once, in the
// state library, instead of in every program (docs/benchmarks.md "Build time").
extern template class detail::OperatorListState<std::vector<uint8_t>>;
extern template ListState<std::vector<uint8_t>>& OperatorStateStore::get_list<std::vector<uint8_t>>(
    const std::string&, OperatorStateMode);

}  // namespace sluice
