// The heap backend's states with time-to-live (state_ttl_config.h): the same typed views of a StateTable as
// heap_states.h, over TTL values (TtlValue<T>, std::vector<TtlValue<T>>, HeapMapValue<UK, TtlValue<UV>>).
// Implementation header of HashMapStateBackend; users do not include it. States without TTL never see this
// code: the backend picks these classes at registration, so they pay nothing per access.
//
// Per access: one clock read, the lookup of heap_states.h, and with incremental cleanup a bounded sweep of
// cleanup_size entries of the same state (HeapTtlCleanup). Reads that refresh the timestamp
// (kOnReadAndWrite) or drop expired parts write through the copy-on-write path like any write.
// Thread-safety: none (task thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/detail/state/heap/heap_states.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice {

// The TTL side of one heap state: config, clock and the incremental-cleanup cursor over its key groups.
template <class K, class N, class V>
class HeapTtlCleanup {
 public:
  HeapTtlCleanup(StateTable<K, N, V>* table, const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : table_(table), config_(config), clock_(std::move(clock)) {
    if (auto inc = config.incremental_cleanup()) cleanup_size_ = static_cast<size_t>(inc->cleanup_size);
  }

  const StateTtlConfig& config() const { return config_; }
  int64_t now() const { return clock_->now_ms(); }
  bool expired(int64_t last_access_ms, int64_t now_ms) const { return config_.expired(last_access_ms, now_ms); }

  // Every state access: reads the clock once (the access's time, returned) and runs the incremental cleanup
  // step, if configured.
  int64_t on_access() {
    const int64_t now_ms = now();
    if (cleanup_size_ > 0) run(cleanup_size_, now_ms);
    return now_ms;
  }
  // Checks at least `entries` entries (or every key group once) from where the last step stopped and removes
  // what is expired at now_ms: whole values, list elements, map entries.
  void run(size_t entries, int64_t now_ms) {
    const int32_t groups = table_->num_key_groups();
    if (groups == 0) return;
    const int64_t ttl = config_.ttl_ms();
    size_t visited = 0;
    for (int32_t lap = 0; lap <= groups && visited < entries; ++lap) {
      auto& map = table_->map_at(group_);
      visited += map.cleanup_step(
          &bucket_, entries - visited,
          [&](const V& v) { return detail::TtlStored<V>::any_expired(v, ttl, now_ms); },
          [&](V& v) { return detail::TtlStored<V>::remove_expired(v, ttl, now_ms); });
      if (bucket_ >= map.bucket_count()) {
        bucket_ = 0;
        group_ = group_ + 1 == groups ? 0 : group_ + 1;
      }
    }
  }

 private:
  StateTable<K, N, V>* table_;
  StateTtlConfig config_;
  std::shared_ptr<const Clock> clock_;
  size_t cleanup_size_ = 0;  // 0: no incremental cleanup
  int32_t group_ = 0;        // cursor: key-group index and bucket
  size_t bucket_ = 0;
};

namespace detail {

// Value-like TTL states (Value, Reducing, Aggregating): the stored TtlValue<T> after the TTL check of a read
// (Flink's getWithTtlCheckAndUpdate): expired -> removed, returned only with kReturnExpiredIfNotCleanedUp;
// otherwise refreshed with kOnReadAndWrite. Returns a copy of the value or nullopt.
template <class K, class N, class T>
std::optional<T> heap_ttl_read(const HeapStateAccess<K, N, TtlValue<T>>& a,
                               HeapTtlCleanup<K, N, TtlValue<T>>& ttl) {
  const int64_t now = ttl.on_access();
  const TtlValue<T>* v = a.find();
  if (v == nullptr) return std::nullopt;
  if (ttl.expired(v->last_access_ms, now)) {
    std::optional<T> out = ttl.config().return_expired() ? std::optional<T>(v->value) : std::nullopt;
    a.remove();
    return out;
  }
  std::optional<T> out(v->value);
  if (ttl.config().update_on_read()) a.find_for_update()->last_access_ms = now;
  return out;
}

// The stored value if it counts as present for a read-modify-write (Flink's getUnexpired): not expired, or
// expired but kReturnExpiredIfNotCleanedUp.
template <class T>
bool ttl_usable(const TtlValue<T>& v, const StateTtlConfig& config, int64_t now) {
  return config.return_expired() || !config.expired(v.last_access_ms, now);
}

// merge_namespaces of value-like TTL states: the usable values of the sources and the target are folded with
// combine(T& acc, T&& more), stamped now; unusable (expired) ones are dropped.
template <class K, class N, class T, class Combine>
void heap_ttl_merge(const HeapStateAccess<K, N, TtlValue<T>>& a, HeapTtlCleanup<K, N, TtlValue<T>>& ttl,
                    const N& target, const std::vector<N>& sources, Combine&& combine) {
  const int64_t now = ttl.on_access();
  auto& m = a.map();
  std::optional<TtlValue<T>> merged;
  for (const N& src : sources) {
    std::optional<TtlValue<T>> v = m.take(a.key(), src, a.hash_in(src));
    if (!v || !ttl_usable(*v, ttl.config(), now)) continue;
    if (merged) {
      combine(merged->value, std::move(v->value));
    } else {
      merged = std::move(v);
    }
  }
  if (!merged) return;
  merged->last_access_ms = now;
  auto [slot, inserted] = m.find_or_insert(a.key(), target, a.hash_in(target), [&] { return std::move(*merged); });
  if (inserted) return;
  if (ttl_usable(*slot, ttl.config(), now)) {
    combine(slot->value, std::move(merged->value));
  } else {
    slot->value = std::move(merged->value);
  }
  slot->last_access_ms = now;
}

}  // namespace detail

template <class K, class N, class T>
class HeapTtlValueState final : public InternalValueState<N, T> {
 public:
  using V = TtlValue<T>;
  HeapTtlValueState(const CurrentKeyContext<K>* ctx, StateTable<K, N, V>* table, const StateTtlConfig& config,
                    std::shared_ptr<const Clock> clock)
      : a_(ctx, table), ttl_(table, config, std::move(clock)) {}
  std::optional<T> value() const override { return detail::heap_ttl_read(a_, ttl_); }
  void update(T value) override {
    const int64_t now = ttl_.on_access();
    a_.put(V{std::move(value), now});
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  HeapTtlCleanup<K, N, V>& ttl() const { return ttl_; }

 private:
  HeapStateAccess<K, N, V> a_;
  mutable HeapTtlCleanup<K, N, V> ttl_;
};

// Elements expire individually (each carries its timestamp); get() drops the expired ones.
template <class K, class N, class T>
class HeapTtlListState final : public InternalListState<N, T> {
 public:
  using List = std::vector<TtlValue<T>>;
  HeapTtlListState(const CurrentKeyContext<K>* ctx, StateTable<K, N, List>* table, const StateTtlConfig& config,
                   std::shared_ptr<const Clock> clock)
      : a_(ctx, table), ttl_(table, config, std::move(clock)) {}

