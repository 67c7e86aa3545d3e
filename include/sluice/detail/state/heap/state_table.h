// StateTable<K, N, V>: one registered state of the heap backend: a StateMap per key group of the backend's
// range (indexed by key_group - range.start), plus the state's meta info. Implementation header of
// HashMapStateBackend; users do not include it.
//
// V is the stored value type: T for Value/Reducing, std::vector<T> for List, HeapMapValue<UK, UV> for Map,
// ACC for Aggregating. Every V is serialized with TypeSerializer<V>, which gives exactly the canonical value
// bytes of key_group_snapshot.h (the unordered_map serializer writes count + pairs, like std::map's).
//
// States with TTL store TtlValue<T>, std::vector<TtlValue<T>> or HeapMapValue<UK, TtlValue<UV>>
// (detail::TtlStored); with cleanup in full snapshot (set_ttl_snapshot_filter) their expired values are left
// out of snapshots, judged by the clock when the key group is written.
//
// Restore is two-phase so a failing restore changes nothing: stage_key_group decodes into a side map,
// commit_staged swaps it in (or clears the key group when nothing was staged).
//
// snapshot() freezes every key group's map for an asynchronous snapshot (StateTableSnapshot); it must follow
// StateVersions::begin_snapshot() on the task thread.
// Thread-safety: StateTable: task thread only. StateTableSnapshot: read from any one thread at a time while
// its snapshot version is live.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/detail/state/heap/state_map.h"
#include "sluice/detail/state/heap/state_versions.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/state_schema.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice {
namespace detail {

template <class T>
concept HasStdHash = requires(const T& t) {
  requires std::is_default_constructible_v<std::hash<T>>;
  { std::hash<T>{}(t) } -> std::convertible_to<size_t>;
};

// Hash and equality of MapState user keys: std::hash when it exists, else XXH3 of the serialized bytes.
template <class UK>
struct UserKeyHash {
  size_t operator()(const UK& k) const {
    if constexpr (HasStdHash<UK>) {
      return std::hash<UK>{}(k);
    } else {
      return static_cast<size_t>(hash_key(k));
    }
  }
};
template <class UK>
struct UserKeyEqual {
  bool operator()(const UK& a, const UK& b) const { return state_key_equal(a, b); }
};

// Bytes a value owns outside its own object (strings, vectors, maps), roughly; for size estimates.
template <class T>
size_t dynamic_size_bytes(const T& v);

template <class T>
struct DynamicSize {
  static size_t of(const T&) { return 0; }
};
template <>
struct DynamicSize<std::string> {
  static size_t of(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
};
template <class T, class A>
struct DynamicSize<std::vector<T, A>> {
  static size_t of(const std::vector<T, A>& v) {
    size_t n = v.capacity() * sizeof(T);
    if constexpr (!std::is_trivially_copyable_v<T>) {
      for (const auto& e : v) n += dynamic_size_bytes(e);
    }
    return n;
  }
};
template <class K, class V, class H, class E, class A>
struct DynamicSize<std::unordered_map<K, V, H, E, A>> {
  static size_t of(const std::unordered_map<K, V, H, E, A>& m) {
    // libstdc++: one node (next pointer + pair + cached hash) per element, one pointer per bucket.
    size_t n = m.bucket_count() * sizeof(void*) + m.size() * (sizeof(std::pair<const K, V>) + 2 * sizeof(void*));
    if constexpr (!std::is_trivially_copyable_v<K> || !std::is_trivially_copyable_v<V>) {
      for (const auto& [k, v] : m) n += dynamic_size_bytes(k) + dynamic_size_bytes(v);
    }
    return n;
  }
};
template <class T>
struct DynamicSize<TtlValue<T>> {
  static size_t of(const TtlValue<T>& v) { return dynamic_size_bytes(v.value); }
};
template <class T>
size_t dynamic_size_bytes(const T& v) {
  return DynamicSize<T>::of(v);
}

inline std::string_view as_string_view(const std::vector<uint8_t>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Appends `v` as one part of a snapshot entry: varint length + TypeSerializer<T> bytes (the bytes
// KeyGroupSnapshotWriter::append_entry writes), serialized in place, without a temporary buffer.
template <class T>
void append_framed(const T& v, std::vector<uint8_t>& out) {
  if constexpr (std::is_same_v<T, VoidNamespace>) {
    out.push_back(0);
  } else {
    const size_t at = out.size();
    out.push_back(0);  // the length, if it fits one varint byte (< 128), as it nearly always does
    serialize_append(v, out);
    const size_t len = out.size() - at - 1;
    if (len < 0x80) [[likely]] {
      out[at] = static_cast<uint8_t>(len);
      return;
    }
    uint8_t varint[10];
    size_t n = 0;
    for (uint64_t x = len;; x >>= 7) {
      varint[n++] = static_cast<uint8_t>(x >= 0x80 ? (x | 0x80) : x);
      if (x < 0x80) break;
    }
    out[at] = varint[0];
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at + 1), varint + 1, varint + n);
  }
}

// FixedEncoding<T>: for types whose TypeSerializer always writes the same number of bytes by plain copies
// (arithmetic types but bool, enums, and std::array / std::pair / std::tuple / SLUICE_FIELDS structs of such
// types), that size, a writer producing exactly TypeSerializer<T>'s bytes into raw memory and the matching
// reader. Snapshots and restores of such states skip the per-field vector appends and bounds-checked reads
// (state_encoding_test checks the bytes are identical).
template <class T, class Enable = void>
struct FixedEncoding {
  static constexpr bool kFixed = false;
};
template <class T>
struct FixedEncoding<T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = sizeof(T);
  static uint8_t* write(const T& v, uint8_t* p) {
    std::memcpy(p, &v, sizeof(T));  // write_fixed<T>: the value's bytes, host (little-endian) order
    return p + sizeof(T);
  }
  static const uint8_t* read(const uint8_t* p, T& v) {
    std::memcpy(&v, p, sizeof(T));
    return p + sizeof(T);
  }
};
template <class E>
struct FixedEncoding<E, std::enable_if_t<std::is_enum_v<E>>> {
  using U = std::underlying_type_t<E>;
  static constexpr bool kFixed = FixedEncoding<U>::kFixed;
  static constexpr size_t kSize = sizeof(U);
  static uint8_t* write(const E& v, uint8_t* p) { return FixedEncoding<U>::write(static_cast<U>(v), p); }
  static const uint8_t* read(const uint8_t* p, E& v) {
    U u{};
    p = FixedEncoding<U>::read(p, u);
    v = static_cast<E>(u);
    return p;
  }
};
template <>
struct FixedEncoding<VoidNamespace> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = 0;
  static uint8_t* write(const VoidNamespace&, uint8_t* p) { return p; }
  static const uint8_t* read(const uint8_t* p, VoidNamespace&) { return p; }
};
template <class... Ts>
struct FixedEncodingOfAll {
  static constexpr bool kFixed = (FixedEncoding<std::decay_t<Ts>>::kFixed && ...);
  static constexpr size_t size() {
    if constexpr (kFixed) {
      return (size_t{0} + ... + FixedEncoding<std::decay_t<Ts>>::kSize);
    } else {
      return 0;
    }
  }
  template <class Tuple>
  static uint8_t* write(const Tuple& t, uint8_t* p) {
    std::apply([&](const auto&... f) { ((p = FixedEncoding<std::decay_t<decltype(f)>>::write(f, p)), ...); }, t);
    return p;
  }
  template <class Tuple>  // a tuple of values, or of references to the fields to fill
  static const uint8_t* read(const uint8_t* p, Tuple&& t) {
    std::apply([&](auto&... f) { ((p = FixedEncoding<std::decay_t<decltype(f)>>::read(p, f)), ...); }, t);
    return p;
  }
};
template <class T, size_t N>
struct FixedEncoding<std::array<T, N>, std::enable_if_t<FixedEncoding<T>::kFixed>> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = N * FixedEncoding<T>::kSize;
  static uint8_t* write(const std::array<T, N>& v, uint8_t* p) {
    for (const T& e : v) p = FixedEncoding<T>::write(e, p);
    return p;
  }
  static const uint8_t* read(const uint8_t* p, std::array<T, N>& v) {
    for (T& e : v) p = FixedEncoding<T>::read(p, e);
    return p;
  }
};
template <class A, class B>
struct FixedEncoding<std::pair<A, B>, std::enable_if_t<FixedEncodingOfAll<A, B>::kFixed>> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = FixedEncodingOfAll<A, B>::size();
  static uint8_t* write(const std::pair<A, B>& v, uint8_t* p) {
    return FixedEncoding<B>::write(v.second, FixedEncoding<A>::write(v.first, p));
  }
  static const uint8_t* read(const uint8_t* p, std::pair<A, B>& v) {
    return FixedEncoding<B>::read(FixedEncoding<A>::read(p, v.first), v.second);
  }
};
template <class... Ts>
struct FixedEncoding<std::tuple<Ts...>, std::enable_if_t<FixedEncodingOfAll<Ts...>::kFixed>> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = FixedEncodingOfAll<Ts...>::size();
  static uint8_t* write(const std::tuple<Ts...>& v, uint8_t* p) { return FixedEncodingOfAll<Ts...>::write(v, p); }
  static const uint8_t* read(const uint8_t* p, std::tuple<Ts...>& v) { return FixedEncodingOfAll<Ts...>::read(p, v); }
};
template <class Tie>
struct FixedEncodingOfTie;
template <class... Fs>
struct FixedEncodingOfTie<std::tuple<Fs...>> : FixedEncodingOfAll<Fs...> {};
// SLUICE_FIELDS structs: TypeSerializer writes the listed fields in order, nothing else.
template <class T>
struct FixedEncoding<T, std::enable_if_t<HasSluiceFields<T> &&
                                         FixedEncodingOfTie<decltype(std::declval<const T&>().sluice_fields())>::kFixed>> {
  using Fields = FixedEncodingOfTie<decltype(std::declval<const T&>().sluice_fields())>;
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = Fields::size();
  static uint8_t* write(const T& v, uint8_t* p) { return Fields::write(v.sluice_fields(), p); }
  static const uint8_t* read(const uint8_t* p, T& v) { return Fields::read(p, v.sluice_fields()); }
};

