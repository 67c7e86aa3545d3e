#include "sluice/state/state_schema.h"

#include "sluice/state/state_ttl_config.h"

namespace sluice {

TypeSerializerSnapshot entry_value_snapshot(const StateMetaInfo& meta) {
  const std::vector<TypeSerializerSnapshot>& v = meta.value_serializers;
  switch (meta.kind) {
    case StateKind::kList:
      if (v.size() == 1) return TypeSerializerSnapshot{"vector", 1, {v[0]}};
      break;
    case StateKind::kMap:
      if (v.size() == 2) return TypeSerializerSnapshot{"map", 1, {v[0], v[1]}};
      break;
    default:
      if (v.size() == 1) return v[0];
      break;
  }
  // Not a shape any registration has: resolves as incompatible against every type.
  return TypeSerializerSnapshot{"state-values", 1, v};
}

Status check_state_migratable(const StateMetaInfo& restored, const StateMetaInfo& registered) {
  const std::string name = "state '" + registered.name + "'";
  if (restored.kind != registered.kind) {
    return Status::invalid_argument(name + ": restored as " + restored.type_description() + " but registered as " +
                                    registered.type_description() + " (a state's kind cannot change; use a new name)");
  }
  // TTL switched on or off: the stored values gain or lose their timestamps (state_ttl_config.h).
  const bool restored_ttl = !restored.value_serializers.empty() &&
                            is_ttl_serializer_snapshot(restored.value_serializers.back());
  const bool registered_ttl = !registered.value_serializers.empty() &&
                              is_ttl_serializer_snapshot(registered.value_serializers.back());
  if (restored_ttl != registered_ttl) {
    return Status::invalid_argument(
        name + ": the snapshot has it " + (restored_ttl ? "with" : "without") + " time-to-live (" +
        restored.type_description() + ") but it is registered " + (registered_ttl ? "with" : "without") +
        " time-to-live (" + registered.type_description() +
        "); enabling or disabling TTL changes the stored values' serializer, which a restore does not migrate "
        "(as in Flink): keep the TTL setting or use a new state name");
  }
  if (!same_schema(restored.namespace_serializer, registered.namespace_serializer)) {
    return Status::invalid_argument(name + ": restored in namespace " + restored.namespace_serializer.to_string() +
                                    ", registered in namespace " + registered.namespace_serializer.to_string() +
                                    " (namespaces must be compatible as is: they are part of the state's keys)");
  }
  if (restored.kind == StateKind::kMap && restored.value_serializers.size() == 2 &&
      registered.value_serializers.size() == 2 &&
      !same_schema(restored.value_serializers[0], registered.value_serializers[0])) {
    return Status::invalid_argument(name + ": restored with user keys " + restored.value_serializers[0].to_string() +
                                    ", registered with " + registered.value_serializers[0].to_string() +
                                    " (MapState user keys must be compatible as is: RocksDB orders and finds map "
                                    "entries by their bytes; the user values may migrate)");
  }
  return Status::ok();
}

Status check_key_serializer(const std::string& what, const TypeSerializerSnapshot& restored,
                            const TypeSerializerSnapshot& current) {
  if (same_schema(restored, current)) return Status::ok();
  return Status::invalid_argument(
      what + ": the snapshot's key serializer is " + restored.to_string() + ", this job's is " + current.to_string() +
      ": keys must be compatible as is (a key's group is a hash of its serialized bytes, and RocksDB finds state "
      "by them), so a key type cannot migrate, also not with --rehash-key-groups; keep the key type, or read the "
      "old state with the old key type and write it anew");
}

std::string StateSchemaReport::to_string() const {
  std::string s = "state '" + state + "': " + std::string(schema_compatibility_name(kind));
  if (!detail.empty()) s += " (" + detail + ")";
  if (kind == SchemaCompatibilityKind::kCompatibleAfterMigration) {
    s += ": " + restored_type + " -> " + registered_type + ", " + std::to_string(migrated_entries) +
         " entries rewritten";
  }
  return s;
}

StateSchemaReport make_schema_report(const StateMetaInfo& restored, const StateMetaInfo& registered,
                                     const SchemaCompatibility& compatibility, uint64_t migrated_entries) {
  return StateSchemaReport{registered.name, compatibility.kind, compatibility.reason, restored.type_description(),
                           registered.type_description(), migrated_entries};
}

namespace detail {
Status incompatible_state(const StateMetaInfo& restored, const StateMetaInfo& registered, const std::string& reason) {
  return Status::invalid_argument("state '" + registered.name + "': restored as " + restored.type_description() +
                                  ", registered as " + registered.type_description() +
                                  ": incompatible schema: " + reason);
}
}  // namespace detail

}  // namespace sluice
