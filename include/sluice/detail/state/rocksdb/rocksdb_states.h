// The RocksDB backend's state objects: typed views of one column family at the backend's current key and the
// state's current namespace. Implementation header of EmbeddedRocksDBStateBackend; users do not include it.
//
// Each access serializes [key group][key][namespace] into a buffer the state keeps (the namespace is
// serialized once, when it is set), then makes one RocksDBStore call. Values are serialized into and read from
// reused buffers too, so a read-modify-write of a fixed-size value allocates nothing in steady state (RocksDB's
// own write path aside). Reads decode copies, as state.h requires.
//
// Errors: no current key -> std::logic_error; a RocksDB failure -> RocksDBError; stored bytes that do not
// decode (a damaged local database) -> RocksDBError naming the state.
// Thread-safety: none (task thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/detail/state/rocksdb/rocksdb_key_layout.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/aggregate_function.h"
#include "sluice/state/internal_kv_state.h"

namespace sluice {

template <class K>
struct CurrentKeyContext;

namespace detail {
[[noreturn]] void throw_no_current_key();
[[noreturn]] void throw_undecodable_stored_value(const std::string& state, size_t size_bytes,
                                                 const TypeSerializerSnapshot& type);

// MapState iteration reads the entries in chunks of this many (Flink's RocksDB map iterator caches 128), each
// with an iterator closed before user code sees the chunk: user code never runs while a RocksDB iterator is
// open, so its writes never wait on memory that iterator pins (the shared write-buffer manager stalls writes
// until flushes free memory, and an open iterator keeps flushed memtables alive), and writes it makes to the map
// are never overwritten by the iteration's own (TTL refreshes).
inline constexpr size_t kMapIterationChunk = 128;

// Reads up to kMapIterationChunk entries of column family cf in [*lower, upper) into *out (raw key and value
// bytes; cleared first) and moves *lower past the last one. False when the range held no more entries.
// Throws RocksDBError if the iteration fails.
inline bool read_map_chunk(const RocksDBStore& store, int32_t cf, std::string* lower, std::string_view upper,
                           std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  auto it = store.new_iterator(cf, *lower, upper);
  for (; it->valid() && out->size() < kMapIterationChunk; it->next()) out->emplace_back(it->key(), it->value());
  if (!it->valid()) {
    Status st = it->status();
    if (!st.is_ok()) [[unlikely]] throw RocksDBError(st.to_string());
  }
  if (out->empty()) return false;
  lower->assign(out->back().first);
  lower->push_back('\0');  // the smallest key after the last one read
  return true;
}
}  // namespace detail

// Shared plumbing of the RocksDB states: key context, store, column family, current namespace, buffers.
template <class K, class N>
class RocksDBStateAccess {
 public:
  RocksDBStateAccess(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name)
      : ctx_(ctx), store_(store), cf_(cf), name_(std::move(name)) {
    set_namespace(N{});
  }

  RocksDBStore& store() const { return *store_; }
  int32_t cf() const { return cf_; }
  const std::string& name() const { return name_; }

  void set_namespace(const N& ns) {
    ns_ = ns;
    ns_bytes_.clear();
    serialize_append(ns_, ns_bytes_);
  }
  const N& ns() const { return ns_; }

  // [kg][key][current namespace]; valid until the next key*() call on this state.
  std::string_view key() const {
    build(ns_bytes_);
    return as_bytes_view(key_);
  }
  // [kg][key][ns] for another namespace (merge_namespaces).
  std::string_view key_in(const N& ns) const {
    other_ns_.clear();
    serialize_append(ns, other_ns_);
    build(other_ns_);
    return as_bytes_view(key_);
  }
  // [kg][key][current namespace][user key] (MapState entries).
  template <class UK>
  std::string_view user_key(const UK& uk) const {
    build(ns_bytes_);
    serialize_append(uk, key_);
    return as_bytes_view(key_);
  }
  // The byte length of key() (a map's prefix: user keys follow it).
  size_t key_size() const { return key_.size(); }