// TtlValue<T>: the timestamp, then T (TypeSerializer<TtlValue<T>>).
template <class T>
struct FixedEncoding<TtlValue<T>, std::enable_if_t<FixedEncoding<T>::kFixed>> {
  static constexpr bool kFixed = true;
  static constexpr size_t kSize = sizeof(int64_t) + FixedEncoding<T>::kSize;
  static uint8_t* write(const TtlValue<T>& v, uint8_t* p) {
    return FixedEncoding<T>::write(v.value, FixedEncoding<int64_t>::write(v.last_access_ms, p));
  }
  static const uint8_t* read(const uint8_t* p, TtlValue<T>& v) {
    return FixedEncoding<T>::read(FixedEncoding<int64_t>::read(p, v.last_access_ms), v.value);
  }
};

// Whether entries of (K, N, V) have one size, each part below 128 bytes (its length is one varint byte).
template <class T>
constexpr bool fixed_part() {
  if constexpr (FixedEncoding<T>::kFixed) {
    return FixedEncoding<T>::kSize < 0x80;
  } else {
    return false;
  }
}
template <class K, class N, class V>
constexpr bool kFixedSizeEntries = fixed_part<K>() && fixed_part<N>() && fixed_part<V>();

// Appends the `count` entries of `m` (a StateMap or a StateMap::View) in the snapshot entry encoding.
template <class K, class N, class V, class M>
void encode_entries(const M& m, size_t count, std::vector<uint8_t>& entries) {
  if constexpr (kFixedSizeEntries<K, N, V>) {
    // One size per entry: grow once, then plain stores.
    constexpr size_t kEntry = 3 + FixedEncoding<K>::kSize + FixedEncoding<N>::kSize + FixedEncoding<V>::kSize;
    const size_t base = entries.size();
    entries.resize(base + count * kEntry);
    uint8_t* p = entries.data() + base;
    m.for_each([&](const K& k, const N& ns, const V& v) {
      *p++ = static_cast<uint8_t>(FixedEncoding<K>::kSize);
      p = FixedEncoding<K>::write(k, p);
      *p++ = static_cast<uint8_t>(FixedEncoding<N>::kSize);
      p = FixedEncoding<N>::write(ns, p);
      *p++ = static_cast<uint8_t>(FixedEncoding<V>::kSize);
      p = FixedEncoding<V>::write(v, p);
    });
    assert(p == entries.data() + entries.size());
  } else {
    m.for_each([&](const K& k, const N& ns, const V& v) {
      append_framed(k, entries);
      append_framed(ns, entries);
      append_framed(v, entries);
    });
  }
}

