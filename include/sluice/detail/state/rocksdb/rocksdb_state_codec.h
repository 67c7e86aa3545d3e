// RocksDBStateCodec: converts one registered state between its RocksDB layout (rocksdb_key_layout.h) and the
// canonical key-group snapshot entries (key_group_snapshot.h), so RocksDB snapshots restore into the heap
// backend and back. The interface is what the non-template backend core calls; TypedRocksDBStateCodec<K, N, D>
// knows the types (it needs them to find where a serialized key ends and to validate restored bytes).
// Implementation header of EmbeddedRocksDBStateBackend; users do not include it.
//
// Canonical value bytes per kind (key_group_snapshot.h): Value/Reducing: T; Aggregating: ACC; List: varint
// count + elements; Map: varint count + (UK, UV) pairs. Entries are one per (key, namespace), as the heap
// writes them; a map's user keys are grouped back into one entry.
//
// States with TTL use the codec of the TTL-wrapped descriptor (ValueStateDescriptor<TtlValue<T>>, ...: the
// stored bytes are TtlValue's); with cleanup in full snapshot (set_ttl_snapshot_filter) expired values, list
// elements and map entries are left out of snapshots, judged by the clock when the key group is written.
//
// Thread-safety: const and stateless after setup; one codec serves the task thread and snapshot threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <cstring>
#include <memory>

#include "sluice/core/clock.h"
#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/detail/state/heap/state_table.h"
#include "sluice/detail/state/rocksdb/rocksdb_key_layout.h"
#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "sluice/state/key_group.h"
#include "sluice/state/key_group_snapshot.h"
#include "sluice/state/state_descriptor.h"
#include "sluice/state/state_schema.h"
#include "sluice/state/state_ttl_config.h"

namespace sluice {

// Reusable buffers of one caller (the codec itself holds none, so several threads can use it).
struct RocksDBCodecScratch {
  std::vector<uint8_t> key;
  std::vector<uint8_t> value;
  std::vector<uint8_t> group;
};

class RocksDBStateCodec {
 public:
  explicit RocksDBStateCodec(std::string state_name) : name_(std::move(state_name)) {}
  virtual ~RocksDBStateCodec() = default;
  RocksDBStateCodec(const RocksDBStateCodec&) = delete;
  RocksDBStateCodec& operator=(const RocksDBStateCodec&) = delete;

  const std::string& state_name() const { return name_; }

  // Appends the canonical entries of everything `it` yields (one key group of this state's column family) to
  // `entries` and returns how many. kCorruption naming the state if a stored key or value does not decode;
  // the iterator's error if it fails.
  virtual Result<uint64_t> append_snapshot_entries(RocksDBStore::Iterator& it, std::vector<uint8_t>& entries,
                                                   RocksDBCodecScratch& scratch) const = 0;

  // Checks every entry of `view` (the snapshot of this state's key group kg) and adds it, in the RocksDB
  // layout, to `batch` for column family cf. kCorruption naming the state, the entry and the part that does
  // not decode, or a key of another key group; `batch` must then be discarded.
  virtual Status add_restored_entries(const StateSnapshotView& view, KeyGroup kg, int32_t max_parallelism,
                                      int32_t cf, RocksDBStore::WriteBatch& batch,
                                      RocksDBCodecScratch& scratch) const = 0;

  // Schema evolution (state_schema.h): how entries written under `restored` meet the registered types, and their
  // rewrite when that needs migration (appended to `out` in the canonical encoding). The default (timers) accepts
  // only compatible as is.
  virtual Result<StateSchemaResolution> resolve_restored(const StateMetaInfo& restored,
                                                         const StateMetaInfo& registered) const {
    SLUICE_RETURN_IF_ERROR(check_state_compatible(restored, registered));
    return StateSchemaResolution{};
  }
  virtual Status migrate_restored(const SchemaMigrationPlan&, const StateSnapshotView& old, std::vector<uint8_t>&) const {
    return Status::internal("state '" + old.meta.name + "': this codec does not migrate restored entries");
  }

