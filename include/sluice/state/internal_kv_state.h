// Internal keyed-state interfaces: the public state interfaces plus a current namespace (Flink's
// InternalKvState / InternalMergingState). Operators use them, users do not.
//
// State lives per (key, namespace). User state uses VoidNamespace (core/serializer.h); window operators use
// the window as namespace: set_current_namespace(window) before accessing the state for that window. The
// namespace of a state object stays set until changed (default: N{}), independently of the current key.
// merge_namespaces folds the contents of `sources` into `target` for the current key and removes the sources
// (merging windows).
//
// Requirements on N: TypeSerializer<N>, default-constructible, copy-assignable, equality consistent with its
// serialized bytes (as for keys; see keyed_state_backend.h).
// Thread-safety: none (task thread).
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/state/state.h"
#include "sluice/state/state_descriptor.h"

namespace sluice {

template <class N>
class NamespacedState {
 public:
  virtual ~NamespacedState() = default;
  virtual void set_current_namespace(const N& ns) = 0;
  virtual const N& current_namespace() const = 0;
};

template <class N>
class MergingState {
 public:
  virtual ~MergingState() = default;
  // For the current key: target = merge(target, sources...); the sources are cleared. The current namespace
  // is unchanged.
  virtual void merge_namespaces(const N& target, const std::vector<N>& sources) = 0;
};

template <class N, class T>
class InternalValueState : public ValueState<T>, public NamespacedState<N> {
 public:
  // Read-modify-write of the current (key, namespace)'s value in one step (Flink's StateTable#transform): `fn`
  // gets the value (nullopt when absent) and leaves the new one in it (nullopt: remove). Returns whether the
  // value was absent. The heap backend does it in place with one lookup when the value exists; this default
  // reads and writes back through value() / update() / clear(), so every implementation (TTL included) is right.
  template <class F>
  bool transform(F&& fn) {
    return transform_erased([](void* f, std::optional<T>& v) { (*static_cast<std::remove_reference_t<F>*>(f))(v); },
                            &fn);
  }

 protected:
  virtual bool transform_erased(void (*fn)(void*, std::optional<T>&), void* fn_ctx) {
    std::optional<T> v = this->value();
    const bool absent = !v.has_value();
    fn(fn_ctx, v);
    if (v) {
      this->update(std::move(*v));
    } else if (!absent) {
      this->clear();
    }
    return absent;
  }
};

template <class N, class T>
class InternalListState : public ListState<T>, public NamespacedState<N>, public MergingState<N> {};

template <class N, class UK, class UV>
class InternalMapState : public MapState<UK, UV>, public NamespacedState<N> {};

template <class N, class T>
class InternalReducingState : public ReducingState<T>, public NamespacedState<N>, public MergingState<N> {};

template <class N, class IN, class ACC, class OUT>
class InternalAggregatingState : public AggregatingState<IN, OUT>, public NamespacedState<N>, public MergingState<N> {
};

// The internal state type a descriptor creates for namespace N.
template <class N, class D>
struct InternalStateOf;
template <class N, class T>
struct InternalStateOf<N, ValueStateDescriptor<T>> {
  using type = InternalValueState<N, T>;
};
template <class N, class T>
struct InternalStateOf<N, ListStateDescriptor<T>> {
  using type = InternalListState<N, T>;
};
template <class N, class UK, class UV>
struct InternalStateOf<N, MapStateDescriptor<UK, UV>> {
  using type = InternalMapState<N, UK, UV>;
};
template <class N, class T>
struct InternalStateOf<N, ReducingStateDescriptor<T>> {
  using type = InternalReducingState<N, T>;
};
template <class N, class IN, class ACC, class OUT>
struct InternalStateOf<N, AggregatingStateDescriptor<IN, ACC, OUT>> {
  using type = InternalAggregatingState<N, IN, ACC, OUT>;
};
template <class N, class D>
using internal_state_t = typename InternalStateOf<N, D>::type;

}  // namespace sluice