// Decodes exactly `bytes` as T; false if malformed or not fully consumed.
template <class T>
bool decode_exactly(std::string_view bytes, T* out) {
  DataInputView in(bytes);
  *out = TypeSerializer<T>::deserialize(in);
  return in.ok() && in.at_end();
}

}  // namespace detail

// The heap's MapState value: user keys hashed with std::hash or their serialized bytes.
template <class UK, class UV>
using HeapMapValue = std::unordered_map<UK, UV, detail::UserKeyHash<UK>, detail::UserKeyEqual<UK>>;

namespace detail {

// How TTL applies to a stored heap value: any_expired(v, ttl_ms, now_ms) and remove_expired(v, ...) (drops the
// expired parts; false when nothing remains, so the entry goes). kIsTtl is false for values without TTL.
template <class V>
struct TtlStored {
  static constexpr bool kIsTtl = false;
};
template <class T>
struct TtlStored<TtlValue<T>> {
  static constexpr bool kIsTtl = true;
  static bool any_expired(const TtlValue<T>& v, int64_t ttl_ms, int64_t now_ms) {
    return StateTtlConfig::ttl_expired(v.last_access_ms, ttl_ms, now_ms);
  }
  static bool remove_expired(TtlValue<T>&, int64_t, int64_t) { return false; }
};
template <class T, class A>
struct TtlStored<std::vector<TtlValue<T>, A>> {
  static constexpr bool kIsTtl = true;
  static bool any_expired(const std::vector<TtlValue<T>, A>& v, int64_t ttl_ms, int64_t now_ms) {
    for (const auto& e : v) {
      if (StateTtlConfig::ttl_expired(e.last_access_ms, ttl_ms, now_ms)) return true;
    }
    return false;
  }
  static bool remove_expired(std::vector<TtlValue<T>, A>& v, int64_t ttl_ms, int64_t now_ms) {
    std::erase_if(v, [&](const TtlValue<T>& e) { return StateTtlConfig::ttl_expired(e.last_access_ms, ttl_ms, now_ms); });
    return !v.empty();
  }
};
template <class UK, class UV, class H, class E, class A>
struct TtlStored<std::unordered_map<UK, TtlValue<UV>, H, E, A>> {
  using Map = std::unordered_map<UK, TtlValue<UV>, H, E, A>;
  static constexpr bool kIsTtl = true;
  static bool any_expired(const Map& m, int64_t ttl_ms, int64_t now_ms) {
    for (const auto& [k, e] : m) {
      if (StateTtlConfig::ttl_expired(e.last_access_ms, ttl_ms, now_ms)) return true;
    }
    return false;
  }
  static bool remove_expired(Map& m, int64_t ttl_ms, int64_t now_ms) {
    std::erase_if(m, [&](const auto& kv) { return StateTtlConfig::ttl_expired(kv.second.last_access_ms, ttl_ms, now_ms); });
    return !m.empty();
  }
};

// Cleanup in full snapshot: leave out what is expired when the snapshot is written (clock null: off).
struct TtlSnapshotFilter {
  std::shared_ptr<const Clock> clock;
  int64_t ttl_ms = 0;
  bool active() const { return clock != nullptr; }
};

// Appends the unexpired entries of `m` (a StateMap or View of TTL values), expired list elements and map
// entries removed; returns how many entries were written.
template <class K, class N, class V, class M>
uint64_t encode_unexpired_entries(const M& m, const TtlSnapshotFilter& filter, std::vector<uint8_t>& entries) {
  const int64_t now = filter.clock->now_ms();
  uint64_t count = 0;
  m.for_each([&](const K& k, const N& ns, const V& v) {
    if (!TtlStored<V>::any_expired(v, filter.ttl_ms, now)) {
      append_framed(k, entries);
      append_framed(ns, entries);
      append_framed(v, entries);
      ++count;
      return;
    }
    V kept = v;  // only entries with expired parts are copied
    if (!TtlStored<V>::remove_expired(kept, filter.ttl_ms, now)) return;
    append_framed(k, entries);
    append_framed(ns, entries);
    append_framed(kept, entries);
    ++count;
  });
  return count;
}

}  // namespace detail