  std::vector<T> get() const override {
    const int64_t now = ttl_.on_access();
    std::vector<T> out;
    const List* l = a_.find();
    if (l == nullptr) return out;
    const StateTtlConfig& c = ttl_.config();
    bool any_expired = false;
    out.reserve(l->size());
    for (const auto& e : *l) {
      const bool expired = c.expired(e.last_access_ms, now);
      any_expired |= expired;
      if (!expired || c.return_expired()) out.push_back(e.value);
    }
    if (!any_expired && !c.update_on_read()) return out;
    List* w = a_.find_for_update();
    if (!detail::TtlStored<List>::remove_expired(*w, c.ttl_ms(), now)) {
      a_.remove();
      return out;
    }
    if (c.update_on_read()) {
      for (auto& e : *w) e.last_access_ms = now;
    }
    return out;
  }
  void add(T value) override {
    const int64_t now = ttl_.on_access();
    a_.find_or_insert([] { return List{}; }).first->push_back(TtlValue<T>{std::move(value), now});
  }
  void add_all(std::vector<T> values) override {
    if (values.empty()) return;
    const int64_t now = ttl_.on_access();
    List& l = *a_.find_or_insert([] { return List{}; }).first;
    l.reserve(l.size() + values.size());
    for (T& v : values) l.push_back(TtlValue<T>{std::move(v), now});
  }
  void update(std::vector<T> values) override {
    if (values.empty()) {
      a_.remove();
      return;
    }
    const int64_t now = ttl_.on_access();
    List l;
    l.reserve(values.size());
    for (T& v : values) l.push_back(TtlValue<T>{std::move(v), now});
    a_.put(std::move(l));
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  // target's elements first, then each source's in order; elements keep their timestamps.
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    ttl_.on_access();
    a_.merge_namespaces(target, sources, [](List& acc, List&& more) {
      acc.insert(acc.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    });
  }
  HeapTtlCleanup<K, N, List>& ttl() const { return ttl_; }

 private:
  HeapStateAccess<K, N, List> a_;
  mutable HeapTtlCleanup<K, N, List> ttl_;
};

// Entries expire individually; reads drop expired entries (and the (key, namespace) with its last entry).
template <class K, class N, class UK, class UV>
class HeapTtlMapState final : public InternalMapState<N, UK, UV> {
 public:
  using Map = HeapMapValue<UK, TtlValue<UV>>;
  HeapTtlMapState(const CurrentKeyContext<K>* ctx, StateTable<K, N, Map>* table, const StateTtlConfig& config,
                  std::shared_ptr<const Clock> clock)
      : a_(ctx, table), ttl_(table, config, std::move(clock)) {}