  // An empty buffer to serialize a value into.
  std::vector<uint8_t>& value_buffer() const {
    value_.clear();
    return value_;
  }

  template <class T>
  T decode(std::string_view bytes) const {
    DataInputView in(bytes);
    T v = TypeSerializer<T>::deserialize(in);
    if (!in.ok() || !in.at_end()) [[unlikely]] {
      detail::throw_undecodable_stored_value(name_, bytes.size(), TypeSerializer<T>::snapshot());
    }
    return v;
  }

  template <class T>
  std::optional<T> get_as() const {
    std::string_view v;
    if (!store_->get(cf_, key(), &v)) return std::nullopt;
    return decode<T>(v);
  }
  template <class T>
  std::optional<T> get_as_in(const N& ns) const {
    std::string_view v;
    if (!store_->get(cf_, key_in(ns), &v)) return std::nullopt;
    return decode<T>(v);
  }
  template <class T>
  void put(std::string_view key, const T& value) const {
    std::vector<uint8_t>& buf = value_buffer();
    serialize_append(value, buf);
    store_->put(cf_, key, as_bytes_view(buf));
  }

 private:
  void build(const std::vector<uint8_t>& ns_bytes) const {
    const int32_t kg = ctx_->key_group;
    if (ctx_->key_group_index < 0) [[unlikely]] detail::throw_no_current_key();
    key_.clear();
    rocksdb_layout::append_key_group(key_, kg);
    serialize_append(ctx_->key, key_);
    key_.insert(key_.end(), ns_bytes.begin(), ns_bytes.end());
  }

  const CurrentKeyContext<K>* ctx_;
  RocksDBStore* store_;
  int32_t cf_;
  std::string name_;
  N ns_{};
  std::vector<uint8_t> ns_bytes_;
  mutable std::vector<uint8_t> key_;
  mutable std::vector<uint8_t> other_ns_;
  mutable std::vector<uint8_t> value_;
};

template <class K, class N, class T>
class RocksDBValueState final : public InternalValueState<N, T> {
 public:
  RocksDBValueState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name)
      : a_(ctx, store, cf, std::move(name)) {}
  std::optional<T> value() const override { return a_.template get_as<T>(); }
  void update(T value) override { a_.put(a_.key(), value); }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

 private:
  RocksDBStateAccess<K, N> a_;
};

template <class K, class N, class T>
class RocksDBListState final : public InternalListState<N, T> {
 public:
  RocksDBListState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name)
      : a_(ctx, store, cf, std::move(name)) {}

  std::vector<T> get() const override {
    std::vector<T> out;
    std::string_view v;
    if (!a_.store().get(a_.cf(), a_.key(), &v)) return out;
    DataInputView in(v);
    while (!in.at_end()) {
      out.push_back(TypeSerializer<T>::deserialize(in));
      if (!in.ok()) [[unlikely]] {
        detail::throw_undecodable_stored_value(a_.name(), v.size(), TypeSerializer<std::vector<T>>::snapshot());
      }
    }
    return out;
  }
  void add(T value) override {
    std::vector<uint8_t>& buf = a_.value_buffer();
    serialize_append(value, buf);
    a_.store().merge(a_.cf(), a_.key(), as_bytes_view(buf));
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

  // target's elements first, then each source's in order (as the heap backend).
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
  std::string_view serialize_elements(const std::vector<T>& values) const {
    std::vector<uint8_t>& buf = a_.value_buffer();
    DataOutputView out(&buf);
    for (const T& v : values) TypeSerializer<T>::serialize(v, out);
    return as_bytes_view(buf);
  }

  RocksDBStateAccess<K, N> a_;
  std::vector<uint8_t> merged_;
};