// One registered state frozen at a snapshot: a view of each key group's map.
class StateTableSnapshot {
 public:
  explicit StateTableSnapshot(StateMetaInfo meta) : meta_(std::move(meta)) {}
  virtual ~StateTableSnapshot() = default;
  StateTableSnapshot(const StateTableSnapshot&) = delete;
  StateTableSnapshot& operator=(const StateTableSnapshot&) = delete;

  const StateMetaInfo& meta() const { return meta_; }
  virtual size_t size_of_key_group(int32_t index) const = 0;
  // Appends the entries of key group `index` as they were at the snapshot; returns how many.
  virtual uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const = 0;
  // Whether write_key_group may write fewer entries than size_of_key_group (TTL cleanup in full snapshot).
  virtual bool filters_on_snapshot() const { return false; }

 private:
  StateMetaInfo meta_;
};

class StateTableBase {
 public:
  explicit StateTableBase(StateMetaInfo meta) : meta_(std::move(meta)) {}
  virtual ~StateTableBase() = default;
  StateTableBase(const StateTableBase&) = delete;
  StateTableBase& operator=(const StateTableBase&) = delete;

  const StateMetaInfo& meta() const { return meta_; }
  virtual size_t size() const = 0;
  virtual size_t size_of_key_group(int32_t index) const = 0;
  virtual int64_t size_bytes_estimate() const = 0;
  // Appends the entries of key group `index` in the snapshot entry encoding; returns how many.
  virtual uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const = 0;
  // Whether write_key_group may write fewer entries than size_of_key_group (TTL cleanup in full snapshot).
  virtual bool filters_on_snapshot() const { return false; }
  // Decodes a snapshot's entries of key group kg (at `index` in this table) into the staging map.
  // kCorruption naming the state if an entry does not decode or its key belongs to another key group.
  virtual Status stage_key_group(KeyGroup kg, int32_t index, const StateSnapshotView& view,
                                 int32_t max_parallelism) = 0;
  // Replaces key group `index` with the staged map, or clears it if nothing is staged for it.
  virtual void commit_staged(int32_t index) = 0;
  virtual void discard_staged() = 0;
  // Task thread, right after StateVersions::begin_snapshot(): the views of all key groups. O(key groups).
  virtual std::unique_ptr<StateTableSnapshot> snapshot() const = 0;