  std::optional<UV> get(const UK& key) const override {
    std::optional<UV> out;
    lookup(key, [&](const UV& v) { out = v; });
    return out;
  }
  void put(UK key, UV value) override {
    const int64_t now = ttl_.on_access();
    a_.find_or_insert([] { return Map{}; }).first->insert_or_assign(std::move(key), TtlValue<UV>{std::move(value), now});
  }
  void put_all(std::vector<std::pair<UK, UV>> entries) override {
    if (entries.empty()) return;
    const int64_t now = ttl_.on_access();
    Map& m = *a_.find_or_insert([] { return Map{}; }).first;
    for (auto& [k, v] : entries) m.insert_or_assign(std::move(k), TtlValue<UV>{std::move(v), now});
  }
  void remove(const UK& key) override {
    ttl_.on_access();
    Map* m = a_.find_for_update();
    if (m == nullptr) return;
    m->erase(key);
    if (m->empty()) a_.remove();
  }
  bool contains(const UK& key) const override {
    return lookup(key, [](const UV&) {});
  }
  bool is_empty() const override {
    bool any = false;
    visit([&](const UK&, const UV&) { any = true; });
    return !any;
  }
  std::vector<std::pair<UK, UV>> entries() const override {
    std::vector<std::pair<UK, UV>> out;
    visit([&](const UK& k, const UV& v) { out.emplace_back(k, v); });
    return out;
  }
  std::vector<UK> keys() const override {
    std::vector<UK> out;
    visit([&](const UK& k, const UV&) { out.push_back(k); });
    return out;
  }
  std::vector<UV> values() const override {
    std::vector<UV> out;
    visit([&](const UK&, const UV& v) { out.push_back(v); });
    return out;
  }
  void for_each(const std::function<void(const UK&, const UV&)>& fn) const override { visit(fn); }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  HeapTtlCleanup<K, N, Map>& ttl() const { return ttl_; }

 private:
  // The TTL check of one entry: calls found(value) and returns true if the entry is visible.
  template <class F>
  bool lookup(const UK& key, F&& found) const {
    const int64_t now = ttl_.on_access();
    const Map* m = a_.find();
    if (m == nullptr) return false;
    auto it = m->find(key);
    if (it == m->end()) return false;
    const StateTtlConfig& c = ttl_.config();
    if (c.expired(it->second.last_access_ms, now)) {
      const bool visible = c.return_expired();
      if (visible) found(it->second.value);
      Map* w = a_.find_for_update();
      w->erase(key);
      if (w->empty()) a_.remove();
      return visible;
    }
    found(it->second.value);
    if (c.update_on_read()) a_.find_for_update()->find(key)->second.last_access_ms = now;
    return true;
  }
  // fn(const UK&, const UV&) for every visible entry; then drops expired entries and refreshes the rest
  // (kOnReadAndWrite). fn must not change this state.
  template <class F>
  void visit(F&& fn) const {
    const int64_t now = ttl_.on_access();
    const Map* m = a_.find();
    if (m == nullptr) return;
    const StateTtlConfig& c = ttl_.config();
    bool any_expired = false;
    for (const auto& [k, e] : *m) {
      const bool expired = c.expired(e.last_access_ms, now);
      any_expired |= expired;
      if (!expired || c.return_expired()) fn(k, e.value);
    }
    if (!any_expired && !c.update_on_read()) return;
    Map* w = a_.find_for_update();
    if (!detail::TtlStored<Map>::remove_expired(*w, c.ttl_ms(), now)) {
      a_.remove();
      return;
    }
    if (c.update_on_read()) {
      for (auto& [k, e] : *w) e.last_access_ms = now;
    }
  }

