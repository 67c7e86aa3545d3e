#include "checkpoint/checkpoint_files.h"

#include <xxhash.h>

#include <algorithm>

#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/metadata_codec.h"

namespace sluice::checkpoint {
namespace {

Status check_digest(const std::string& what, uint64_t size, uint64_t checksum, const StreamStateHandle& h) {
  if (size != h.size_bytes) {
    return Status::corruption(what + ": state file is damaged: it has " + std::to_string(size) +
                              " bytes, the checkpoint expects " + std::to_string(h.size_bytes) +
                              " (truncated or overwritten)");
  }
  if (checksum != h.checksum) {
    return Status::corruption(what + ": state file is damaged: checksum mismatch (flipped or overwritten bytes)");
  }
  return Status::ok();
}

Status check_inline(const StreamStateHandle& h) {
  return check_digest("inline state", h.inline_bytes.size(), XXH3_64bits(h.inline_bytes.data(), h.inline_bytes.size()),
                      h);
}

Status missing_state_file(const std::string& path) {
  return Status::not_found(path + ": state file is missing (the checkpoint refers to it, but it does not exist)");
}

}  // namespace

Result<CheckpointLocation> locate_checkpoint(fs::FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fs.stat(path));
  CheckpointLocation loc;
  switch (kind) {
    case fs::PathKind::kMissing:
      return Status::not_found("no checkpoint at '" + path +
                               "' (expected a checkpoint's chk-<n> folder, a savepoint folder, or its _metadata file)");
    case fs::PathKind::kFile:
      loc.metadata_path = path;
      loc.checkpoint_dir = fs::path_parent(path);
      if (loc.checkpoint_dir.empty()) loc.checkpoint_dir = ".";
      break;
    case fs::PathKind::kDirectory:
      loc.checkpoint_dir = path;
      while (loc.checkpoint_dir.size() > 1 && loc.checkpoint_dir.back() == '/') loc.checkpoint_dir.pop_back();
      loc.metadata_path = fs::join_path(loc.checkpoint_dir, kMetadataFileName);
      break;
    case fs::PathKind::kOther:
      return Status::invalid_argument("'" + path + "' is neither a checkpoint folder nor a _metadata file");
  }
  loc.base_dir = fs::path_parent(loc.checkpoint_dir);
  if (loc.base_dir.empty()) loc.base_dir = ".";
  return loc;
}

Result<CheckpointMetadata> read_checkpoint_metadata(fs::FileSystem& fs, const CheckpointLocation& location) {
  auto bytes = fs.read_file(location.metadata_path);
  if (!bytes.is_ok()) {
    if (bytes.status().code() == StatusCode::kNotFound) {
      return Status::not_found("checkpoint metadata '" + location.metadata_path +
                               "' does not exist (the checkpoint is incomplete or was deleted)");
    }
    return bytes.status();
  }
  SLUICE_ASSIGN_OR_RETURN(CheckpointMetadata m, decode_metadata(*bytes, location.metadata_path));
  const std::string folder = fs::path_file_name(location.checkpoint_dir);
  auto folder_id = parse_checkpoint_dir_name(folder);
  if (folder_id && *folder_id != m.checkpoint_id) {
    return Status::corruption(location.metadata_path + ": holds checkpoint " + std::to_string(m.checkpoint_id.value()) +
                              " but lies in folder " + checkpoint_dir_name(*folder_id));
  }
  if (!folder_id) {
    // A checkpoint names its own files "chk-<n>/<file>" from its job directory (handle_file_path): in a renamed
    // folder they cannot be found, and "state file does not exist" would not say why.
    const std::string own = checkpoint_dir_name(m.checkpoint_id) + "/";
    for (const std::string& f : m.referenced_files()) {
      if (f.starts_with(own)) {
        return Status::failed_precondition(
            location.checkpoint_dir + ": checkpoint " + std::to_string(m.checkpoint_id.value()) +
            " refers to its files as '" + f + "', relative to its job directory, so it restores only from a folder "
            "named " + checkpoint_dir_name(m.checkpoint_id) + " (with the job's shared/ folder beside it when it is "
            "incremental); this one was renamed. Rename it back, or take a savepoint: savepoint folders can be "
            "moved and renamed");
      }
    }
  }
  return m;
}

std::string handle_file_path(const std::string& checkpoint_dir, const std::string& relative_path) {
  if (is_absolute_handle_path(relative_path)) return relative_path;
  if (relative_path.find('/') == std::string::npos) return fs::join_path(checkpoint_dir, relative_path);
  std::string base_dir = fs::path_parent(checkpoint_dir);
  if (base_dir.empty()) base_dir = ".";
  return fs::join_path(base_dir, relative_path);
}