  // How restored entries written under `restored` meet this table's types (state_schema.h). Tables of user
  // state migrate; the default (timer queues) accepts only compatible as is.
  virtual Result<StateSchemaResolution> resolve_restored(const StateMetaInfo& restored) const {
    SLUICE_RETURN_IF_ERROR(check_state_compatible(restored, meta()));
    return StateSchemaResolution{};
  }
  // Rewrites entries per a resolution that needs migration, appending to `out`.
  virtual Status migrate_restored(const SchemaMigrationPlan&, const StateSnapshotView& old, std::vector<uint8_t>&) const {
    return Status::internal("state '" + old.meta.name + "': this table does not migrate restored entries");
  }

  // stage_key_group of restored entries written under view.meta: resolved against this table, migrated if that
  // is needed (*migrated_entries counts them), staged under this table's meta. The resolution's errors, or
  // stage_key_group's.
  Result<SchemaCompatibility> stage_restored(KeyGroup kg, int32_t index, const StateSnapshotView& view,
                                             int32_t max_parallelism, uint64_t* migrated_entries) {
    SLUICE_ASSIGN_OR_RETURN(StateSchemaResolution r, resolve_restored(view.meta));
    if (r.compatibility.is_as_is()) {
      SLUICE_RETURN_IF_ERROR(stage_key_group(kg, index, view, max_parallelism));
      return r.compatibility;
    }
    std::vector<uint8_t> migrated;
    SLUICE_RETURN_IF_ERROR(migrate_restored(r.plan, view, migrated));
    SLUICE_RETURN_IF_ERROR(stage_key_group(kg, index, StateSnapshotView{meta(), view.entry_count, migrated.data(),
                                                                        migrated.size()},
                                           max_parallelism));
    if (migrated_entries != nullptr) *migrated_entries += view.entry_count;
    return r.compatibility;
  }

 private:
  StateMetaInfo meta_;
};

template <class K, class N, class V>
class TypedStateTableSnapshot final : public StateTableSnapshot {
 public:
  using View = typename StateMap<K, N, V>::View;
  TypedStateTableSnapshot(StateMetaInfo meta, std::vector<View> views, detail::TtlSnapshotFilter filter = {})
      : StateTableSnapshot(std::move(meta)), views_(std::move(views)), filter_(std::move(filter)) {}

