// State schema evolution at restore (docs/savepoints.md, "State schema evolution"): the serializer snapshots a
// snapshot recorded for a state (StateMetaInfo) against the serializers the program registers it with.
//
// - The kind, the namespace serializer, TTL on/off and a MapState's user-key serializer must be compatible as
//   is: namespaces and user keys are hashed and, in RocksDB, part of the stored keys; TTL changes the stored
//   values' layout (as in Flink). Key serializers are checked by the backends (check_key_serializer).
// - The stored value (the value, list element, map value, aggregate, with its TTL wrapper) resolves through
//   SchemaMigration (core/serializer_compatibility.h): as is, after migration (the restore decodes every value
//   with the old snapshot and writes it with the new serializer), or incompatible (kInvalidArgument naming the
//   state and the field).
// After a migration the backend holds and snapshots the registered serializers: the next restore is as is.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/core/serializer_compatibility.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group_snapshot.h"

namespace sluice {

// The snapshot of a canonical entry's whole value bytes (key_group_snapshot.h): Value/Reducing/Aggregating: the
// value serializer; List: vector of the element; Map: map of user key to user value.
TypeSerializerSnapshot entry_value_snapshot(const StateMetaInfo& meta);

// kInvalidArgument naming the state when what must stay as is changed (see above); ok otherwise, also when the
// value serializers differ.
Status check_state_migratable(const StateMetaInfo& restored, const StateMetaInfo& registered);

// kInvalidArgument naming `what` when the snapshot's key serializer is not compatible as is with the backend's.
Status check_key_serializer(const std::string& what, const TypeSerializerSnapshot& restored,
                            const TypeSerializerSnapshot& current);

// How a restored state meets its registration.
struct StateSchemaResolution {
  SchemaCompatibility compatibility;
  SchemaMigrationPlan plan;  // for the entry value type; meaningful after migration
};

// One state's resolution, as a restore reports it (KeyedStateBackend::schema_resolutions).
struct StateSchemaReport {
  std::string state;
  SchemaCompatibilityKind kind = SchemaCompatibilityKind::kCompatibleAsIs;
  std::string detail;          // what changed (after migration)
  std::string restored_type;   // StateMetaInfo::type_description of the snapshot's
  std::string registered_type;
  uint64_t migrated_entries = 0;
  std::string to_string() const;  // "state 'x': compatible after migration (field 'y' added): 12 entries rewritten"
};

StateSchemaReport make_schema_report(const StateMetaInfo& restored, const StateMetaInfo& registered,
                                     const SchemaCompatibility& compatibility, uint64_t migrated_entries);

namespace detail {
Status incompatible_state(const StateMetaInfo& restored, const StateMetaInfo& registered, const std::string& reason);
}  // namespace detail

// Resolves a restored state against the registered one whose canonical entry value type is V. Errors:
// check_state_migratable's, or kInvalidArgument naming the state and the field when incompatible.
template <class V>
Result<StateSchemaResolution> resolve_state_schema(const StateMetaInfo& restored, const StateMetaInfo& registered) {
  StateSchemaResolution r;
  if (restored == registered) {
    r.plan.as_is = true;
    return r;
  }
  SLUICE_RETURN_IF_ERROR(check_state_migratable(restored, registered));
  r.compatibility = SchemaMigration<V>::resolve(entry_value_snapshot(restored), r.plan);
  if (r.compatibility.is_incompatible()) return detail::incompatible_state(restored, registered, r.compatibility.reason);
  return r;
}

// Rewrites the value bytes of every entry of `old` (written under its meta) to V's serializer, appending to
// `out`; keys and namespaces are kept. kCorruption naming the state and entry if a value does not decode.
template <class V>
Status migrate_entries(const SchemaMigrationPlan& plan, const StateSnapshotView& old, std::vector<uint8_t>& out) {
  SnapshotEntryReader reader(old);
  std::string_view kb, nb, vb;
  std::vector<uint8_t> value;
  uint64_t i = 0;
  for (; reader.next(&kb, &nb, &vb); ++i) {
    DataInputView in(vb);
    V v = read_migrated<V>(plan, in);
    if (!in.ok() || !in.at_end()) {
      return Status::corruption("state '" + old.meta.name + "': entry " + std::to_string(i) + " has a value that " +
                                "does not decode as " + plan.old.to_string() + " (migrating it)");
    }
    value.clear();
    serialize_append(v, value);
    KeyGroupSnapshotWriter::append_entry(out, kb, nb,
                                         std::string_view(reinterpret_cast<const char*>(value.data()), value.size()));
  }
  if (!reader.ok() || i != old.entry_count) {
    return Status::corruption("state '" + old.meta.name + "': truncated entries (migrating them)");
  }
  return Status::ok();
}

}  // namespace sluice
