// The keyed-state interfaces user functions see (Flink's ValueState, ListState, MapState, ReducingState,
// AggregatingState).
//
// Every access is scoped to the backend's current key (set by the runtime before each record) and the
// state's current namespace (VoidNamespace for user state). Reads return copies: nobody ever holds a
// reference into the backend's storage, and all changes go through these methods. The copy-on-write
// snapshots of the heap backend and the serialized storage of RocksDB rely on this.
//
// Errors: accessing state when no current key is set throws std::logic_error (a bug in the caller).
// Thread-safety: none; a state belongs to one task thread, like its backend.
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace sluice {

template <class T>
class ValueState {
 public:
  virtual ~ValueState() = default;
  // A copy of the value, or nullopt if none was set (or it was cleared).
  virtual std::optional<T> value() const = 0;
  virtual void update(T value) = 0;
  virtual void clear() = 0;
};

template <class T>
class ListState {
 public:
  virtual ~ListState() = default;
  // A copy of the elements in insertion order; empty if there are none.
  virtual std::vector<T> get() const = 0;
  virtual void add(T value) = 0;
  virtual void add_all(std::vector<T> values) = 0;
  // Replaces the list; an empty vector clears it.
  virtual void update(std::vector<T> values) = 0;
  virtual void clear() = 0;
};

template <class UK, class UV>
class MapState {
 public:
  virtual ~MapState() = default;
  virtual std::optional<UV> get(const UK& key) const = 0;
  virtual void put(UK key, UV value) = 0;
  virtual void put_all(std::vector<std::pair<UK, UV>> entries) = 0;
  virtual void remove(const UK& key) = 0;
  virtual bool contains(const UK& key) const = 0;
  virtual bool is_empty() const = 0;
  // Copies, in unspecified order.
  virtual std::vector<std::pair<UK, UV>> entries() const = 0;
  virtual std::vector<UK> keys() const = 0;
  virtual std::vector<UV> values() const = 0;
  // Visits every entry without copying. The references are valid only during the call, and fn must not
  // change this state.
  virtual void for_each(const std::function<void(const UK&, const UV&)>& fn) const = 0;
  virtual void clear() = 0;
};

template <class T>
class ReducingState {
 public:
  virtual ~ReducingState() = default;
  // The reduced value, or nullopt if nothing was added since the last clear.
  virtual std::optional<T> get() const = 0;
  // stored = reduce(stored, value), or stored = value if empty.
  virtual void add(T value) = 0;
  virtual void clear() = 0;
};

template <class IN, class OUT>
class AggregatingState {
 public:
  virtual ~AggregatingState() = default;
  // get_result(accumulator), or nullopt if nothing was added since the last clear.
  virtual std::optional<OUT> get() const = 0;
  // Adds to the accumulator (created with create_accumulator() on the first add).
  virtual void add(const IN& value) = 0;
  virtual void clear() = 0;
};

}  // namespace sluice
