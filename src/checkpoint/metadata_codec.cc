#include "checkpoint/metadata_codec.h"

#include <xxhash.h>

#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/proto/checkpoint_metadata.pb.h"
#include "fs/path.h"
#include "sluice/state/key_group.h"

namespace sluice::checkpoint {
namespace {

namespace pb = ::sluice::checkpoint::proto;

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool is_hex32(std::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A path relative to the job directory that cannot escape it.
bool is_safe_relative_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    size_t end = slash == std::string::npos ? p.size() : slash;
    std::string_view part(p.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

// An entropy-injected data file (checkpoint_layout.h): "<scheme>://<authority>/<key>" whose key cannot climb.
bool is_safe_absolute_path(const std::string& p) {
  if (!is_absolute_handle_path(p)) return false;
  const size_t root = fs::uri_root_length(p);
  return root < p.size() && p[root] == '/' && is_safe_relative_path(p.substr(root + 1));
}

// Whether an absolute path ends in "<dir>/<file name>" with `dir` the last components of its folder. Entropy-injected
// files (filesystem_checkpoint_storage.h) lie in their job folder: a checkpoint's own in "<job-id>/chk-<n>/", shared
// ones in "<job-id>/shared/". Any other absolute path would let a `_metadata` name an arbitrary file as the
// checkpoint's own, which deleting the checkpoint (a claimed one's discard_location) then removed.
bool lies_in(const std::string& p, std::string_view dir) {
  const std::string parent = fs::path_parent(p);
  return parent.size() > dir.size() && parent.ends_with(dir) && parent[parent.size() - dir.size() - 1] == '/';
}

// The folder of a checkpoint's own entropy-injected files, relative to the checkpoint directory: "<job-id>/chk-<n>".
std::string own_data_dir(const CheckpointMetadata& m) {
  return m.job_id.to_hex() + "/" + checkpoint_dir_name(m.checkpoint_id);
}

Status validate_handle(const StreamStateHandle& h, const std::string& where, const std::string& own_dir) {
  if (h.is_inline()) {
    if (h.inline_bytes.size() != h.size_bytes) {
      return Status::invalid_argument(where + ": inline handle holds " + std::to_string(h.inline_bytes.size()) +
                                      " bytes but says size " + std::to_string(h.size_bytes));
    }
    if (XXH3_64bits(h.inline_bytes.data(), h.inline_bytes.size()) != h.checksum) {
      return Status::invalid_argument(where + ": inline bytes do not match the handle's checksum");
    }
    return Status::ok();
  }
  if (!h.inline_bytes.empty()) {
    return Status::invalid_argument(where + ": file handle '" + h.relative_path + "' also carries inline bytes");
  }
  if (is_safe_relative_path(h.relative_path)) return Status::ok();
  if (!is_safe_absolute_path(h.relative_path)) {
    return Status::invalid_argument(where + ": file path '" + h.relative_path +
                                    "' is not a relative path inside the job directory (nor the absolute URI of an entropy-injected file)");
  }
  if (!lies_in(h.relative_path, own_dir)) {
    return Status::invalid_argument(where + ": file path '" + h.relative_path +
                                    "' is an absolute URI outside the checkpoint's own folder (expected an "
                                    "entropy-injected file in .../" + own_dir + "/)");
  }
  return Status::ok();
}

// A shared file: "shared/<name>" of this job, or "../<job-id>/shared/<name>" of a sibling job (claimed).
Status validate_shared_path(const std::string& p, const std::string& where) {
  if (is_safe_absolute_path(p)) {  // entropy-injected: ".../<job-id>/shared/<name>"
    const std::string parent = fs::path_parent(p);
    if (!lies_in(p, kSharedDirName) || !is_hex32(fs::path_file_name(fs::path_parent(parent)))) {
      return Status::invalid_argument(where + ": shared file path '" + p +
                                      "' is not inside a job's shared/ folder (expected .../<job-id>/shared/<name>)");
    }
    return Status::ok();
  }
  std::string rest = p;
  if (p.rfind("../", 0) == 0) {
    size_t slash = p.find('/', 3);
    if (slash == std::string::npos || !is_hex32(std::string_view(p).substr(3, slash - 3))) {
      return Status::invalid_argument(where + ": shared file path '" + p +
                                      "' leaves the job directory other than as ../<job-id>/shared/<name>");
    }
    rest = p.substr(slash + 1);
  }
  if (rest.rfind("shared/", 0) != 0 || !is_safe_relative_path(rest)) {
    return Status::invalid_argument(where + ": shared file path '" + p + "' is not inside a shared/ folder");
  }
  return Status::ok();
}

// `native_savepoint`: the handle of a native savepoint, whose SST files sit in the savepoint folder under plain
// names (none reused); in a checkpoint they are in a shared/ folder.
Status validate_incremental(const IncrementalKeyedStateHandle& k, int32_t max_parallelism, const std::string& where,
                            bool native_savepoint, const std::string& own_dir) {
  if (!k.range.is_empty() && (k.range.start() < 0 || k.range.end_inclusive() >= max_parallelism)) {
    return Status::invalid_argument(where + ": key-group range " + k.range.to_string() + " outside [0, " +
                                    std::to_string(max_parallelism - 1) + "]");
  }
  if (!is_hex32(k.backend_id)) {
    return Status::invalid_argument(where + ": backend id '" + k.backend_id + "' is not 32 lowercase hex digits");
  }
  if (k.checkpoint_id.value() < 0) return Status::invalid_argument(where + ": negative checkpoint id");
  std::set<std::string> names;
  for (const auto* list : {&k.shared_files, &k.private_files}) {
    const bool shared = list == &k.shared_files;
    for (const IncrementalFile& f : *list) {
      const std::string fw = where + " file '" + f.local_name + "'";
      if (f.local_name.empty() || f.local_name.find('/') != std::string::npos || f.local_name == "." ||
          f.local_name == "..") {
        return Status::invalid_argument(where + ": local file name '" + f.local_name + "' is not a plain file name");
      }
      if (!names.insert(f.local_name).second) return Status::invalid_argument(fw + " appears twice");
      if (f.file.is_inline() || !f.file.inline_bytes.empty()) {
        return Status::invalid_argument(fw + ": incremental files are never inline");
      }
      if (shared && native_savepoint) {
        if (f.reused) return Status::invalid_argument(fw + ": a native savepoint reuses no file of a checkpoint");
        SLUICE_RETURN_IF_ERROR(validate_handle(f.file, fw, own_dir));
      } else if (shared) {
        SLUICE_RETURN_IF_ERROR(validate_shared_path(f.file.relative_path, fw));
      } else {
        if (f.reused) return Status::invalid_argument(fw + ": a private file cannot be reused");
        SLUICE_RETURN_IF_ERROR(validate_handle(f.file, fw, own_dir));
      }
    }
  }
  return Status::ok();
}

Status validate_keyed(const KeyGroupsStateHandle& k, int32_t max_parallelism, const std::string& where,
                      const std::string& own_dir) {
  if (!k.range.is_empty() && (k.range.start() < 0 || k.range.end_inclusive() >= max_parallelism)) {
    return Status::invalid_argument(where + ": key-group range " + k.range.to_string() + " outside [0, " +
                                    std::to_string(max_parallelism - 1) + "]");
  }
  size_t expected = static_cast<size_t>(k.range.num_key_groups()) + 1;
  if (k.offsets.size() != expected) {
    return Status::invalid_argument(where + ": " + std::to_string(k.offsets.size()) + " key-group offsets for range " +
                                    k.range.to_string() + ", expected " + std::to_string(expected));
  }
  for (size_t i = 1; i < k.offsets.size(); ++i) {
    if (k.offsets[i] < k.offsets[i - 1]) {
      return Status::invalid_argument(where + ": key-group offsets decrease at index " + std::to_string(i));
    }
  }
  if (k.offsets.back() != k.stream.size_bytes) {
    return Status::invalid_argument(where + ": last key-group offset " + std::to_string(k.offsets.back()) +
                                    " is not the stream size " + std::to_string(k.stream.size_bytes));
  }
  return validate_handle(k.stream, where + " keyed state", own_dir);
}

// A savepoint is self-contained and relocatable: no shared files (a canonical one holds full keyed state only, a
// native one the database files of RocksDB in its own folder), always aligned (no channel state), and its files
// named without a folder, so they resolve inside the savepoint's own folder wherever it is moved
// (checkpoint_files.h, handle_file_path).
Status validate_self_contained(const OperatorSubtaskState& st, SavepointFormatType format, const std::string& where) {
  std::vector<const StreamStateHandle*> files{st.keyed_state ? &st.keyed_state->stream : nullptr,
                                              st.operator_state ? &*st.operator_state : nullptr};
  if (st.incremental_keyed_state) {
    if (format != SavepointFormatType::kNative) {
      return Status::invalid_argument(where + ": a canonical savepoint cannot hold RocksDB files (an incremental "
                                              "keyed state handle); only a native one can");
    }
    for (const auto* list : {&st.incremental_keyed_state->shared_files, &st.incremental_keyed_state->private_files}) {
      for (const IncrementalFile& f : *list) files.push_back(&f.file);
    }
  }
  if (st.channel_state) return Status::invalid_argument(where + ": a savepoint is aligned and holds no channel state");
  for (const StreamStateHandle* h : files) {
    if (h != nullptr && !h->is_inline() && h->relative_path.find('/') != std::string::npos) {
      return Status::invalid_argument(where + ": savepoint file '" + h->relative_path +
                                      "' is not a plain file name inside the savepoint folder");
    }
  }
  return Status::ok();
}

// ---- model -> protobuf ----

void to_proto(const StreamStateHandle& h, pb::StreamStateHandle* out) {
  out->set_relative_path(h.relative_path);
  out->set_inline_bytes(h.inline_bytes.data(), h.inline_bytes.size());
  out->set_size_bytes(h.size_bytes);
  out->set_checksum(h.checksum);
}

void to_proto(const OperatorSubtaskState& st, pb::OperatorSubtaskState* pst) {
  pst->set_subtask_index(st.subtask_index);
  if (st.keyed_state) {
    pb::KeyGroupsStateHandle* pk = pst->mutable_keyed_state();
    pk->set_range_start(st.keyed_state->range.start());
    pk->set_range_end_inclusive(st.keyed_state->range.end_inclusive());
    for (uint64_t o : st.keyed_state->offsets) pk->add_offsets(o);
    to_proto(st.keyed_state->stream, pk->mutable_stream());
  }
  if (st.incremental_keyed_state) {
    const IncrementalKeyedStateHandle& k = *st.incremental_keyed_state;
    pb::IncrementalKeyedStateHandle* pk = pst->mutable_incremental_keyed_state();
    pk->set_range_start(k.range.start());
    pk->set_range_end_inclusive(k.range.end_inclusive());
    pk->set_backend_id(k.backend_id);
    pk->set_checkpoint_id(k.checkpoint_id.value());
    for (const IncrementalFile& f : k.shared_files) {
      pb::IncrementalFile* pf = pk->add_shared_files();
      pf->set_local_name(f.local_name);
      to_proto(f.file, pf->mutable_file());
      pf->set_reused(f.reused);
    }
    for (const IncrementalFile& f : k.private_files) {
      pb::IncrementalFile* pf = pk->add_private_files();
      pf->set_local_name(f.local_name);
      to_proto(f.file, pf->mutable_file());
    }
    pk->set_state_meta(k.state_meta.data(), k.state_meta.size());
  }
  if (st.operator_state) to_proto(*st.operator_state, pst->mutable_operator_state());
  if (st.channel_state) to_proto(*st.channel_state, pst->mutable_channel_state());
}

void to_proto(const CheckpointMetadata& m, pb::CheckpointMetadata* out) {
  out->set_checkpoint_id(m.checkpoint_id.value());
  out->set_job_id(m.job_id.to_hex());
  for (const JobId& id : m.lineage) out->add_lineage_job_ids(id.to_hex());
  out->set_trigger_timestamp_ms(m.trigger_timestamp_ms);
  out->set_type(m.type == SnapshotType::kSavepoint ? pb::SAVEPOINT : pb::CHECKPOINT);
  out->set_savepoint_format(m.savepoint_format == SavepointFormatType::kNative ? pb::NATIVE : pb::CANONICAL);
  out->set_state_backend(m.state_backend);
  for (const OperatorState& op : m.operators) {
    pb::OperatorState* pop = out->add_operators();
    pop->set_operator_id(op.operator_id);
    pop->set_operator_name(op.operator_name);
    pop->set_parallelism(op.parallelism);
    pop->set_max_parallelism(op.max_parallelism);
    pop->set_graph_position(op.graph_position);
    for (const OperatorSubtaskState& st : op.subtasks) to_proto(st, pop->add_subtasks());
  }
  for (const auto& [k, v] : m.properties) {
    pb::Property* p = out->add_properties();
    p->set_key(k);
    p->set_value(v);
  }
}

// ---- protobuf -> model ----

StreamStateHandle from_proto(const pb::StreamStateHandle& h) {
  StreamStateHandle out;
  out.relative_path = h.relative_path();
  out.inline_bytes.assign(h.inline_bytes().begin(), h.inline_bytes().end());
  out.size_bytes = h.size_bytes();
  out.checksum = h.checksum();
  return out;
}

// `operator_id`: for messages.
Result<OperatorSubtaskState> from_proto(const pb::OperatorSubtaskState& pst, const std::string& operator_id) {
  OperatorSubtaskState st;
  st.subtask_index = pst.subtask_index();
  if (pst.has_keyed_state()) {
    const pb::KeyGroupsStateHandle& pk = pst.keyed_state();
    if (pk.range_start() < 0) {
      return Status::invalid_argument("operator '" + operator_id + "' subtask " +
                                      std::to_string(st.subtask_index) + ": negative key-group range start");
    }
    KeyGroupsStateHandle k;
    k.range = KeyGroupRange(pk.range_start(), pk.range_end_inclusive());
    k.offsets.assign(pk.offsets().begin(), pk.offsets().end());
    k.stream = from_proto(pk.stream());
    st.keyed_state = std::move(k);
  }
  if (pst.has_incremental_keyed_state()) {
    const pb::IncrementalKeyedStateHandle& pk = pst.incremental_keyed_state();
    if (pk.range_start() < 0) {
      return Status::invalid_argument("operator '" + operator_id + "' subtask " +
                                      std::to_string(st.subtask_index) + ": negative key-group range start");
    }
    IncrementalKeyedStateHandle k;
    k.range = KeyGroupRange(pk.range_start(), pk.range_end_inclusive());
    k.backend_id = pk.backend_id();
    k.checkpoint_id = CheckpointId(pk.checkpoint_id());
    for (const pb::IncrementalFile& pf : pk.shared_files()) {
      k.shared_files.push_back(IncrementalFile{pf.local_name(), from_proto(pf.file()), pf.reused()});
    }
    for (const pb::IncrementalFile& pf : pk.private_files()) {
      k.private_files.push_back(IncrementalFile{pf.local_name(), from_proto(pf.file()), pf.reused()});
    }
    k.state_meta.assign(pk.state_meta().begin(), pk.state_meta().end());
    st.incremental_keyed_state = std::move(k);
  }
  if (pst.has_operator_state()) st.operator_state = from_proto(pst.operator_state());
  if (pst.has_channel_state()) st.channel_state = from_proto(pst.channel_state());
  return st;
}

Result<CheckpointMetadata> from_proto(const pb::CheckpointMetadata& m) {
  CheckpointMetadata out;
  out.checkpoint_id = CheckpointId(m.checkpoint_id());
  if (!JobId::parse(m.job_id(), &out.job_id)) {
    return Status::invalid_argument("job id '" + m.job_id() + "' is not 32 lowercase hex digits");
  }
  for (const std::string& hex : m.lineage_job_ids()) {
    JobId id;
    if (!JobId::parse(hex, &id)) {
      return Status::invalid_argument("lineage job id '" + hex + "' is not 32 lowercase hex digits");
    }
    out.lineage.push_back(id);
  }
  out.trigger_timestamp_ms = m.trigger_timestamp_ms();
  switch (m.type()) {
    case pb::CHECKPOINT: out.type = SnapshotType::kCheckpoint; break;
    case pb::SAVEPOINT: out.type = SnapshotType::kSavepoint; break;
    default: return Status::invalid_argument("unknown snapshot type " + std::to_string(m.type()));
  }
  switch (m.savepoint_format()) {
    case pb::CANONICAL: out.savepoint_format = SavepointFormatType::kCanonical; break;
    case pb::NATIVE: out.savepoint_format = SavepointFormatType::kNative; break;
    default: return Status::invalid_argument("unknown savepoint format " + std::to_string(m.savepoint_format()));
  }
  out.state_backend = m.state_backend();
  out.operators.reserve(static_cast<size_t>(m.operators_size()));
  for (const pb::OperatorState& pop : m.operators()) {
    OperatorState op;
    op.operator_id = pop.operator_id();
    op.operator_name = pop.operator_name();
    op.parallelism = pop.parallelism();
    op.max_parallelism = pop.max_parallelism();
    op.graph_position = pop.graph_position();
    for (const pb::OperatorSubtaskState& pst : pop.subtasks()) {
      SLUICE_ASSIGN_OR_RETURN(OperatorSubtaskState st, from_proto(pst, op.operator_id));
      op.subtasks.push_back(std::move(st));
    }
    out.operators.push_back(std::move(op));
  }
  for (const pb::Property& p : m.properties()) {
    if (!out.properties.emplace(p.key(), p.value()).second) {
      return Status::invalid_argument("property '" + p.key() + "' appears twice");
    }
  }
  return out;
}

}  // namespace

Status validate_metadata(const CheckpointMetadata& m) {
  if (m.checkpoint_id.value() < 0) {
    return Status::invalid_argument("negative checkpoint id " + std::to_string(m.checkpoint_id.value()));
  }
  if (m.type != SnapshotType::kCheckpoint && m.type != SnapshotType::kSavepoint) {
    return Status::invalid_argument("unknown snapshot type " + std::to_string(static_cast<int>(m.type)));
  }
  if (m.type == SnapshotType::kCheckpoint && m.savepoint_format != SavepointFormatType::kCanonical) {
    return Status::invalid_argument("a checkpoint has no savepoint format (only savepoints are native)");
  }
  const std::string own_dir = own_data_dir(m);
  std::set<std::string> ids;
  for (const OperatorState& op : m.operators) {
    std::string where = "operator '" + op.operator_id + "'";
    if (op.operator_id.empty()) return Status::invalid_argument("an operator has an empty operator id");
    if (!ids.insert(op.operator_id).second) return Status::invalid_argument(where + " appears twice");
    if (op.parallelism < 1 || op.max_parallelism < op.parallelism || op.max_parallelism > kUpperBoundMaxParallelism) {
      return Status::invalid_argument(where + ": parallelism " + std::to_string(op.parallelism) +
                                      " and max parallelism " + std::to_string(op.max_parallelism) +
                                      " must satisfy 1 <= parallelism <= max parallelism <= " +
                                      std::to_string(kUpperBoundMaxParallelism));
    }
    int32_t prev = -1;
    for (const OperatorSubtaskState& st : op.subtasks) {
      std::string swhere = where + " subtask " + std::to_string(st.subtask_index);
      if (st.subtask_index <= prev || st.subtask_index >= op.parallelism) {
        return Status::invalid_argument(swhere + ": subtask indexes must be increasing and below parallelism " +
                                        std::to_string(op.parallelism));
      }
      prev = st.subtask_index;
      if (m.type == SnapshotType::kSavepoint) {
        SLUICE_RETURN_IF_ERROR(validate_self_contained(st, m.savepoint_format, swhere));
      }
      if (st.keyed_state) {
        SLUICE_RETURN_IF_ERROR(validate_keyed(*st.keyed_state, op.max_parallelism, swhere, own_dir));
      }
      if (st.incremental_keyed_state) {
        if (st.keyed_state) {
          return Status::invalid_argument(swhere + ": has both a full and an incremental keyed state handle");
        }
        SLUICE_RETURN_IF_ERROR(validate_incremental(*st.incremental_keyed_state, op.max_parallelism,
                                                    swhere + " incremental keyed state", m.is_native_savepoint(),
                                                    own_dir));
      }
      if (st.operator_state) {
        SLUICE_RETURN_IF_ERROR(validate_handle(*st.operator_state, swhere + " operator state", own_dir));
      }
      if (st.channel_state) {
        SLUICE_RETURN_IF_ERROR(validate_handle(*st.channel_state, swhere + " channel state", own_dir));
      }
    }
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> encode_metadata(const CheckpointMetadata& metadata) {
  SLUICE_RETURN_IF_ERROR(validate_metadata(metadata).with_context(
      "checkpoint " + std::to_string(metadata.checkpoint_id.value()) + " metadata"));
  pb::CheckpointMetadata msg;
  to_proto(metadata, &msg);
  size_t payload = msg.ByteSizeLong();
  if (payload > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::invalid_argument("checkpoint " + std::to_string(metadata.checkpoint_id.value()) +
                                    " metadata: " + std::to_string(payload) +
                                    " bytes exceed the 2 GiB limit of one metadata file (inline less state)");
  }
  std::vector<uint8_t> out;
  out.reserve(kMetadataHeaderBytes + payload + kMetadataTrailerBytes);
  out.insert(out.end(), std::begin(kMetadataMagic), std::end(kMetadataMagic));
  put_u32(out, metadata.required_format_version());
  put_u64(out, payload);
  out.resize(kMetadataHeaderBytes + payload);
  if (!msg.SerializeToArray(out.data() + kMetadataHeaderBytes, static_cast<int>(payload))) {
    return Status::internal("checkpoint metadata: protobuf serialization failed");
  }
  put_u64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

Result<CheckpointMetadata> decode_metadata(std::span<const uint8_t> bytes, std::string_view what) {
  const std::string w(what);
  const size_t frame = kMetadataHeaderBytes + kMetadataTrailerBytes;
  if (bytes.size() < frame) {
    return Status::corruption(w + ": truncated checkpoint metadata (" + std::to_string(bytes.size()) +
                              " bytes; a metadata file has at least " + std::to_string(frame) + ")");
  }
  if (std::memcmp(bytes.data(), kMetadataMagic, sizeof(kMetadataMagic)) != 0) {
    return Status::corruption(w + ": not a Sluice checkpoint metadata file (magic bytes are not \"SLCK\")");
  }
  const uint32_t version = get_u32(bytes.data() + 4);
  const uint64_t payload = get_u64(bytes.data() + 8);
  if (payload != bytes.size() - frame) {
    return Status::corruption(w + ": truncated or damaged checkpoint metadata (header says " +
                              std::to_string(payload) + " payload bytes, the file has " +
                              std::to_string(bytes.size() - frame) + ")");
  }
  const size_t body = kMetadataHeaderBytes + static_cast<size_t>(payload);
  if (XXH3_64bits(bytes.data(), body) != get_u64(bytes.data() + body)) {
    return Status::corruption(w + ": checkpoint metadata checksum mismatch (flipped or overwritten bytes)");
  }
  if (version == 0) return Status::corruption(w + ": checkpoint metadata format version 0 is invalid");
  if (version > CheckpointMetadata::kFormatVersion) {
    return Status::failed_precondition(w + ": checkpoint metadata format version " + std::to_string(version) +
                                       " was written by a newer Sluice; this build reads versions up to " +
                                       std::to_string(CheckpointMetadata::kFormatVersion));
  }
  pb::CheckpointMetadata msg;
  if (payload > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      !msg.ParseFromArray(bytes.data() + kMetadataHeaderBytes, static_cast<int>(payload))) {
    return Status::corruption(w + ": checkpoint metadata payload does not decode");
  }
  auto m = from_proto(msg);
  if (!m.is_ok()) return Status::corruption(w + ": " + m.status().message());
  if (version < CheckpointMetadata::kFirstIncrementalFormatVersion && m->has_incremental_state()) {
    return Status::corruption(w + ": format version " + std::to_string(version) +
                              " metadata holds an incremental keyed state handle (introduced in version 2)");
  }
  if (version < CheckpointMetadata::kFirstChannelStateFormatVersion && m->has_channel_state()) {
    return Status::corruption(w + ": format version " + std::to_string(version) +
                              " metadata holds channel state (introduced in version 3)");
  }
  m->format_version = version;
  Status valid = validate_metadata(*m);
  if (!valid.is_ok()) return Status::corruption(w + ": " + valid.message());
  return m;
}

std::vector<uint8_t> encode_subtask_states(const std::map<std::string, OperatorSubtaskState>& states) {
  pb::SubtaskStates msg;
  for (const auto& [operator_id, state] : states) {
    pb::SubtaskStateEntry* e = msg.add_entries();
    e->set_operator_id(operator_id);
    to_proto(state, e->mutable_state());
  }
  std::vector<uint8_t> out(msg.ByteSizeLong());
  msg.SerializeToArray(out.data(), static_cast<int>(out.size()));
  return out;
}

Result<std::map<std::string, OperatorSubtaskState>> decode_subtask_states(std::span<const uint8_t> bytes,
                                                                          std::string_view what) {
  pb::SubtaskStates msg;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !msg.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::corruption(std::string(what) + ": " + std::to_string(bytes.size()) +
                              " bytes are not a subtask's acknowledged state (SubtaskStates)");
  }
  std::map<std::string, OperatorSubtaskState> out;
  for (const pb::SubtaskStateEntry& e : msg.entries()) {
    auto st = from_proto(e.state(), e.operator_id());
    if (!st.is_ok()) return Status::corruption(std::string(what) + ": " + st.status().message());
    if (!out.emplace(e.operator_id(), std::move(*st)).second) {
      return Status::corruption(std::string(what) + ": operator '" + e.operator_id() + "' appears twice");
    }
  }
  return out;
}

}  // namespace sluice::checkpoint
