// StateTtlConfig: time-to-live of keyed state (Flink's StateTtlConfig; semantics from Flink's documentation,
// "State Time-To-Live (TTL)"). Enabled per state with StateDescriptor::enable_time_to_live.
//
// Every stored value carries the time of its last access (TtlValue: the value's update time, and with
// kOnReadAndWrite also its read time): a ValueState's value, each ListState element, each MapState entry, the
// ReducingState / AggregatingState accumulator. A value is expired when last_access_ms + ttl_ms <= now_ms
// (processing time from the backend's injectable Clock, core/clock.h; KeyedStateBackend::set_ttl_clock).
// Expired values are removed lazily when read, by the background cleanup of each backend and from full
// snapshots; docs/state-backends.md "State TTL".
//
// The timestamp is part of the stored and snapshotted value (TtlValue<T>, serialized as 8-byte timestamp then
// the value), so enabling or disabling TTL on a restored state is a serializer change that the restore refuses
// (naming the state), as in Flink. Changing ttl_ms or the update type across a restore is allowed.
//
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "sluice/core/data_view.h"
#include "sluice/core/serializer.h"
#include "sluice/core/serializer_compatibility.h"

namespace sluice {

class StateTtlConfig {
 public:
  // When the last-access timestamp is refreshed.
  enum class UpdateType : uint8_t {
    kDisabled,           // TTL is off: the state never expires (as if enable_time_to_live was not called)
    kOnCreateAndWrite,   // default: on creation and every write
    kOnReadAndWrite,     // also on every read that returns the value
  };
  // Whether a read can return a value that expired but was not removed yet.
  enum class StateVisibility : uint8_t {
    kNeverReturnExpired,           // default: expired values are invisible (and removed when read)
    kReturnExpiredIfNotCleanedUp,  // returned if still present; removed by that read
  };
  // Only processing time, as in Flink.
  enum class TtlTimeCharacteristic : uint8_t { kProcessingTime };

  // Heap backend: each access to the state checks `cleanup_size` more entries of it (a lazy iterator over all
  // its key groups) and removes the expired ones (list elements and map entries individually); with
  // run_cleanup_for_every_record also on every set_current_key. Flink's cleanupIncrementally.
  struct IncrementalCleanup {
    int32_t cleanup_size = 5;                   // Flink's default
    bool run_cleanup_for_every_record = false;  // Flink's default
  };
  // RocksDB backend: a compaction filter drops expired values (list elements individually) of this state's
  // column family when RocksDB compacts; it reads the clock once per query_time_after_num_entries values it
  // sees. Flink's cleanupInRocksdbCompactFilter.
  struct RocksdbCompactFilterCleanup {
    int64_t query_time_after_num_entries = 1000;  // Flink's default
  };

  class Builder;
  // A builder with ttl_ms (> 0); see Builder for the defaults.
  static Builder new_builder(int64_t ttl_ms);

  // The disabled configuration (what a descriptor holds until enable_time_to_live).
  StateTtlConfig() = default;

  bool is_enabled() const { return update_type_ != UpdateType::kDisabled && ttl_ms_ > 0; }
  int64_t ttl_ms() const { return ttl_ms_; }
  UpdateType update_type() const { return update_type_; }
  StateVisibility state_visibility() const { return visibility_; }
  TtlTimeCharacteristic ttl_time_characteristic() const { return TtlTimeCharacteristic::kProcessingTime; }
  bool update_on_read() const { return update_type_ == UpdateType::kOnReadAndWrite; }
  bool return_expired() const { return visibility_ == StateVisibility::kReturnExpiredIfNotCleanedUp; }

  // Cleanup strategies (several may be active; the backend uses those that apply to it).
  bool cleanup_in_full_snapshot() const { return full_snapshot_; }
  // The configured incremental cleanup, or, with background cleanup on (the default), Flink's default one.
  std::optional<IncrementalCleanup> incremental_cleanup() const {
    if (incremental_) return incremental_;
    if (background_) return IncrementalCleanup{};
    return std::nullopt;
  }
  std::optional<RocksdbCompactFilterCleanup> rocksdb_compact_filter_cleanup() const {
    if (compact_filter_) return compact_filter_;
    if (background_) return RocksdbCompactFilterCleanup{};
    return std::nullopt;
  }
  bool is_cleanup_in_background() const { return background_; }

  // Whether a value last accessed at last_access_ms is expired at now_ms (overflow-safe for huge ttls).
  bool expired(int64_t last_access_ms, int64_t now_ms) const { return ttl_expired(last_access_ms, ttl_ms_, now_ms); }
  static bool ttl_expired(int64_t last_access_ms, int64_t ttl_ms, int64_t now_ms) {
    return last_access_ms <= now_ms - ttl_ms;
  }

  // "ttl 1000 ms, OnCreateAndWrite, NeverReturnExpired" (for messages).
  std::string to_string() const;

