// The keyed and operator states state_snapshot_fuzzer restores into, shared with fuzz/make_corpus.cc, which writes
// their seed snapshots with the backends' own writers: a seed restores only if both sides register the same states.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/state/aggregate_function.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/operator_state_store.h"

namespace sluice::fuzz {

inline constexpr int32_t kMaxParallelism = 128;

struct Window {
  int64_t start = 0;
  bool operator==(const Window&) const = default;
  SLUICE_FIELDS(Window, start)
};

struct Position {
  std::string symbol;
  int64_t quantity = 0;
  std::vector<double> prices;
  std::optional<std::string> note;
  SLUICE_FIELDS(Position, symbol, quantity, prices, note)
};

struct Count final : AggregateFunction<std::string, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const std::string&, int64_t& acc) const override { ++acc; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& t, const int64_t& o) const override { t += o; }
};

struct KeyedStates {
  ValueState<int64_t>* value;
  ListState<std::string>* list;
  MapState<std::string, int64_t>* map;
  ReducingState<int64_t>* reducing;
  AggregatingState<std::string, int64_t>* aggregating;
  InternalValueState<Window, std::string>* windowed;
  ValueState<Position>* position;
  ValueState<int64_t>* ttl_value;
};

// One of each state kind, a namespaced one, a struct (its schema migrates) and one with a time-to-live.
inline KeyedStates register_states(KeyedStateBackend<std::string>& b) {
  ValueStateDescriptor<int64_t> ttl("ttl-value");
  ttl.enable_time_to_live(StateTtlConfig::new_builder(60'000).build());
  return KeyedStates{
      &b.get_state(ValueStateDescriptor<int64_t>("value")),
      &b.get_list_state(ListStateDescriptor<std::string>("list")),
      &b.get_map_state(MapStateDescriptor<std::string, int64_t>("map")),
      &b.get_reducing_state(
          ReducingStateDescriptor<int64_t>("reducing", [](const int64_t& x, const int64_t& y) { return x + y; })),
      &b.get_aggregating_state(
          AggregatingStateDescriptor<std::string, int64_t, int64_t>("aggregating", std::make_shared<Count>())),
      &b.get_internal_state<Window>(ValueStateDescriptor<std::string>("windowed")),
      &b.get_state(ValueStateDescriptor<Position>("position")),
      &b.get_state(ttl),
  };
}

struct OperatorStates {
  ListState<std::string>* splits;
  ListState<int64_t>* offsets;
  MapState<std::string, int64_t>* rules;
};

inline OperatorStates register_operator_states(OperatorStateStore& store) {
  return OperatorStates{
      &store.get_list_state(ListStateDescriptor<std::string>("splits")),
      &store.get_union_list_state(ListStateDescriptor<int64_t>("offsets")),
      &store.get_broadcast_state(MapStateDescriptor<std::string, int64_t>("rules")),
  };
}

}  // namespace sluice::fuzz