  size_t size_of_key_group(int32_t index) const override { return views_[static_cast<size_t>(index)].size; }
  uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const override {
    const View& v = views_[static_cast<size_t>(index)];
    if constexpr (detail::TtlStored<V>::kIsTtl) {
      if (filter_.active()) return detail::encode_unexpired_entries<K, N, V>(v, filter_, entries);
    }
    detail::encode_entries<K, N, V>(v, v.size, entries);
    return v.size;
  }
  bool filters_on_snapshot() const override { return filter_.active(); }

 private:
  std::vector<View> views_;  // by key-group index
  detail::TtlSnapshotFilter filter_;
};

template <class K, class N, class V>
class StateTable final : public StateTableBase {
 public:
  using Map = StateMap<K, N, V>;

  StateTable(StateMetaInfo meta, int32_t num_key_groups, StateVersions& versions)
      : StateTableBase(std::move(meta)), versions_(&versions), staged_(versions) {
    maps_.reserve(static_cast<size_t>(num_key_groups));
    for (int32_t i = 0; i < num_key_groups; ++i) maps_.emplace_back(versions);
  }

  Map& map_at(int32_t index) { return maps_[static_cast<size_t>(index)]; }
  const Map& map_at(int32_t index) const { return maps_[static_cast<size_t>(index)]; }
  int32_t num_key_groups() const { return static_cast<int32_t>(maps_.size()); }

  size_t size() const override {
    size_t n = 0;
    for (const auto& m : maps_) n += m.size();
    return n;
  }
  size_t size_of_key_group(int32_t index) const override { return map_at(index).size(); }

  // Fixed costs exactly; what keys and values own on the heap from a sample of up to kSample entries.
  int64_t size_bytes_estimate() const override {
    static constexpr size_t kSample = 256;
    size_t fixed = 0, entries = 0, sampled = 0, sampled_dynamic = 0;
    for (const auto& m : maps_) {
      fixed += m.fixed_size_bytes();
      entries += m.size();
      if (sampled < kSample) {
        m.for_each([&](const K& k, const N& ns, const V& v) {
          if (sampled >= kSample) return;
          ++sampled;
          sampled_dynamic += detail::dynamic_size_bytes(k) + detail::dynamic_size_bytes(ns) +
                             detail::dynamic_size_bytes(v);
        });
      }
    }
    size_t dynamic = sampled == 0 ? 0 : sampled_dynamic * entries / sampled;
    return static_cast<int64_t>(fixed + dynamic + maps_.size() * sizeof(Map));
  }

  uint64_t write_key_group(int32_t index, std::vector<uint8_t>& entries) const override {
    const Map& m = map_at(index);
    if constexpr (detail::TtlStored<V>::kIsTtl) {
      if (filter_.active()) return detail::encode_unexpired_entries<K, N, V>(m, filter_, entries);
    }
    detail::encode_entries<K, N, V>(m, m.size(), entries);
    return m.size();
  }
  bool filters_on_snapshot() const override { return filter_.active(); }

  // TTL cleanup in full snapshot: snapshots (synchronous and asynchronous) leave out values expired by
  // `clock` when they are written. Only for TTL value types; task thread, before the first snapshot.
  void set_ttl_snapshot_filter(std::shared_ptr<const Clock> clock, int64_t ttl_ms) {
    static_assert(detail::TtlStored<V>::kIsTtl, "only states with TTL filter their snapshots");
    filter_ = detail::TtlSnapshotFilter{std::move(clock), ttl_ms};
  }

  std::unique_ptr<StateTableSnapshot> snapshot() const override {
    std::vector<typename Map::View> views;
    views.reserve(maps_.size());
    for (const Map& m : maps_) views.push_back(m.view());
    return std::make_unique<TypedStateTableSnapshot<K, N, V>>(meta(), std::move(views), filter_);
  }

