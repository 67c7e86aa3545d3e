// The RocksDB backend's states with time-to-live (state_ttl_config.h). Implementation header of
// EmbeddedRocksDBStateBackend; users do not include it. States without TTL never see this code (the backend
// picks these classes at registration).
//
// Stored bytes are TtlValue's: [timestamp: 8 bytes LE][value] for Value, Reducing, Aggregating and each map
// entry's value; a list is such elements back to back (add is still a merge that appends [now][element]).
// The semantics are those of heap_ttl_states.h: expired values are invisible (kNeverReturnExpired) and removed
// by the read that finds them; kOnReadAndWrite rewrites the timestamp on reads. Background cleanup is RocksDB's
// compaction filter (rocksdb_ttl_compaction_filter.h), not these classes.
//
// Errors: as rocksdb_states.h. Thread-safety: none (task thread).
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/detail/state/rocksdb/rocksdb_states.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice {
namespace detail {

// The TTL side of one RocksDB state: config and clock.
class RocksDBTtl {
 public:
  RocksDBTtl(const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : config_(config), clock_(std::move(clock)) {}
  const StateTtlConfig& config() const { return config_; }
  int64_t now() const { return clock_->now_ms(); }
  bool expired(int64_t ts, int64_t now) const { return config_.expired(ts, now); }
  // A stored value counts for a read-modify-write (Flink's getUnexpired).
  bool usable(int64_t ts, int64_t now) const { return config_.return_expired() || !expired(ts, now); }

 private:
  StateTtlConfig config_;
  std::shared_ptr<const Clock> clock_;
};

// Appends [ts][value] (TypeSerializer<TtlValue<T>>'s bytes) without building a TtlValue.
template <class T>
void append_ttl_value(std::vector<uint8_t>& buf, const T& value, int64_t ts) {
  DataOutputView(&buf).write_fixed<int64_t>(ts);
  serialize_append(value, buf);
}

// Reads a stored TtlValue<T> at key `key` through the TTL check (Flink's getWithTtlCheckAndUpdate): expired
// -> deleted, returned only with kReturnExpiredIfNotCleanedUp; otherwise refreshed with kOnReadAndWrite.
template <class T, class K, class N>
std::optional<T> rocksdb_ttl_read(const RocksDBStateAccess<K, N>& a, const RocksDBTtl& ttl, std::string_view key) {
  std::string_view bytes;
  if (!a.store().get(a.cf(), key, &bytes)) return std::nullopt;
  TtlValue<T> v = a.template decode<TtlValue<T>>(bytes);
  const int64_t now = ttl.now();
  if (ttl.expired(v.last_access_ms, now)) {
    a.store().remove(a.cf(), key);
    return ttl.config().return_expired() ? std::optional<T>(std::move(v.value)) : std::nullopt;
  }
  if (ttl.config().update_on_read()) {
    std::vector<uint8_t>& buf = a.value_buffer();  // the stored bytes with the new timestamp
    buf.assign(bytes.begin(), bytes.end());
    std::memcpy(buf.data(), &now, sizeof(now));
    a.store().put(a.cf(), key, as_bytes_view(buf));
  }
  return std::optional<T>(std::move(v.value));
}

// The stored TtlValue<T> of key `key` if usable for a read-modify-write, else nullopt (no write).
template <class T, class K, class N>
std::optional<T> rocksdb_ttl_usable(const RocksDBStateAccess<K, N>& a, const RocksDBTtl& ttl, std::string_view key,
                                    int64_t now) {
  std::string_view bytes;
  if (!a.store().get(a.cf(), key, &bytes)) return std::nullopt;
  TtlValue<T> v = a.template decode<TtlValue<T>>(bytes);
  if (!ttl.usable(v.last_access_ms, now)) return std::nullopt;
  return std::optional<T>(std::move(v.value));
}

// merge_namespaces of value-like TTL states: the usable values of sources and target folded with
// combine(T& acc, T&& more), stamped now; the sources are deleted.
template <class T, class K, class N, class Combine>
void rocksdb_ttl_merge(const RocksDBStateAccess<K, N>& a, const RocksDBTtl& ttl, const N& target,
                       const std::vector<N>& sources, Combine&& combine) {
  const int64_t now = ttl.now();
  std::optional<T> merged;
  for (const N& src : sources) {
    std::optional<T> v = rocksdb_ttl_usable<T>(a, ttl, a.key_in(src), now);
    a.store().remove(a.cf(), a.key_in(src));
    if (!v) continue;
    if (merged) {
      combine(*merged, std::move(*v));
    } else {
      merged = std::move(v);
    }
  }
  if (!merged) return;
  std::optional<T> t = rocksdb_ttl_usable<T>(a, ttl, a.key_in(target), now);
  if (t) {
    combine(*t, std::move(*merged));
    merged = std::move(t);
  }
  std::vector<uint8_t>& buf = a.value_buffer();
  append_ttl_value(buf, *merged, now);
  a.store().put(a.cf(), a.key_in(target), as_bytes_view(buf));
}

}  // namespace detail

template <class K, class N, class T>
class RocksDBTtlValueState final : public InternalValueState<N, T> {
 public:
  RocksDBTtlValueState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                       const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : a_(ctx, store, cf, std::move(name)), ttl_(config, std::move(clock)) {}
  std::optional<T> value() const override { return detail::rocksdb_ttl_read<T>(a_, ttl_, a_.key()); }
  void update(T value) override {
    const std::string_view key = a_.key();
    std::vector<uint8_t>& buf = a_.value_buffer();
    detail::append_ttl_value(buf, value, ttl_.now());
    a_.store().put(a_.cf(), key, as_bytes_view(buf));
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

 private:
  RocksDBStateAccess<K, N> a_;
  detail::RocksDBTtl ttl_;
};

// Elements expire individually: get() drops the expired ones (rewriting the list), add() appends by merge.
template <class K, class N, class T>
class RocksDBTtlListState final : public InternalListState<N, T> {
 public:
  RocksDBTtlListState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                      const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : a_(ctx, store, cf, std::move(name)), ttl_(config, std::move(clock)) {}

  std::vector<T> get() const override {
    std::vector<T> out;
    const std::string_view key = a_.key();
    std::string_view v;
    if (!a_.store().get(a_.cf(), key, &v)) return out;
    const int64_t now = ttl_.now();
    const StateTtlConfig& c = ttl_.config();
    bool any_expired = false;
    kept_.clear();
    DataInputView in(v);
    while (!in.at_end()) {
      TtlValue<T> e = TypeSerializer<TtlValue<T>>::deserialize(in);
      if (!in.ok()) [[unlikely]] {
        detail::throw_undecodable_stored_value(a_.name(), v.size(),
                                               TypeSerializer<std::vector<TtlValue<T>>>::snapshot());
      }
      const bool expired = ttl_.expired(e.last_access_ms, now);
      any_expired |= expired;
      if (!expired) detail::append_ttl_value(kept_, e.value, c.update_on_read() ? now : e.last_access_ms);
      if (!expired || c.return_expired()) out.push_back(std::move(e.value));
    }
    if (kept_.empty()) {
      a_.store().remove(a_.cf(), key);
    } else if (any_expired || c.update_on_read()) {
      a_.store().put(a_.cf(), key, as_bytes_view(kept_));
    }
    return out;
  }
  void add(T value) override {
    const std::string_view key = a_.key();
    std::vector<uint8_t>& buf = a_.value_buffer();
    detail::append_ttl_value(buf, value, ttl_.now());
    a_.store().merge(a_.cf(), key, as_bytes_view(buf));
  }
  void add_all(std::vector<T> values) override {
    if (values.empty()) return;
    a_.store().merge(a_.cf(), a_.key(), serialize_elements(values));
  }
  void update(std::vector<T> values) override {
    if (values.empty()) {
      clear();
    } else {
      a_.store().put(a_.cf(), a_.key(), serialize_elements(values));
    }
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

  // target's elements first, then each source's in order; elements keep their timestamps.
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    merged_.clear();
    for (const N& src : sources) {
      std::string_view v;
      if (!a_.store().get(a_.cf(), a_.key_in(src), &v)) continue;
      merged_.insert(merged_.end(), v.begin(), v.end());
      a_.store().remove(a_.cf(), a_.key_in(src));
    }
    if (merged_.empty()) return;
    a_.store().merge(a_.cf(), a_.key_in(target), as_bytes_view(merged_));
  }

 private:
  // Each element as [now][element]. Called after a_.key() (the key stays valid: only value buffers change).
  std::string_view serialize_elements(const std::vector<T>& values) const {
    std::vector<uint8_t>& buf = a_.value_buffer();
    const int64_t now = ttl_.now();
    for (const T& v : values) detail::append_ttl_value(buf, v, now);
    return as_bytes_view(buf);
  }

  RocksDBStateAccess<K, N> a_;
  detail::RocksDBTtl ttl_;
  mutable std::vector<uint8_t> kept_;
  std::vector<uint8_t> merged_;
};

// Entries expire individually; reads drop expired entries.
template <class K, class N, class UK, class UV>
class RocksDBTtlMapState final : public RocksDBMapStateBase<RocksDBTtlMapState<K, N, UK, UV>, K, N, UK, UV> {
  using Base = RocksDBMapStateBase<RocksDBTtlMapState<K, N, UK, UV>, K, N, UK, UV>;
  friend Base;
  using Base::a_;

 public:
  RocksDBTtlMapState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                     const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : Base(ctx, store, cf, std::move(name)), ttl_(config, std::move(clock)) {}

  std::optional<UV> get(const UK& key) const override {
    return detail::rocksdb_ttl_read<UV>(a_, ttl_, a_.user_key(key));
  }
  void put(UK key, UV value) override { put_one(key, value, ttl_.now()); }
  void put_all(std::vector<std::pair<UK, UV>> entries) override {
    const int64_t now = ttl_.now();
    for (const auto& [k, v] : entries) put_one(k, v, now);
  }
  bool contains(const UK& key) const override { return get(key).has_value(); }
  bool is_empty() const override {
    bool any = false;
    visit([&](UK&&, UV&&) { any = true; });
    return !any;
  }

 private:
  void put_one(const UK& key, const UV& value, int64_t now) {
    const std::string_view k = a_.user_key(key);
    std::vector<uint8_t>& buf = a_.value_buffer();
    detail::append_ttl_value(buf, value, now);
    a_.store().put(a_.cf(), k, as_bytes_view(buf));
  }
  // fn(UK&&, UV&&) for every visible entry. Chunk by chunk: the chunk's deletions of expired entries and
  // refreshes (kOnReadAndWrite) are written before fn sees its entries, so what fn writes to the map is never
  // overwritten by them.
  template <class F>
  void visit(F&& fn) const {
    const int64_t now = ttl_.now();
    const StateTtlConfig& c = ttl_.config();
    std::vector<std::pair<UK, UV>> visible;
    std::vector<uint8_t> refreshed;
    this->for_each_chunk([&](const std::vector<std::pair<std::string, std::string>>& chunk, size_t prefix_len) {
      RocksDBStore::WriteBatch batch(a_.store());
      visible.clear();
      for (const auto& [key, value] : chunk) {
        TtlValue<UV> v = a_.template decode<TtlValue<UV>>(value);
        const bool expired = ttl_.expired(v.last_access_ms, now);
        if (expired) {
          batch.remove(a_.cf(), key);
        } else if (c.update_on_read()) {
          refreshed.assign(value.begin(), value.end());
          std::memcpy(refreshed.data(), &now, sizeof(now));
          batch.put(a_.cf(), key, as_bytes_view(refreshed));
        }
        if (!expired || c.return_expired()) {
          visible.emplace_back(a_.template decode<UK>(std::string_view(key).substr(prefix_len)), std::move(v.value));
        }
      }
      if (batch.count() > 0) a_.store().write(batch);
      for (auto& [k, v] : visible) fn(std::move(k), std::move(v));
    });
  }

  detail::RocksDBTtl ttl_;
};

template <class K, class N, class T>
class RocksDBTtlReducingState final : public InternalReducingState<N, T> {
 public:
  using Reduce = std::function<T(const T&, const T&)>;
  RocksDBTtlReducingState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                          Reduce reduce, const StateTtlConfig& config, std::shared_ptr<const Clock> clock)
      : a_(ctx, store, cf, std::move(name)), ttl_(config, std::move(clock)), reduce_(std::move(reduce)) {}
  std::optional<T> get() const override { return detail::rocksdb_ttl_read<T>(a_, ttl_, a_.key()); }
  // An expired accumulator is replaced (kept and reduced into with kReturnExpiredIfNotCleanedUp, as Flink).
  void add(T value) override {
    const int64_t now = ttl_.now();
    std::optional<T> cur = detail::rocksdb_ttl_usable<T>(a_, ttl_, a_.key(), now);
    std::vector<uint8_t>& buf = a_.value_buffer();
    detail::append_ttl_value(buf, cur ? reduce_(*cur, value) : value, now);
    a_.store().put(a_.cf(), a_.key(), as_bytes_view(buf));
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    detail::rocksdb_ttl_merge<T>(a_, ttl_, target, sources, [this](T& acc, T&& more) { acc = reduce_(acc, more); });
  }

 private:
  RocksDBStateAccess<K, N> a_;
  detail::RocksDBTtl ttl_;
  Reduce reduce_;
};

template <class K, class N, class IN, class ACC, class OUT>
class RocksDBTtlAggregatingState final : public InternalAggregatingState<N, IN, ACC, OUT> {
 public:
  using Function = AggregateFunction<IN, ACC, OUT>;
  RocksDBTtlAggregatingState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                             std::shared_ptr<const Function> fn, const StateTtlConfig& config,
                             std::shared_ptr<const Clock> clock)
      : a_(ctx, store, cf, std::move(name)), ttl_(config, std::move(clock)), fn_(std::move(fn)) {}
  std::optional<OUT> get() const override {
    std::optional<ACC> acc = detail::rocksdb_ttl_read<ACC>(a_, ttl_, a_.key());
    return acc ? std::optional<OUT>(fn_->get_result(*acc)) : std::nullopt;
  }
  void add(const IN& value) override {
    const int64_t now = ttl_.now();
    std::optional<ACC> acc = detail::rocksdb_ttl_usable<ACC>(a_, ttl_, a_.key(), now);
    if (!acc) acc = fn_->create_accumulator();
    fn_->add(value, *acc);
    std::vector<uint8_t>& buf = a_.value_buffer();
    detail::append_ttl_value(buf, *acc, now);
    a_.store().put(a_.cf(), a_.key(), as_bytes_view(buf));
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    detail::rocksdb_ttl_merge<ACC>(a_, ttl_, target, sources, [this](ACC& acc, ACC&& more) { fn_->merge(acc, more); });
  }

 private:
  RocksDBStateAccess<K, N> a_;
  detail::RocksDBTtl ttl_;
  std::shared_ptr<const Function> fn_;
};

}  // namespace sluice
