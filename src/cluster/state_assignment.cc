#include "cluster/state_assignment.h"

#include <set>

#include "checkpoint/byte_size_text.h"
#include "cluster/key_group_rehash.h"
#include "sluice/operators/source_operator.h"
#include "sluice/state/operator_state_store.h"

namespace sluice::cluster {

using checkpoint::CheckpointMetadata;
using checkpoint::OperatorState;

const OperatorState* find_operator_state(const CheckpointMetadata& md, const std::string& id) {
  for (const auto& op : md.operators)
    if (op.operator_id == id) return &op;
  return nullptr;
}

bool has_operator_or_keyed_state(const OperatorState& op) {
  for (const auto& st : op.subtasks) {
    if (st.keyed_state || st.incremental_keyed_state || st.operator_state) return true;
  }
  return false;
}

std::string UnmatchedOperatorState::describe() const {
  std::string what = keyed && operator_state ? "keyed and operator state" : keyed ? "keyed state" : "operator state";
  return what + " of " + std::to_string(subtasks) + (subtasks == 1 ? " subtask" : " subtasks") + " (parallelism " +
         std::to_string(parallelism) + "), " + checkpoint::format_bytes(state_size_bytes);
}

std::vector<UnmatchedOperatorState> unmatched_operator_state(const CheckpointMetadata& md,
                                                             const std::vector<std::string>& job_operator_ids) {
  std::set<std::string> ids(job_operator_ids.begin(), job_operator_ids.end());
  std::vector<UnmatchedOperatorState> out;
  for (const auto& op : md.operators) {
    // Channel state alone: check_channel_state_heads decides about it.
    if (!has_operator_or_keyed_state(op) || ids.count(op.operator_id)) continue;
    UnmatchedOperatorState u;
    u.operator_id = op.operator_id;
    u.operator_name = op.operator_name;
    u.parallelism = op.parallelism;
    for (const auto& st : op.subtasks) {
      ++u.subtasks;
      if (st.keyed_state) {
        u.keyed = true;
        u.state_size_bytes += st.keyed_state->stream.size_bytes;
      }
      if (st.incremental_keyed_state) {
        u.keyed = true;
        for (const auto& f : st.incremental_keyed_state->shared_files) u.state_size_bytes += f.file.size_bytes;
        for (const auto& f : st.incremental_keyed_state->private_files) u.state_size_bytes += f.file.size_bytes;
      }
      if (st.operator_state) {
        u.operator_state = true;
        u.state_size_bytes += st.operator_state->size_bytes;
      }
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::string describe_unmatched_state(const CheckpointMetadata& md, const std::string& location,
                                     const std::vector<UnmatchedOperatorState>& unmatched) {
  std::string text = std::string(md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ") +
                     std::to_string(md.checkpoint_id.value()) + " (" + location + ") holds state of " +
                     std::to_string(unmatched.size()) + (unmatched.size() == 1 ? " operator" : " operators") +
                     " this job does not have:";
  for (size_t i = 0; i < unmatched.size(); ++i) {
    const auto& u = unmatched[i];
    text += (i ? "; '" : " '") + u.operator_name + "' (operator id " + u.operator_id + "): " + u.describe();
  }
  return text;
}

Result<std::map<std::string, OperatorRestoreState>> assign_subtask_state(
    const CheckpointMetadata& md, const std::string& location, checkpoint::CheckpointStorage& storage,
    const std::vector<OperatorToRestore>& chain, int32_t subtask, const KeyGroupRange& range, int32_t max_parallelism,
    SharedFileReuse reuse, KeyGroupRehash rehash) {
  std::map<std::string, OperatorRestoreState> out;
  for (const auto& c : chain) {
    const OperatorState* os = find_operator_state(md, c.operator_id);
    if (os == nullptr) continue;
    std::string what = "restoring operator '" + os->operator_name + "' (" + c.operator_id + ") from " + location;
    OperatorRestoreState r;
    r.checkpoint_id = md.checkpoint_id;
    std::vector<std::vector<uint8_t>> old_operator_states(static_cast<size_t>(os->parallelism));
    // --rehash-key-groups at another max parallelism: every key of every old subtask is hashed again, so each new
    // subtask reads all of the operator's keyed state (key_group_rehash.h).
    const bool rehashing = os->max_parallelism != max_parallelism && rehash == KeyGroupRehash::kRehash && !range.is_empty();
    std::vector<std::vector<uint8_t>> rehash_files;
    std::vector<KeyGroupSnapshotBytes> rehash_input;
    for (const auto& st : os->subtasks) {
      if (st.incremental_keyed_state && !range.is_empty()) {
        if (rehashing) {
          return Status::invalid_argument(what + ": RocksDB files (an incremental checkpoint or a native savepoint) "
                                          "cannot be re-hashed into max parallelism " + std::to_string(max_parallelism) +
                                          " (restore at the old max parallelism, take a canonical savepoint and "
                                          "re-hash that)");
        }
        if (os->max_parallelism != max_parallelism) {
          return Status::invalid_argument(what + ": the checkpoint has max parallelism " + std::to_string(os->max_parallelism) +
                                          ", the job " + std::to_string(max_parallelism) +
                                          " (leave pipeline.max-parallelism unset to adopt the checkpoint's, or restore "
                                          "a savepoint with --rehash-key-groups)");
        }
        const auto& ih = *st.incremental_keyed_state;
        if (!ih.range.intersection(range).is_empty()) {
          IncrementalRestoreHandle h;
          h.range = ih.range;
          h.backend_id = ih.backend_id;
          h.checkpoint_id = ih.checkpoint_id;
          h.state_meta = ih.state_meta;
          h.what = std::string(md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ") +
                   std::to_string(md.checkpoint_id.value()) + " (" + location + ") operator '" +
                   os->operator_name + "' subtask " + std::to_string(st.subtask_index) + " incremental keyed state";
          for (const auto* list : {&ih.shared_files, &ih.private_files}) {
            const bool shared = list == &ih.shared_files;
            for (const checkpoint::IncrementalFile& f : *list) {
              IncrementalRestoreFile rf;
              rf.local_name = f.local_name;
              rf.size_bytes = f.file.size_bytes;
              rf.checksum = f.file.checksum;
              auto path = storage.file_path(location, f.file.relative_path);
              if (!path) {
                return Status::failed_precondition(h.what + ": checkpoint storage " + storage.describe() +
                                                   " cannot read the file '" + f.file.relative_path + "'");
              }
              rf.path = *path;
              SLUICE_ASSIGN_OR_RETURN(rf.file_system, storage.file_system(location));
              if (shared && reuse == SharedFileReuse::kReuse) {
                rf.reusable_path = storage.rebase_shared_path(location, f.file.relative_path).value_or("");
              }
              (shared ? h.shared_files : h.private_files).push_back(std::move(rf));
            }
          }
          r.incremental_handles.push_back(std::move(h));
        }
      }
      if (st.keyed_state && rehashing) {
        const auto& kh = *st.keyed_state;
        SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, storage.read_state(location, kh.stream));
        if (kh.offsets.size() != static_cast<size_t>(kh.range.num_key_groups()) + 1 || kh.offsets.back() != bytes.size()) {
          return Status::corruption(what + ": keyed state offsets do not match the state file of " +
                                    std::to_string(bytes.size()) + " bytes");
        }
        rehash_files.push_back(std::move(bytes));
        const std::vector<uint8_t>& file = rehash_files.back();
        for (size_t i = 0; i + 1 < kh.offsets.size(); ++i) {
          uint64_t b = kh.offsets[i], e = kh.offsets[i + 1];
          if (b > e) return Status::corruption(what + ": bad offsets for key group " + std::to_string(kh.range.start() + static_cast<int32_t>(i)));
          if (e > b) rehash_input.push_back({file.data() + b, static_cast<size_t>(e - b)});
        }
      } else if (st.keyed_state && !range.is_empty()) {
        if (os->max_parallelism != max_parallelism) {
          return Status::invalid_argument(what + ": the checkpoint has max parallelism " + std::to_string(os->max_parallelism) +
                                          ", the job " + std::to_string(max_parallelism) +
                                          " (leave pipeline.max-parallelism unset to adopt the checkpoint's, or restore "
                                          "a savepoint with --rehash-key-groups)");
        }
        const auto& kh = *st.keyed_state;
        KeyGroupRange common = kh.range.intersection(range);
        if (!common.is_empty()) {
          SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, storage.read_state(location, kh.stream));
          if (kh.offsets.size() != static_cast<size_t>(kh.range.num_key_groups()) + 1 || kh.offsets.back() != bytes.size()) {
            return Status::corruption(what + ": keyed state offsets do not match the state file of " +
                                      std::to_string(bytes.size()) + " bytes");
          }
          for (KeyGroup kg : common) {
            auto i = static_cast<size_t>(kg.value() - kh.range.start());
            uint64_t b = kh.offsets[i], e = kh.offsets[i + 1];
            if (b > e || e > bytes.size()) return Status::corruption(what + ": bad offsets for key group " + std::to_string(kg.value()));
            if (e > b) r.key_groups.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(b), bytes.begin() + static_cast<std::ptrdiff_t>(e));
          }
        }
      }
      if (st.operator_state) {
        if (st.subtask_index < 0 || st.subtask_index >= os->parallelism) {
          return Status::corruption(what + ": subtask index " + std::to_string(st.subtask_index) + " out of range");
        }
        SLUICE_ASSIGN_OR_RETURN(old_operator_states[static_cast<size_t>(st.subtask_index)],
                                storage.read_state(location, *st.operator_state));
      }
    }
    if (!rehash_input.empty()) {
      SLUICE_ASSIGN_OR_RETURN(r.key_groups, rehash_key_groups(rehash_input, max_parallelism, range,
                                                              what + " (re-hashing its keys into " +
                                                              std::to_string(max_parallelism) + " key groups)"));
    }
    bool any_operator_state = false;
    for (const auto& b : old_operator_states) any_operator_state |= !b.empty();
    if (any_operator_state) {
      auto redistributed = redistribute_operator_state(old_operator_states, subtask, c.parallelism);
      if (!redistributed.is_ok()) return redistributed.status().with_context(what);
      r.operator_state = std::move(redistributed).value();
    }
    out.emplace(c.operator_id, std::move(r));
  }
  return out;
}

Status check_restore_backend(const CheckpointMetadata& md, const std::string& location,
                             std::string_view state_backend_type) {
  SLUICE_ASSIGN_OR_RETURN(StateBackendKind configured, parse_state_backend_type(state_backend_type));
  const std::string configured_name(state_backend_kind_name(configured));
  if (!md.is_native_savepoint()) {
    if (configured == StateBackendKind::kRocksDB || !md.has_incremental_state()) return Status::ok();
    const char* what = md.type == checkpoint::SnapshotType::kSavepoint ? "savepoint " : "checkpoint ";
    return Status::invalid_argument(
        what + std::to_string(md.checkpoint_id.value()) + " (" + location + ") holds incremental RocksDB snapshots (execution.checkpointing.incremental), and this job "
        "is configured with state.backend.type " + configured_name + ": incremental state restores only into the "
        "RocksDB state backend (restore it with state.backend.type: rocksdb, take a canonical savepoint there - "
        "`sluice savepoint JOB` - and restore that)");
  }
  if (md.state_backend == configured_name) return Status::ok();
  return Status::invalid_argument(
      "savepoint " + std::to_string(md.checkpoint_id.value()) + " (" + location + ") is in the NATIVE format of the " +
      (md.state_backend.empty() ? std::string("unknown") : md.state_backend) +
      " state backend, and this job is configured with state.backend.type " + configured_name +
      ": a native savepoint restores only into the backend that took it (restore it with state.backend.type: " +
      (md.state_backend.empty() ? std::string("?") : md.state_backend) +
      ", take a canonical savepoint there - `sluice savepoint JOB --type canonical` - and restore that)");
}

Status check_channel_state_heads(const CheckpointMetadata& md, const std::vector<std::string>& head_operator_ids) {
  std::set<std::string> heads(head_operator_ids.begin(), head_operator_ids.end());
  for (const auto& op : md.operators) {
    if (heads.count(op.operator_id)) continue;
    for (const auto& st : op.subtasks) {
      if (!st.channel_state) continue;
      return Status::invalid_argument(
          "checkpoint " + std::to_string(md.checkpoint_id.value()) + " holds in-flight data (channel state) of "
          "operator '" + op.operator_name + "' (" + op.operator_id + ") subtask " + std::to_string(st.subtask_index) +
          ", which is not the head of an operator chain in this job (the chaining changed); restoring would drop "
          "those records (restore with the chaining the checkpoint was taken with)");
    }
  }
  return Status::ok();
}

Result<std::optional<std::vector<uint8_t>>> restored_enumerator_state(const CheckpointMetadata& md,
                                                                      const std::string& location,
                                                                      checkpoint::CheckpointStorage& storage,
                                                                      const std::string& source_operator_id) {
  const OperatorState* os = find_operator_state(md, source_operator_id);
  if (os == nullptr) return std::optional<std::vector<uint8_t>>();
  for (const auto& st : os->subtasks) {
    if (st.subtask_index != 0 || !st.operator_state) continue;
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, storage.read_state(location, *st.operator_state));
    SLUICE_ASSIGN_OR_RETURN(auto states, decode_operator_state(bytes.data(), bytes.size(),
                                                               "operator state of source '" + os->operator_name + "'"));
    for (const auto& s : states) {
      if (s.name != kSourceEnumeratorStateName) continue;
      if (s.elements.size() != 1) {
        return Status::corruption("source '" + os->operator_name + "': expected one enumerator state, found " +
                                  std::to_string(s.elements.size()));
      }
      auto v = deserialize_bytes<std::vector<uint8_t>>(reinterpret_cast<const uint8_t*>(s.elements[0].data()),
                                                       s.elements[0].size(), "enumerator state");
      if (!v.is_ok()) return v.status();
      return std::optional<std::vector<uint8_t>>(std::move(v).value());
    }
  }
  return std::optional<std::vector<uint8_t>>();
}

}  // namespace sluice::cluster