 private:
  int64_t ttl_ms_ = 0;
  UpdateType update_type_ = UpdateType::kDisabled;
  StateVisibility visibility_ = StateVisibility::kNeverReturnExpired;
  bool full_snapshot_ = false;
  bool background_ = true;
  std::optional<IncrementalCleanup> incremental_;
  std::optional<RocksdbCompactFilterCleanup> compact_filter_;
};

// Defaults: kOnCreateAndWrite, kNeverReturnExpired, processing time, no cleanup in full snapshot, background
// cleanup on (heap: incremental cleanup of 5 entries per access; RocksDB: compaction filter querying the clock
// every 1000 entries), as Flink's builder.
class StateTtlConfig::Builder {
 public:
  explicit Builder(int64_t ttl_ms) { c_.ttl_ms_ = ttl_ms; c_.update_type_ = UpdateType::kOnCreateAndWrite; }
  Builder& set_ttl_ms(int64_t ttl_ms) { c_.ttl_ms_ = ttl_ms; return *this; }
  Builder& set_update_type(UpdateType t) { c_.update_type_ = t; return *this; }
  Builder& update_ttl_on_create_and_write() { return set_update_type(UpdateType::kOnCreateAndWrite); }
  Builder& update_ttl_on_read_and_write() { return set_update_type(UpdateType::kOnReadAndWrite); }
  Builder& set_state_visibility(StateVisibility v) { c_.visibility_ = v; return *this; }
  Builder& never_return_expired() { return set_state_visibility(StateVisibility::kNeverReturnExpired); }
  Builder& return_expired_if_not_cleaned_up() {
    return set_state_visibility(StateVisibility::kReturnExpiredIfNotCleanedUp);
  }
  Builder& set_ttl_time_characteristic(TtlTimeCharacteristic) { return *this; }  // processing time only
  // Expired entries are not written to full snapshots (both backends' checkpoints and savepoints today).
  Builder& cleanup_full_snapshot() { c_.full_snapshot_ = true; return *this; }
  // cleanup_size >= 1 (smaller values are taken as 1).
  Builder& cleanup_incrementally(int32_t cleanup_size, bool run_cleanup_for_every_record) {
    c_.incremental_ = IncrementalCleanup{cleanup_size < 1 ? 1 : cleanup_size, run_cleanup_for_every_record};
    return *this;
  }
  // query_time_after_num_entries >= 1 (smaller values are taken as 1).
  Builder& cleanup_in_rocksdb_compact_filter(int64_t query_time_after_num_entries) {
    c_.compact_filter_ = RocksdbCompactFilterCleanup{query_time_after_num_entries < 1 ? 1 : query_time_after_num_entries};
    return *this;
  }
  // Turns off the default background strategies (explicitly configured ones stay).
  Builder& disable_cleanup_in_background() { c_.background_ = false; return *this; }
  StateTtlConfig build() const { return c_; }

 private:
  StateTtlConfig c_;
};

inline StateTtlConfig::Builder StateTtlConfig::new_builder(int64_t ttl_ms) { return Builder(ttl_ms); }

// A stored value with its last-access timestamp (Flink's TtlValue). Serialized as the timestamp (8 bytes,
// little-endian, first: the RocksDB compaction filter reads it without knowing T) followed by T.
template <class T>
struct TtlValue {
  using value_type = T;
  T value{};
  int64_t last_access_ms = 0;
  bool operator==(const TtlValue&) const = default;
};

template <class T>
struct TypeSerializer<TtlValue<T>> {
  static void serialize(const TtlValue<T>& v, DataOutputView& out) {
    out.write_fixed<int64_t>(v.last_access_ms);
    TypeSerializer<T>::serialize(v.value, out);
  }
  static TtlValue<T> deserialize(DataInputView& in) {
    TtlValue<T> v;
    v.last_access_ms = in.read_fixed<int64_t>();
    v.value = TypeSerializer<T>::deserialize(in);
    return v;
  }
  static TypeSerializerSnapshot snapshot() { return {"ttl", 1, {TypeSerializer<T>::snapshot()}}; }
};

// Schema migration (serializer_compatibility.h) of TTL values: the timestamp stays, the value migrates.
template <class T>
struct SchemaMigration<TtlValue<T>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<T>(old, plan, old.type_name == "ttl", TypeSerializer<TtlValue<T>>::snapshot());
  }
  static TtlValue<T> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    TtlValue<T> v;
    v.last_access_ms = in.read_fixed<int64_t>();
    v.value = read_migrated<T>(plan.nested[0], in);
    return v;
  }
};

// The serializer snapshot of TtlValue<T> from T's (what a TTL state records as its value serializer).
inline TypeSerializerSnapshot ttl_serializer_snapshot(TypeSerializerSnapshot inner) {
  return TypeSerializerSnapshot{"ttl", 1, {std::move(inner)}};
}
inline bool is_ttl_serializer_snapshot(const TypeSerializerSnapshot& s) {
  return s.type_name == "ttl" && s.nested.size() == 1;
}

template <class T>
struct IsTtlValue : std::false_type {};
template <class T>
struct IsTtlValue<TtlValue<T>> : std::true_type {};

inline constexpr size_t kTtlTimestampBytes = 8;

}  // namespace sluice