 private:
  std::string name_;
};

namespace detail {

// What a descriptor stores per RocksDB key.
template <class D>
struct RocksDBStored;
template <class T>
struct RocksDBStored<ValueStateDescriptor<T>> {
  using value_type = T;
};
template <class T>
struct RocksDBStored<ReducingStateDescriptor<T>> {
  using value_type = T;
};
template <class IN, class ACC, class OUT>
struct RocksDBStored<AggregatingStateDescriptor<IN, ACC, OUT>> {
  using value_type = ACC;
};
template <class T>
struct RocksDBStored<ListStateDescriptor<T>> {
  using element_type = T;
};
template <class UK, class UV>
struct RocksDBStored<MapStateDescriptor<UK, UV>> {
  using user_key_type = UK;
  using value_type = UV;
};

template <class T>
bool decodes_exactly_as(std::string_view bytes) {
  DataInputView in(bytes);
  (void)TypeSerializer<T>::deserialize(in);
  return in.ok() && in.at_end();
}

// Counts the elements of a stored list (serialized elements back to back); -1 if malformed. An element that
// takes no bytes cannot be counted: element types must serialize to at least one byte (checked at registration).
template <class T>
int64_t count_list_elements(std::string_view stored) {
  DataInputView in(stored);
  int64_t n = 0;
  while (!in.at_end()) {
    const size_t before = in.position();
    if (!rocksdb_layout::skip_serialized<T>(in) || in.position() == before) return -1;
    ++n;
  }
  return n;
}

// The type of a canonical entry's whole value bytes for a descriptor (key_group_snapshot.h).
template <class D>
struct CanonicalEntryValue {
  using type = typename RocksDBStored<D>::value_type;
};
template <class T>
struct CanonicalEntryValue<ListStateDescriptor<T>> {
  using type = std::vector<T>;
};
// The heap's map type: it needs no operator< or std::hash on UK, and has the canonical map bytes.
template <class UK, class UV>
struct CanonicalEntryValue<MapStateDescriptor<UK, UV>> {
  using type = HeapMapValue<UK, UV>;
};

}  // namespace detail

template <class K, class N, class D>
class TypedRocksDBStateCodec final : public RocksDBStateCodec {
 public:
  using RocksDBStateCodec::RocksDBStateCodec;
  static constexpr StateKind kKind = D::kKind;
  using EntryValue = typename detail::CanonicalEntryValue<D>::type;

  Result<StateSchemaResolution> resolve_restored(const StateMetaInfo& restored,
                                                 const StateMetaInfo& registered) const override {
    return resolve_state_schema<EntryValue>(restored, registered);
  }
  Status migrate_restored(const SchemaMigrationPlan& plan, const StateSnapshotView& old,
                          std::vector<uint8_t>& out) const override {
    return migrate_entries<EntryValue>(plan, old, out);
  }

  // Whether the stored values (list elements, map values) are TtlValue.
  static constexpr bool stores_ttl_values() {
    if constexpr (kKind == StateKind::kList) {
      return IsTtlValue<typename detail::RocksDBStored<D>::element_type>::value;
    } else {
      return IsTtlValue<typename detail::RocksDBStored<D>::value_type>::value;
    }
  }

  // TTL cleanup in full snapshot; call before the codec is shared. Only for codecs of TTL values.
  void set_ttl_snapshot_filter(std::shared_ptr<const Clock> clock, int64_t ttl_ms) {
    static_assert(stores_ttl_values(), "only states with TTL filter their snapshots");
    ttl_clock_ = std::move(clock);
    ttl_ms_ = ttl_ms;
  }