// What the RocksDB map states (plain and TTL) share: the whole-map views built on the derived class's
// visit(fn(UK&&, UV&&)), which decides what an entry is (plain, or a TtlValue that may be expired), plus removal,
// clear and the namespace. CRTP, so a visit stays a template (no std::function per entry).
template <class Derived, class K, class N, class UK, class UV>
class RocksDBMapStateBase : public InternalMapState<N, UK, UV> {
 public:
  void remove(const UK& key) override { a_.store().remove(a_.cf(), a_.user_key(key)); }
  std::vector<std::pair<UK, UV>> entries() const override {
    std::vector<std::pair<UK, UV>> out;
    derived().visit([&](UK&& k, UV&& v) { out.emplace_back(std::move(k), std::move(v)); });
    return out;
  }
  std::vector<UK> keys() const override {
    std::vector<UK> out;
    derived().visit([&](UK&& k, UV&&) { out.push_back(std::move(k)); });
    return out;
  }
  std::vector<UV> values() const override {
    std::vector<UV> out;
    derived().visit([&](UK&&, UV&& v) { out.push_back(std::move(v)); });
    return out;
  }
  void for_each(const std::function<void(const UK&, const UV&)>& fn) const override {
    derived().visit([&](UK&& k, UV&& v) { fn(k, v); });
  }
  void clear() override {
    RocksDBStore::WriteBatch batch(a_.store());
    auto it = scan();
    for (; it->valid(); it->next()) batch.remove(a_.cf(), it->key());
    check(it->status());
    if (batch.count() > 0) a_.store().write(batch);
  }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }

 protected:
  RocksDBMapStateBase(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name)
      : a_(ctx, store, cf, std::move(name)) {}

  // The user keys of the current (key, namespace): keys with its prefix. Iterated in byte order of the user
  // keys' serialized form (state.h leaves the order unspecified).
  std::unique_ptr<RocksDBStore::Iterator> scan() const {
    const std::string_view prefix = a_.key();
    rocksdb_layout::prefix_successor(prefix, &upper_);
    return a_.store().new_iterator(a_.cf(), prefix, upper_);
  }
  // chunk_fn(chunk, prefix_len) for each chunk of the current (key, namespace)'s raw entries
  // (detail::kMapIterationChunk), each read with an iterator that is closed before chunk_fn runs; a raw key's
  // first prefix_len bytes are the (key group, key, namespace) prefix, the rest the serialized user key.
  template <class F>
  void for_each_chunk(F&& chunk_fn) const {
    std::string lower(a_.key()), upper;
    rocksdb_layout::prefix_successor(lower, &upper);
    const size_t prefix_len = lower.size();
    std::vector<std::pair<std::string, std::string>> chunk;  // local: fn may iterate this state again
    while (detail::read_map_chunk(a_.store(), a_.cf(), &lower, upper, &chunk)) chunk_fn(chunk, prefix_len);
  }
  static void check(const Status& s) {
    if (!s.is_ok()) [[unlikely]] throw RocksDBError(s.to_string());
  }

  RocksDBStateAccess<K, N> a_;

 private:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
  mutable std::string upper_;
};

template <class K, class N, class UK, class UV>
class RocksDBMapState final : public RocksDBMapStateBase<RocksDBMapState<K, N, UK, UV>, K, N, UK, UV> {
  using Base = RocksDBMapStateBase<RocksDBMapState<K, N, UK, UV>, K, N, UK, UV>;
  friend Base;
  using Base::a_;