std::vector<std::string> files_outside_checkpoint_dir(const CheckpointMetadata& metadata,
                                                      const CheckpointLocation& location) {
  const std::vector<std::string> shared = metadata.shared_files();
  // "/<job folder>/chk-<n>": the folder an entropy-injected twin of this location ends in.
  const std::string own = "/" + fs::path_file_name(location.base_dir) + "/" + fs::path_file_name(location.checkpoint_dir);
  std::vector<std::string> out;
  for (const std::string& f : metadata.referenced_files()) {
    if (!is_absolute_handle_path(f) || std::binary_search(shared.begin(), shared.end(), f)) continue;
    if (fs::path_parent(f).ends_with(own)) out.push_back(f);
  }
  return out;
}

Result<std::vector<uint8_t>> read_state_handle(fs::FileSystem& fs, const std::string& checkpoint_dir,
                                               const StreamStateHandle& handle) {
  if (handle.is_inline()) {
    SLUICE_RETURN_IF_ERROR(check_inline(handle));
    return handle.inline_bytes;
  }
  const std::string path = handle_file_path(checkpoint_dir, handle.relative_path);
  auto bytes = fs.read_file(path);
  if (!bytes.is_ok()) {
    if (bytes.status().code() == StatusCode::kNotFound) {
      return missing_state_file(path);
    }
    return bytes.status();
  }
  SLUICE_RETURN_IF_ERROR(check_digest(path, bytes->size(), XXH3_64bits(bytes->data(), bytes->size()), handle));
  return bytes;
}

Result<std::vector<uint8_t>> read_inline_state_handle(const StreamStateHandle& handle) {
  if (!handle.is_inline()) {
    return Status::invalid_argument("state file '" + handle.relative_path + "' where inline state was expected");
  }
  SLUICE_RETURN_IF_ERROR(check_inline(handle));
  return handle.inline_bytes;
}

Status check_state_handle(fs::FileSystem& fs, const std::string& checkpoint_dir, const StreamStateHandle& handle) {
  if (handle.is_inline()) return check_inline(handle);
  const std::string path = handle_file_path(checkpoint_dir, handle.relative_path);
  auto digest = fs.digest_file(path);
  if (!digest.is_ok()) {
    if (digest.status().code() == StatusCode::kNotFound) {
      return missing_state_file(path);
    }
    return digest.status();
  }
  return check_digest(path, digest->size_bytes, digest->checksum, handle);
}

}  // namespace sluice::checkpoint

namespace sluice::checkpoint {

Status check_restore_files(fs::FileSystem& fs, const std::string& checkpoint_dir, const CheckpointMetadata& metadata,
                           RestoreFileCheck check) {
  auto one = [&](const StreamStateHandle& h, const std::string& whose) -> Status {
    if (h.is_inline() || check == RestoreFileCheck::kChecksums) {
      return check_state_handle(fs, checkpoint_dir, h).with_context(whose);
    }
    const std::string path = handle_file_path(checkpoint_dir, h.relative_path);
    auto size = fs.file_size(path);
    if (!size.is_ok()) {
      if (size.status().code() == StatusCode::kNotFound) {
        return missing_state_file(path).with_context(whose);
      }
      return size.status().with_context(whose);
    }
    if (*size != h.size_bytes) {
      return Status::corruption(whose + ": " + path + ": state file is damaged: it has " + std::to_string(*size) +
                                " bytes, the checkpoint expects " + std::to_string(h.size_bytes) +
                                " (truncated or overwritten)");
    }
    return Status::ok();
  };
  for (const OperatorState& op : metadata.operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      const std::string whose = "checkpoint " + std::to_string(metadata.checkpoint_id.value()) + " operator '" +
                                op.operator_id + "' subtask index " + std::to_string(st.subtask_index);
      if (st.keyed_state) SLUICE_RETURN_IF_ERROR(one(st.keyed_state->stream, whose + " keyed state"));
      if (st.incremental_keyed_state) {
        for (const IncrementalFile& f : st.incremental_keyed_state->shared_files) {
          SLUICE_RETURN_IF_ERROR(one(f.file, whose + " incremental keyed state, shared file " + f.local_name));
        }
        for (const IncrementalFile& f : st.incremental_keyed_state->private_files) {
          SLUICE_RETURN_IF_ERROR(one(f.file, whose + " incremental keyed state, private file " + f.local_name));
        }
      }
      if (st.operator_state) SLUICE_RETURN_IF_ERROR(one(*st.operator_state, whose + " operator state"));
      if (st.channel_state) SLUICE_RETURN_IF_ERROR(one(*st.channel_state, whose + " channel state"));
    }
  }
  return Status::ok();
}

}  // namespace sluice::checkpoint