  Result<uint64_t> append_snapshot_entries(RocksDBStore::Iterator& it, std::vector<uint8_t>& entries,
                                           RocksDBCodecScratch& scratch) const override {
    uint64_t count = 0;
    const int64_t now = ttl_clock_ ? ttl_clock_->now_ms() : 0;
    if constexpr (kKind == StateKind::kMap) {
      // One entry per (key, namespace): the user keys of a map are consecutive (they share the prefix).
      std::vector<uint8_t>& group = scratch.group;  // UK, UV pairs of the current (key, namespace)
      std::vector<uint8_t>& prefix = scratch.key;   // [kg][key][ns] of the current group
      size_t key_len = 0;
      uint64_t pairs = 0;
      auto flush = [&] {
        if (pairs == 0) return;
        std::vector<uint8_t>& value = scratch.value;
        value.clear();
        DataOutputView(&value).write_varint(pairs);
        value.insert(value.end(), group.begin(), group.end());
        std::string_view p = as_bytes_view(prefix).substr(rocksdb_layout::kKeyGroupPrefixBytes);
        KeyGroupSnapshotWriter::append_entry(entries, p.substr(0, key_len), p.substr(key_len), as_bytes_view(value));
        ++count;
        pairs = 0;
        group.clear();
      };
      prefix.clear();
      group.clear();
      for (; it.valid(); it.next()) {
        const std::string_view k = it.key();
        size_t kl = 0, nl = 0;
        if (!split(k, &kl, &nl)) return bad_stored("key", k.size());
        const size_t prefix_len = rocksdb_layout::kKeyGroupPrefixBytes + kl + nl;
        const std::string_view uk = k.substr(prefix_len);
        if (!detail::decodes_exactly_as<typename detail::RocksDBStored<D>::user_key_type>(uk)) {
          return bad_stored("map user key", uk.size());
        }
        if (stored_value_expired(it.value(), now)) continue;
        if (pairs == 0 || as_bytes_view(prefix) != k.substr(0, prefix_len)) {
          flush();
          prefix.assign(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(prefix_len));
          key_len = kl;
        }
        group.insert(group.end(), uk.begin(), uk.end());
        const std::string_view v = it.value();
        group.insert(group.end(), v.begin(), v.end());
        ++pairs;
      }
      flush();
    } else {
      for (; it.valid(); it.next()) {
        const std::string_view k = it.key();
        size_t kl = 0, nl = 0;
        if (!split(k, &kl, &nl) || k.size() != rocksdb_layout::kKeyGroupPrefixBytes + kl + nl) {
          return bad_stored("key", k.size());
        }
        const std::string_view kb = k.substr(rocksdb_layout::kKeyGroupPrefixBytes, kl);
        const std::string_view nb = k.substr(rocksdb_layout::kKeyGroupPrefixBytes + kl, nl);
        std::string_view v = it.value();
        if constexpr (kKind == StateKind::kList) {
          int64_t n = detail::count_list_elements<typename detail::RocksDBStored<D>::element_type>(v);
          if (n < 0) return bad_stored("list value", v.size());
          if constexpr (stores_ttl_values()) {
            if (ttl_clock_) n = keep_unexpired_elements(&v, now, scratch.group);
          }
          if (n == 0) continue;
          std::vector<uint8_t>& value = scratch.value;
          value.clear();
          DataOutputView(&value).write_varint(static_cast<uint64_t>(n));
          value.insert(value.end(), v.begin(), v.end());
          KeyGroupSnapshotWriter::append_entry(entries, kb, nb, as_bytes_view(value));
        } else {
          if (stored_value_expired(v, now)) continue;
          KeyGroupSnapshotWriter::append_entry(entries, kb, nb, v);
        }
        ++count;
      }
    }
    SLUICE_RETURN_IF_ERROR(it.status().with_context("state '" + state_name() + "'"));
    return count;
  }

  Status add_restored_entries(const StateSnapshotView& view, KeyGroup kg, int32_t max_parallelism, int32_t cf,
                              RocksDBStore::WriteBatch& batch, RocksDBCodecScratch& scratch) const override {
    SnapshotEntryReader reader(view);
    std::string_view kb, nb, vb;
    uint64_t i = 0;
    std::vector<uint8_t>& key = scratch.key;
    for (; reader.next(&kb, &nb, &vb); ++i) {
      if (!detail::decodes_exactly_as<K>(kb)) return bad_entry(kg, i, "key", TypeSerializer<K>::snapshot().to_string());
      if (!detail::decodes_exactly_as<N>(nb)) return bad_entry(kg, i, "namespace", TypeSerializer<N>::snapshot().to_string());
      const KeyGroup actual =
          key_group_for_key_bytes(reinterpret_cast<const uint8_t*>(kb.data()), kb.size(), max_parallelism);
      if (actual != kg) {
        return Status::corruption("state '" + state_name() + "': entry " + std::to_string(i) +
                                  " of the snapshot of key group " + std::to_string(kg.value()) +
                                  " has a key of key group " + std::to_string(actual.value()) +
                                  " (wrong key serializer or damaged snapshot)");
      }
      key.clear();
      rocksdb_layout::append_key_group(key, kg.value());
      key.insert(key.end(), kb.begin(), kb.end());
      key.insert(key.end(), nb.begin(), nb.end());
      if constexpr (kKind == StateKind::kList) {
        using T = typename detail::RocksDBStored<D>::element_type;
        DataInputView in(vb);
        const uint64_t n = in.read_varint();
        const size_t header = in.position();
        int64_t counted = in.ok() ? detail::count_list_elements<T>(vb.substr(header)) : -1;
        if (counted < 0 || static_cast<uint64_t>(counted) != n) {
          return bad_entry(kg, i, "value", TypeSerializer<std::vector<T>>::snapshot().to_string());
        }
        if (n > 0) batch.put(cf, as_bytes_view(key), vb.substr(header));
      } else if constexpr (kKind == StateKind::kMap) {
        using UK = typename detail::RocksDBStored<D>::user_key_type;
        using UV = typename detail::RocksDBStored<D>::value_type;
        DataInputView in(vb);
        const uint64_t n = in.read_varint();
        const size_t prefix_len = key.size();
        for (uint64_t j = 0; j < n && in.ok(); ++j) {
          const size_t a = in.position();
          if (!rocksdb_layout::skip_serialized<UK>(in)) break;
          const size_t b = in.position();
          if (!rocksdb_layout::skip_serialized<UV>(in)) break;
          const size_t c = in.position();
          key.resize(prefix_len);
          key.insert(key.end(), vb.begin() + static_cast<std::ptrdiff_t>(a), vb.begin() + static_cast<std::ptrdiff_t>(b));
          batch.put(cf, as_bytes_view(key), vb.substr(b, c - b));
        }
        if (!in.ok() || !in.at_end()) {
          return bad_entry(kg, i, "value",
                         "a map of " + TypeSerializer<UK>::snapshot().to_string() + " to " +
                             TypeSerializer<UV>::snapshot().to_string());
        }
      } else {
        using V = typename detail::RocksDBStored<D>::value_type;
        if (!detail::decodes_exactly_as<V>(vb)) {
          return bad_entry(kg, i, "value", TypeSerializer<V>::snapshot().to_string());
        }
        batch.put(cf, as_bytes_view(key), vb);
      }
    }
    if (!reader.ok() || i != view.entry_count) {
      return Status::corruption("state '" + state_name() + "', key group " + std::to_string(kg.value()) +
                                ": truncated entries");
    }
    return Status::ok();
  }

