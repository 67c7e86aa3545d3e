#include "cluster/key_group_rehash.h"

#include <map>
#include <optional>

#include "sluice/state/key_group_snapshot.h"

namespace sluice::cluster {

Result<int32_t> max_parallelism_for_restore(const checkpoint::CheckpointMetadata& md, const std::string& location,
                                            int32_t configured, KeyGroupRehash rehash) {
  const checkpoint::OperatorState* keyed = nullptr;
  for (const auto& op : md.operators) {
    for (const auto& st : op.subtasks) {
      if (!st.keyed_state && !st.incremental_keyed_state) continue;
      if (keyed == nullptr) keyed = &op;
      if (rehash == KeyGroupRehash::kRehash && st.incremental_keyed_state && op.max_parallelism != configured &&
          configured != -1) {
        return Status::invalid_argument(
            "--rehash-key-groups: " + std::string(md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ") +
            std::to_string(md.checkpoint_id.value()) + " (" + location + ") holds incremental RocksDB state of "
            "operator '" + op.operator_name + "' (" + op.operator_id + "), whose keys cannot be re-hashed; restore "
            "it at max parallelism " + std::to_string(op.max_parallelism) + ", take a savepoint, and re-hash that");
      }
    }
  }
  if (keyed == nullptr) return configured;  // no keyed state: nothing is filed under key groups
  const int32_t recorded = keyed->max_parallelism;
  if (configured == -1 || configured == recorded || rehash == KeyGroupRehash::kRehash) {
    return configured == -1 ? recorded : configured;
  }
  return Status::invalid_argument(
      std::string(md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ") +
      std::to_string(md.checkpoint_id.value()) + " (" + location + ") was taken with max parallelism " +
      std::to_string(recorded) + " (operator '" + keyed->operator_name + "'), the job sets pipeline.max-parallelism " +
      std::to_string(configured) + ": its keyed state is filed under " + std::to_string(recorded) +
      " key groups. Leave pipeline.max-parallelism unset (the snapshot's value is adopted), set it to " +
      std::to_string(recorded) + ", or restore with --rehash-key-groups "
      "(execution.state-recovery.rehash-key-groups) to re-hash every key into " + std::to_string(configured) +
      " key groups");
}

Result<std::vector<std::vector<uint8_t>>> rehash_key_groups(const std::vector<KeyGroupSnapshotBytes>& snapshots,
                                                            int32_t max_parallelism, const KeyGroupRange& range,
                                                            const std::string& what) {
  struct StateEntries {
    StateMetaInfo meta;
    uint64_t count = 0;
    std::vector<uint8_t> entries;
  };
  std::optional<TypeSerializerSnapshot> key_serializer;
  std::map<std::string, StateMetaInfo> metas;               // by state name, across all snapshots
  std::map<int32_t, std::map<std::string, StateEntries>> groups;  // new key group -> state name (sorted) -> entries
  for (const KeyGroupSnapshotBytes& s : snapshots) {
    auto view = parse_key_group_snapshot(s.data, s.size);
    if (!view.is_ok()) return view.status().with_context(what);
    const std::string where = what + ": key group " + std::to_string(view->key_group.value()) + " of " +
                              std::to_string(view->max_parallelism);
    if (!key_serializer) {
      key_serializer = view->key_serializer;
    } else if (*key_serializer != view->key_serializer) {
      return Status::corruption(where + " has key serializer " + view->key_serializer.to_string() +
                                ", other key groups " + key_serializer->to_string());
    }
    for (const StateSnapshotView& st : view->states) {
      auto [known, inserted] = metas.emplace(st.meta.name, st.meta);
      if (!inserted && !(known->second == st.meta)) {
        return Status::corruption(where + ": state '" + st.meta.name + "' is " + st.meta.type_description() +
                                  ", in other key groups " + known->second.type_description());
      }
      SnapshotEntryReader reader(st);
      std::string_view key, ns, value;
      while (reader.next(&key, &ns, &value)) {
        const KeyGroup kg =
            key_group_for_key_bytes(reinterpret_cast<const uint8_t*>(key.data()), key.size(), max_parallelism);
        if (!range.contains(kg)) continue;
        StateEntries& e = groups[kg.value()][st.meta.name];
        if (e.count == 0) e.meta = st.meta;
        KeyGroupSnapshotWriter::append_entry(e.entries, key, ns, value);
        ++e.count;
      }
      if (!reader.ok() || !reader.at_end()) {
        return Status::corruption(where + ": the entries of state '" + st.meta.name + "' do not parse");
      }
    }
  }
  std::vector<std::vector<uint8_t>> out;
  for (auto& [kg, states] : groups) {
    std::vector<uint8_t> bytes;
    KeyGroupSnapshotWriter writer(&bytes, max_parallelism, KeyGroup(kg), *key_serializer, states.size());
    for (auto& [name, e] : states) writer.add_state(e.meta, e.count, e.entries);
    writer.finish();
    out.push_back(std::move(bytes));
  }
  return out;
}

}  // namespace sluice::cluster