  HeapStateAccess<K, N, Map> a_;
  mutable HeapTtlCleanup<K, N, Map> ttl_;
};

template <class K, class N, class T>
class HeapTtlReducingState final : public InternalReducingState<N, T> {
 public:
  using V = TtlValue<T>;
  using Reduce = std::function<T(const T&, const T&)>;
  HeapTtlReducingState(const CurrentKeyContext<K>* ctx, StateTable<K, N, V>* table, Reduce reduce,
                       const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : a_(ctx, table), ttl_(table, config, std::move(clock)), reduce_(std::move(reduce)) {}
  std::optional<T> get() const override { return detail::heap_ttl_read(a_, ttl_); }
  // An expired accumulator is replaced (kept and reduced into with kReturnExpiredIfNotCleanedUp, as Flink).
  void add(T value) override {
    const int64_t now = ttl_.on_access();
    auto [cur, inserted] = a_.find_or_insert([&] { return V{std::move(value), now}; });
    if (inserted) return;
    if (detail::ttl_usable(*cur, ttl_.config(), now)) {
      cur->value = reduce_(cur->value, value);
    } else {
      cur->value = std::move(value);
    }
    cur->last_access_ms = now;
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    detail::heap_ttl_merge(a_, ttl_, target, sources, [this](T& acc, T&& more) { acc = reduce_(acc, more); });
  }
  HeapTtlCleanup<K, N, V>& ttl() const { return ttl_; }

 private:
  HeapStateAccess<K, N, V> a_;
  mutable HeapTtlCleanup<K, N, V> ttl_;
  Reduce reduce_;
};

template <class K, class N, class IN, class ACC, class OUT>
class HeapTtlAggregatingState final : public InternalAggregatingState<N, IN, ACC, OUT> {
 public:
  using V = TtlValue<ACC>;
  using Function = AggregateFunction<IN, ACC, OUT>;
  HeapTtlAggregatingState(const CurrentKeyContext<K>* ctx, StateTable<K, N, V>* table,
                          std::shared_ptr<const Function> fn, const StateTtlConfig& config,
                          std::shared_ptr<const Clock> clock)
      : a_(ctx, table), ttl_(table, config, std::move(clock)), fn_(std::move(fn)) {}
  std::optional<OUT> get() const override {
    std::optional<ACC> acc = detail::heap_ttl_read(a_, ttl_);
    return acc ? std::optional<OUT>(fn_->get_result(*acc)) : std::nullopt;
  }
  void add(const IN& value) override {
    const int64_t now = ttl_.on_access();
    auto [cur, inserted] = a_.find_or_insert([&] { return V{fn_->create_accumulator(), now}; });
    if (!inserted && !detail::ttl_usable(*cur, ttl_.config(), now)) cur->value = fn_->create_accumulator();
    fn_->add(value, cur->value);
    cur->last_access_ms = now;
  }
  void clear() override { a_.remove(); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    detail::heap_ttl_merge(a_, ttl_, target, sources, [this](ACC& acc, ACC&& more) { fn_->merge(acc, more); });
  }
  HeapTtlCleanup<K, N, V>& ttl() const { return ttl_; }

 private:
  HeapStateAccess<K, N, V> a_;
  mutable HeapTtlCleanup<K, N, V> ttl_;
  std::shared_ptr<const Function> fn_;
};

}  // namespace sluice