 private:
  // A stored TtlValue (value or map value) expired at `now`, when filtering snapshots.
  bool stored_value_expired(std::string_view v, int64_t now) const {
    if constexpr (stores_ttl_values() && kKind != StateKind::kList) {
      if (ttl_clock_ && v.size() >= kTtlTimestampBytes) {
        int64_t ts;
        std::memcpy(&ts, v.data(), sizeof(ts));
        return StateTtlConfig::ttl_expired(ts, ttl_ms_, now);
      }
    }
    (void)v;
    (void)now;
    return false;
  }

  // Points *v at its unexpired elements (copied into `buf` if some are dropped); returns how many. The
  // elements were already checked to parse.
  int64_t keep_unexpired_elements(std::string_view* v, int64_t now, std::vector<uint8_t>& buf) const {
    using E = typename detail::RocksDBStored<D>::element_type;
    buf.clear();
    int64_t kept = 0, dropped = 0;
    DataInputView in(*v);
    while (!in.at_end()) {
      const size_t at = in.position();
      int64_t ts;
      std::memcpy(&ts, v->data() + at, sizeof(ts));
      (void)rocksdb_layout::skip_serialized<E>(in);
      if (StateTtlConfig::ttl_expired(ts, ttl_ms_, now)) {
        ++dropped;
      } else {
        ++kept;
        buf.insert(buf.end(), v->begin() + static_cast<std::ptrdiff_t>(at), v->begin() + static_cast<std::ptrdiff_t>(in.position()));
      }
    }
    if (dropped > 0) *v = as_bytes_view(buf);
    return kept;
  }

  // Lengths of the serialized key and namespace after the key-group prefix of a stored key.
  static bool split(std::string_view stored_key, size_t* key_len, size_t* ns_len) {
    if (stored_key.size() < rocksdb_layout::kKeyGroupPrefixBytes) return false;
    DataInputView in(stored_key.substr(rocksdb_layout::kKeyGroupPrefixBytes));
    if (!rocksdb_layout::skip_serialized<K>(in)) return false;
    *key_len = in.position();
    if (!rocksdb_layout::skip_serialized<N>(in)) return false;
    *ns_len = in.position() - *key_len;
    return true;
  }

  Status bad_stored(const char* what, size_t size) const {
    return Status::corruption("state '" + state_name() + "': a stored " + what + " of " + std::to_string(size) +
                              " bytes in RocksDB does not decode (damaged local database)");
  }
  Status bad_entry(KeyGroup kg, uint64_t i, const char* part, const std::string& type) const {
    return Status::corruption("state '" + state_name() + "', key group " + std::to_string(kg.value()) + ": entry " +
                              std::to_string(i) + " has a " + part + " that does not decode as " + type);
  }

  std::shared_ptr<const Clock> ttl_clock_;  // null: no TTL cleanup in full snapshot
  int64_t ttl_ms_ = 0;
};

}  // namespace sluice