  Status stage_key_group(KeyGroup kg, int32_t index, const StateSnapshotView& view,
                         int32_t max_parallelism) override {
    discard_staged();
    Map staged(*versions_);
    staged.reserve(static_cast<size_t>(view.entry_count));
    if constexpr (detail::kFixedSizeEntries<K, N, V>) {
      if (stage_fixed_size(kg, view, max_parallelism, staged)) {
        staged_ = std::move(staged);
        staged_index_ = index;
        return Status::ok();
      }
      staged.clear();  // not the expected sizes: the general decoder below names what is wrong
    }
    SnapshotEntryReader reader(view);
    std::string_view kb, nb, vb;
    uint64_t i = 0;
    for (; reader.next(&kb, &nb, &vb); ++i) {
      K key{};
      N ns{};
      V value{};
      const char* bad = !detail::decode_exactly(kb, &key)  ? "key"
                        : !detail::decode_exactly(nb, &ns) ? "namespace"
                        : !detail::decode_exactly(vb, &value) ? "value"
                                                              : nullptr;
      if (bad != nullptr) {
        return Status::corruption("state '" + meta().name + "', key group " + std::to_string(kg.value()) +
                                  ": entry " + std::to_string(i) + " has a " + bad + " that does not decode as " +
                                  type_of(bad));
      }
      // Hash the decoded key as set_current_key will, so restored entries are found again.
      const uint64_t kh = hash_key(key);
      if (key_group_for_hash(kh, max_parallelism) != kg) {
        return Status::corruption("state '" + meta().name + "': entry " + std::to_string(i) +
                                  " of the snapshot of key group " + std::to_string(kg.value()) +
                                  " has a key of key group " +
                                  std::to_string(key_group_for_hash(kh, max_parallelism).value()) +
                                  " (wrong key serializer or damaged snapshot)");
      }
      const uint64_t h = detail::combine_key_namespace_hash(kh, detail::namespace_hash(ns));
      staged.put(key, ns, h, std::move(value));
    }
    if (!reader.ok() || i != view.entry_count) {
      return Status::corruption("state '" + meta().name + "', key group " + std::to_string(kg.value()) +
                                ": truncated entries");
    }
    staged_ = std::move(staged);
    staged_index_ = index;
    return Status::ok();
  }

  Result<StateSchemaResolution> resolve_restored(const StateMetaInfo& restored) const override {
    return resolve_state_schema<V>(restored, meta());
  }
  Status migrate_restored(const SchemaMigrationPlan& plan, const StateSnapshotView& old,
                          std::vector<uint8_t>& out) const override {
    return migrate_entries<V>(plan, old, out);
  }

  void commit_staged(int32_t index) override {
    if (staged_index_ == index) {
      map_at(index) = std::move(staged_);
    } else {
      map_at(index).clear();
    }
    discard_staged();
  }
  void discard_staged() override {
    staged_.clear();
    staged_index_ = -1;
  }

  // fn(const K&, const N&, const V&) for every entry of key group `index`.
  template <class F>
  void for_each_entry(int32_t index, F&& fn) const {
    map_at(index).for_each(std::forward<F>(fn));
  }

 private:
  // Decodes entries of one size each (detail::kFixedSizeEntries) into `staged`. False, with `staged` partly
  // filled, if an entry is not framed with the expected sizes or a key belongs to another key group.
  bool stage_fixed_size(KeyGroup kg, const StateSnapshotView& view, int32_t max_parallelism, Map& staged) const {
    using EK = detail::FixedEncoding<K>;
    using EN = detail::FixedEncoding<N>;
    using EV = detail::FixedEncoding<V>;
    constexpr size_t kEntry = 3 + EK::kSize + EN::kSize + EV::kSize;
    if (view.entry_count > view.entries_size_bytes / kEntry || view.entries_size_bytes != view.entry_count * kEntry) {
      return false;
    }
    const uint8_t* p = view.entries;
    for (uint64_t i = 0; i < view.entry_count; ++i) {
      if (p[0] != EK::kSize || p[1 + EK::kSize] != EN::kSize || p[2 + EK::kSize + EN::kSize] != EV::kSize) return false;
      K key{};
      N ns{};
      V value{};
      EK::read(p + 1, key);
      EN::read(p + 2 + EK::kSize, ns);
      EV::read(p + 3 + EK::kSize + EN::kSize, value);
      p += kEntry;
      const uint64_t kh = hash_key(key);
      if (key_group_for_hash(kh, max_parallelism) != kg) return false;
      staged.put(key, ns, detail::combine_key_namespace_hash(kh, detail::namespace_hash(ns)), std::move(value));
    }
    return true;
  }

  static std::string type_of(std::string_view part) {
    if (part == "key") return TypeSerializer<K>::snapshot().to_string();
    if (part == "namespace") return TypeSerializer<N>::snapshot().to_string();
    return TypeSerializer<V>::snapshot().to_string();
  }

  StateVersions* versions_;
  std::vector<Map> maps_;
  Map staged_;
  int32_t staged_index_ = -1;
  detail::TtlSnapshotFilter filter_;
};

}  // namespace sluice
