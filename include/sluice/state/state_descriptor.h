// State descriptors: the name and types of a keyed state, passed to KeyedStateBackend::get_*_state (Flink's
// StateDescriptor family). Values are serialized with TypeSerializer<T> (core/serializer.h) in snapshots.
//
// The name identifies the state within one operator: it is the key under which the state is snapshotted and
// restored, so renaming a state loses its restored contents. Registering a name twice returns the same
// state; registering it with another kind or type throws StatusError (see keyed_state_backend.h).
// Every kind can have a time-to-live (enable_time_to_live; state_ttl_config.h); a state with TTL stores and
// snapshots TtlValue<...> (value + last-access timestamp), so TTL is part of its registered type.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/state/aggregate_function.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice {

// The kind of a keyed state. The numeric values are part of the snapshot format: never renumber.
enum class StateKind : uint8_t {
  kValue = 1,
  kList = 2,
  kMap = 3,
  kReducing = 4,
  kAggregating = 5,
  // Timers (timer_queue.h): entries (key, namespace, timestamp), several per (key, namespace).
  kPriorityQueue = 6,
};

// "ValueState", "ListState", ...; "UnknownState" for values outside the enum.
std::string_view state_kind_name(StateKind kind);
bool is_valid_state_kind(uint8_t raw);

// Common part: the state's name and time-to-live.
class StateDescriptor {
 public:
  explicit StateDescriptor(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // Gives the state a time-to-live (Flink's enableTimeToLive). Call before the state is registered; a config
  // with UpdateType::kDisabled turns TTL off. Default: disabled.
  void enable_time_to_live(const StateTtlConfig& config) { ttl_ = config; }
  const StateTtlConfig& ttl_config() const { return ttl_; }

 private:
  std::string name_;
  StateTtlConfig ttl_;
};

// A single value per (key, namespace).
template <class T>
class ValueStateDescriptor : public StateDescriptor {
 public:
  using value_type = T;
  static constexpr StateKind kKind = StateKind::kValue;
  using StateDescriptor::StateDescriptor;
  // Serializer snapshots of what is stored per (key, namespace), as written in snapshots.
  static std::vector<TypeSerializerSnapshot> value_serializer_snapshots() { return {TypeSerializer<T>::snapshot()}; }
};

// A list of elements per (key, namespace).
template <class T>
class ListStateDescriptor : public StateDescriptor {
 public:
  using element_type = T;
  static constexpr StateKind kKind = StateKind::kList;
  using StateDescriptor::StateDescriptor;
  static std::vector<TypeSerializerSnapshot> value_serializer_snapshots() { return {TypeSerializer<T>::snapshot()}; }
};

// A map UK -> UV per (key, namespace).
template <class UK, class UV>
class MapStateDescriptor : public StateDescriptor {
 public:
  using user_key_type = UK;
  using user_value_type = UV;
  static constexpr StateKind kKind = StateKind::kMap;
  using StateDescriptor::StateDescriptor;
  static std::vector<TypeSerializerSnapshot> value_serializer_snapshots() {
    return {TypeSerializer<UK>::snapshot(), TypeSerializer<UV>::snapshot()};
  }
};

// One value per (key, namespace) that every add() folds in with reduce_function(stored, added).
template <class T>
class ReducingStateDescriptor : public StateDescriptor {
 public:
  using value_type = T;
  using ReduceFunction = std::function<T(const T&, const T&)>;
  static constexpr StateKind kKind = StateKind::kReducing;
  ReducingStateDescriptor(std::string name, ReduceFunction reduce_function)
      : StateDescriptor(std::move(name)), reduce_(std::move(reduce_function)) {}
  const ReduceFunction& reduce_function() const { return reduce_; }
  static std::vector<TypeSerializerSnapshot> value_serializer_snapshots() { return {TypeSerializer<T>::snapshot()}; }

 private:
  ReduceFunction reduce_;
};

// An accumulator ACC per (key, namespace) fed with IN elements and read as OUT through an AggregateFunction.
// Only ACC is stored (and snapshotted).
template <class IN, class ACC, class OUT>
class AggregatingStateDescriptor : public StateDescriptor {
 public:
  using input_type = IN;
  using accumulator_type = ACC;
  using output_type = OUT;
  using Function = AggregateFunction<IN, ACC, OUT>;
  static constexpr StateKind kKind = StateKind::kAggregating;
  AggregatingStateDescriptor(std::string name, std::shared_ptr<const Function> aggregate_function)
      : StateDescriptor(std::move(name)), fn_(std::move(aggregate_function)) {}
  const std::shared_ptr<const Function>& aggregate_function() const { return fn_; }
  static std::vector<TypeSerializerSnapshot> value_serializer_snapshots() {
    return {TypeSerializer<ACC>::snapshot()};
  }

 private:
  std::shared_ptr<const Function> fn_;
};

}  // namespace sluice
