// The heap backend's state objects: typed views of a StateTable at the backend's current key and the
// state's current namespace. Implementation header of HashMapStateBackend; users do not include it.
//
// Each access: read the cached key context (hash, key-group index), pick the key group's StateMap, one
// lookup with the cached hash. Reads copy out; writes go through the StateMap's mutation methods.
// Thread-safety: none.
#pragma once

#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/detail/state/heap/state_map.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/state/internal_kv_state.h"

namespace sluice {

template <class K>
struct CurrentKeyContext;

namespace detail {
[[noreturn]] void throw_no_current_key();
}  // namespace detail

// Shared plumbing of the heap states: key context, table, current namespace.
template <class K, class N, class V>
class HeapStateAccess {
 public:
  using Map = StateMap<K, N, V>;

  HeapStateAccess(const CurrentKeyContext<K>* ctx, StateTable<K, N, V>* table) : ctx_(ctx), table_(table) {}

  Map& map() const {
    const int32_t index = ctx_->key_group_index;
    if (index < 0) [[unlikely]] detail::throw_no_current_key();
    return table_->map_at(index);
  }
  const K& key() const { return ctx_->key; }
  const N& ns() const { return ns_; }
  uint64_t hash() const {
    if constexpr (std::is_same_v<N, VoidNamespace>) {
      return ctx_->key_hash;
    } else {
      return detail::combine_key_namespace_hash(ctx_->key_hash, ns_hash_);
    }
  }
  uint64_t hash_in(const N& ns) const {
    return detail::combine_key_namespace_hash(ctx_->key_hash, detail::namespace_hash(ns));
  }
  void set_namespace(const N& ns) {
    ns_ = ns;
    ns_hash_ = detail::namespace_hash(ns);
  }

  const V* find() const { return map().find(key(), ns_, hash()); }
  V* find_for_update() const { return map().find_for_update(key(), ns_, hash()); }
  template <class Make>
  std::pair<V*, bool> find_or_insert(Make&& make) const {
    return map().find_or_insert(key(), ns_, hash(), std::forward<Make>(make));
  }
  template <class U>
  void put(U&& v) const {
    map().put(key(), ns_, hash(), std::forward<U>(v));
  }
  void remove() const { map().remove(key(), ns_, hash()); }

  // For the current key: takes the values of `sources` out and folds them with merge(acc, value) into the
  // value of `target` (inserted if absent). Used by the merging states.
  template <class Merge>
  void merge_namespaces(const N& target, const std::vector<N>& sources, Merge&& merge) const {
    Map& m = map();
    std::optional<V> merged;
    for (const N& src : sources) {
      std::optional<V> v = m.take(key(), src, hash_in(src));
      if (!v) continue;
      if (merged) {
        merge(*merged, std::move(*v));
      } else {
        merged = std::move(v);
      }
    }
    if (!merged) return;
    auto [slot, inserted] = m.find_or_insert(key(), target, hash_in(target), [&] { return std::move(*merged); });
    if (!inserted) merge(*slot, std::move(*merged));
  }

 private:
  const CurrentKeyContext<K>* ctx_;
  StateTable<K, N, V>* table_;
  N ns_{};
  uint64_t ns_hash_ = detail::namespace_hash(N{});
};

template <class K, class N, class T>
class HeapValueState final : public InternalValueState<N, T> {
 public:
  HeapValueState(const CurrentKeyContext<K>* ctx, StateTable<K, N, T>* table) : a_(ctx, table) {}
  std::optional<T> value() const override {
    const T* v = a_.find();
    return v ? std::optional<T>(*v) : std::nullopt;
  }
  void update(T value) override { a_.put(std::move(value)); }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

 protected:
  bool transform_erased(void (*fn)(void*, std::optional<T>&), void* fn_ctx) override {
    if (T* cur = a_.find_for_update()) {
      std::optional<T> v(std::move(*cur));
      fn(fn_ctx, v);
      if (v) {
        *cur = std::move(*v);
      } else {
        a_.remove();
      }
      return false;
    }
    std::optional<T> v;
    fn(fn_ctx, v);
    if (v) a_.put(std::move(*v));
    return true;
  }

 private:
  HeapStateAccess<K, N, T> a_;
};

template <class K, class N, class T>
class HeapListState final : public InternalListState<N, T> {
 public:
  using List = std::vector<T>;
  HeapListState(const CurrentKeyContext<K>* ctx, StateTable<K, N, List>* table) : a_(ctx, table) {}
  std::vector<T> get() const override {
    const List* l = a_.find();
    return l ? *l : List{};
  }
  void add(T value) override {
    a_.find_or_insert([] { return List{}; }).first->push_back(std::move(value));
  }
  void add_all(std::vector<T> values) override {
    if (values.empty()) return;
    auto [l, inserted] = a_.find_or_insert([&] { return std::move(values); });
    if (!inserted) l->insert(l->end(), std::make_move_iterator(values.begin()), std::make_move_iterator(values.end()));
  }
  void update(std::vector<T> values) override {
    if (values.empty()) {
      a_.remove();
    } else {
      a_.put(std::move(values));
    }
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  // target's elements first, then each source's in order.
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    a_.merge_namespaces(target, sources, [](List& acc, List&& more) {
      acc.insert(acc.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    });
  }

 private:
  HeapStateAccess<K, N, List> a_;
};

template <class K, class N, class UK, class UV>
class HeapMapState final : public InternalMapState<N, UK, UV> {
 public:
  using Map = HeapMapValue<UK, UV>;
  HeapMapState(const CurrentKeyContext<K>* ctx, StateTable<K, N, Map>* table) : a_(ctx, table) {}