 public:
  RocksDBMapState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name)
      : Base(ctx, store, cf, std::move(name)) {}

  std::optional<UV> get(const UK& key) const override {
    std::string_view v;
    if (!a_.store().get(a_.cf(), a_.user_key(key), &v)) return std::nullopt;
    return a_.template decode<UV>(v);
  }
  void put(UK key, UV value) override { a_.put(a_.user_key(key), value); }
  void put_all(std::vector<std::pair<UK, UV>> entries) override {
    for (const auto& [k, v] : entries) a_.put(a_.user_key(k), v);
  }
  bool contains(const UK& key) const override {
    std::string_view v;
    return a_.store().get(a_.cf(), a_.user_key(key), &v);
  }
  bool is_empty() const override {
    auto it = this->scan();
    if (it->valid()) return false;
    Base::check(it->status());
    return true;
  }

 private:
  template <class F>
  void visit(F&& fn) const {
    this->for_each_chunk([&](const std::vector<std::pair<std::string, std::string>>& chunk, size_t prefix_len) {
      for (const auto& [key, value] : chunk) {
        fn(a_.template decode<UK>(std::string_view(key).substr(prefix_len)), a_.template decode<UV>(value));
      }
    });
  }
};

template <class K, class N, class T>
class RocksDBReducingState final : public InternalReducingState<N, T> {
 public:
  using Reduce = std::function<T(const T&, const T&)>;
  RocksDBReducingState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                       Reduce reduce)
      : a_(ctx, store, cf, std::move(name)), reduce_(std::move(reduce)) {}
  std::optional<T> get() const override { return a_.template get_as<T>(); }
  void add(T value) override {
    std::optional<T> cur = a_.template get_as<T>();
    if (cur) {
      a_.put(a_.key(), reduce_(*cur, value));
    } else {
      a_.put(a_.key(), value);
    }
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  // target = reduce(target, reduce(sources...)) as the heap backend folds them.
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    std::optional<T> merged;
    for (const N& src : sources) {
      std::optional<T> v = a_.template get_as_in<T>(src);
      if (!v) continue;
      a_.store().remove(a_.cf(), a_.key_in(src));
      merged = merged ? reduce_(*merged, *v) : std::move(v);
    }
    if (!merged) return;
    std::optional<T> t = a_.template get_as_in<T>(target);
    a_.put(a_.key_in(target), t ? reduce_(*t, *merged) : *merged);
  }

 private:
  RocksDBStateAccess<K, N> a_;
  Reduce reduce_;
};

template <class K, class N, class IN, class ACC, class OUT>
class RocksDBAggregatingState final : public InternalAggregatingState<N, IN, ACC, OUT> {
 public:
  using Function = AggregateFunction<IN, ACC, OUT>;
  RocksDBAggregatingState(const CurrentKeyContext<K>* ctx, RocksDBStore* store, int32_t cf, std::string name,
                          std::shared_ptr<const Function> fn)
      : a_(ctx, store, cf, std::move(name)), fn_(std::move(fn)) {}
  std::optional<OUT> get() const override {
    std::optional<ACC> acc = a_.template get_as<ACC>();
    return acc ? std::optional<OUT>(fn_->get_result(*acc)) : std::nullopt;
  }
  void add(const IN& value) override {
    std::optional<ACC> acc = a_.template get_as<ACC>();
    if (!acc) acc = fn_->create_accumulator();
    fn_->add(value, *acc);
    a_.put(a_.key(), *acc);
  }
  void clear() override { a_.store().remove(a_.cf(), a_.key()); }
  void set_current_namespace(const N& ns) override { a_.set_namespace(ns); }
  const N& current_namespace() const override { return a_.ns(); }
  void merge_namespaces(const N& target, const std::vector<N>& sources) override {
    std::optional<ACC> merged;
    for (const N& src : sources) {
      std::optional<ACC> v = a_.template get_as_in<ACC>(src);
      if (!v) continue;
      a_.store().remove(a_.cf(), a_.key_in(src));
      if (merged) {
        fn_->merge(*merged, *v);
      } else {
        merged = std::move(v);
      }
    }
    if (!merged) return;
    std::optional<ACC> t = a_.template get_as_in<ACC>(target);
    if (t) fn_->merge(*t, *merged);
    a_.put(a_.key_in(target), t ? *t : *merged);
  }

 private:
  RocksDBStateAccess<K, N> a_;
  std::shared_ptr<const Function> fn_;
};

}  // namespace sluice