  std::optional<UV> get(const UK& key) const override {
    const Map* m = a_.find();
    if (m == nullptr) return std::nullopt;
    auto it = m->find(key);
    return it == m->end() ? std::nullopt : std::optional<UV>(it->second);
  }
  void put(UK key, UV value) override {
    a_.find_or_insert([] { return Map{}; }).first->insert_or_assign(std::move(key), std::move(value));
  }
  void put_all(std::vector<std::pair<UK, UV>> entries) override {
    if (entries.empty()) return;
    Map& m = *a_.find_or_insert([] { return Map{}; }).first;
    for (auto& [k, v] : entries) m.insert_or_assign(std::move(k), std::move(v));
  }
  // The (key, namespace) entry goes away with its last user key, so is_empty and num_entries stay exact.
  void remove(const UK& key) override {
    Map* m = a_.find_for_update();
    if (m == nullptr) return;
    m->erase(key);
    if (m->empty()) a_.remove();
  }
  bool contains(const UK& key) const override {
    const Map* m = a_.find();
    return m != nullptr && m->find(key) != m->end();
  }
  bool is_empty() const override {
    const Map* m = a_.find();
    return m == nullptr || m->empty();
  }
  std::vector<std::pair<UK, UV>> entries() const override {
    std::vector<std::pair<UK, UV>> out;
    if (const Map* m = a_.find()) out.assign(m->begin(), m->end());
    return out;
  }
  std::vector<UK> keys() const override {
    std::vector<UK> out;
    if (const Map* m = a_.find()) {
      out.reserve(m->size());
      for (const auto& [k, v] : *m) out.push_back(k);
    }
    return out;
  }
  std::vector<UV> values() const override {
    std::vector<UV> out;
    if (const Map* m = a_.find()) {
      out.reserve(m->size());
      for (const auto& [k, v] : *m) out.push_back(v);
    }
    return out;
  }
  void for_each(const std::function<void(const UK&, const UV&)>& fn) const override {
    if (const Map* m = a_.find()) {
      for (const auto& [k, v] : *m) fn(k, v);
    }
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

 private:
  HeapStateAccess<K, N, Map> a_;
};

template <class K, class N, class T>
class HeapReducingState final : public InternalReducingState<N, T> {
 public:
  using Reduce = std::function<T(const T&, const T&)>;
  HeapReducingState(const CurrentKeyContext<K>* ctx, StateTable<K, N, T>* table, Reduce reduce)
      : a_(ctx, table), reduce_(std::move(reduce)) {}
  std::optional<T> get() const override {
    const T* v = a_.find();
    return v ? std::optional<T>(*v) : std::nullopt;
  }
  void add(T value) override {
    // The factory runs (and moves value) only when the entry is new.
    auto [cur, inserted] = a_.find_or_insert([&] { return std::move(value); });
    if (!inserted) *cur = reduce_(*cur, value);
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    a_.merge_namespaces(target, sources, [this](T& acc, T&& more) { acc = reduce_(acc, more); });
  }

 private:
  HeapStateAccess<K, N, T> a_;
  Reduce reduce_;
};

template <class K, class N, class IN, class ACC, class OUT>
class HeapAggregatingState final : public InternalAggregatingState<N, IN, ACC, OUT> {
 public:
  using Function = AggregateFunction<IN, ACC, OUT>;
  HeapAggregatingState(const CurrentKeyContext<K>* ctx, StateTable<K, N, ACC>* table,
                       std::shared_ptr<const Function> fn)
      : a_(ctx, table), fn_(std::move(fn)) {}
  std::optional<OUT> get() const override {
    const ACC* acc = a_.find();
    return acc ? std::optional<OUT>(fn_->get_result(*acc)) : std::nullopt;
  }
  void add(const IN& value) override {
    ACC* acc = a_.find_or_insert([this] { return fn_->create_accumulator(); }).first;
    fn_->add(value, *acc);
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    a_.merge_namespaces(target, sources, [this](ACC& acc, ACC&& more) { fn_->merge(acc, more); });
  }

 private:
  HeapStateAccess<K, N, ACC> a_;
  std::shared_ptr<const Function> fn_;
};

}  // namespace sluice
