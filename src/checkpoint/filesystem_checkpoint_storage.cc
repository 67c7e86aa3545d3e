#include "checkpoint/filesystem_checkpoint_storage.h"

#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint/byte_size_text.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/restore_path.h"
#include "fs/path.h"

namespace sluice::checkpoint {

namespace {
Status discarded_status(CheckpointId id) {
  return Status::cancelled("checkpoint " + std::to_string(id.value()) + " was aborted and its files discarded");
}
}  // namespace

struct FileSystemCheckpointStorage::Shared {
  // The filesystem of base_dir (or the one the options gave), and the registry that serves other paths: a
  // savepoint folder or a restored checkpoint on another scheme. `fs_error`: why base_dir has none.
  std::shared_ptr<fs::FileSystem> fs;
  Status fs_error;
  fs::FileSystemRegistry file_systems;
  std::string base_dir;  // without the entropy marker
  int64_t inline_threshold_bytes;
  std::shared_ptr<NameSource> names;
  // Entropy injection: the filesystem's marker and length, set only when base_dir's filesystem injects entropy and
  // the configured directory holds the marker; `entropy_dir` is that directory, marker included.
  std::optional<fs::EntropyInjection> entropy;
  std::string entropy_dir;

  std::mutex mu;
  std::optional<JobId> job;         // set by initialize() or initialize_for_savepoints()
  std::string job_dir;              // <base_dir>/<job-id>; empty for savepoints only
  bool savepoints_only = false;     // initialize_for_savepoints(): no job folder, no checkpoints
  std::set<int64_t> created_dirs;   // chk-<n> folders made durable by this run
  // Checkpoints discard() removed. A subtask's asynchronous part may still be writing one of them (it was
  // aborted or subsumed under it): its later writes must neither resurrect chk-<n>/ nor leave files in it.
  std::set<int64_t> discarded;
  std::set<int64_t> completed;  // checkpoints whose write_metadata succeeded
  // Shared files uploaded for each checkpoint that has not completed yet (relative paths). Discarding such a
  // checkpoint deletes them: no other checkpoint can refer to them (backends reuse only completed uploads).
  std::map<int64_t, std::vector<std::string>> pending_uploads;
  // Entropy data files (absolute paths) this run wrote for each checkpoint, besides shared ones: they are not below
  // chk-<n>/, so discard(n) deletes them one by one. Recorded before the file is written.
  std::map<int64_t, std::vector<std::string>> entropy_files;

  // Writers (stream_factory's mkdir, state files, uploads, `_metadata`) in flight per checkpoint, counted from
  // their "is it discarded?" check to their end, under `mu`. discard(n) removes chk-<n>/ only when none is in
  // flight; otherwise the last writer out removes it. So no writer can create chk-<n>/ or a file in it after the
  // discard removed it (the race a check-then-write had).
  std::map<int64_t, int> writers;
  // Savepoints (begin_savepoint): their folders, by id. Their files carry plain names, relative to that folder.
  std::map<int64_t, std::string> savepoint_dirs;

  // The folder of checkpoint or savepoint `id`; "" for a checkpoint before initialize() or with savepoints only.
  // Under `mu`.
  std::string folder_of_locked(CheckpointId id) const {
    auto sp = savepoint_dirs.find(id.value());
    if (sp != savepoint_dirs.end()) return sp->second;
    return job && !job_dir.empty() ? fs::join_path(job_dir, checkpoint_dir_name(id)) : std::string();
  }
  // The filesystem serving `path`: base_dir's for a path of its scheme, else the registry's.
  Result<std::shared_ptr<fs::FileSystem>> fs_for(const std::string& path) const {
    SLUICE_RETURN_IF_ERROR(fs_error);
    // Also for plain paths: "s3:/x" has no scheme yet is no local folder either (check_supported says so).
    SLUICE_RETURN_IF_ERROR(file_systems.check_supported(path, ""));
    std::string scheme = fs::uri_scheme(path);
    if ((scheme.empty() ? "file" : scheme) == fs->scheme()) return fs;
    return file_systems.for_path(path);
  }

  bool is_savepoint(CheckpointId id) {
    std::lock_guard lock(mu);
    return savepoint_dirs.count(id.value()) > 0;
  }

  bool is_discarded(CheckpointId id) {
    std::lock_guard lock(mu);
    return discarded.count(id.value()) > 0;
  }

  // Enters a writer of checkpoint `id`; kCancelled (nothing entered) once it is discarded.
  Status enter_writer(CheckpointId id) {
    std::lock_guard lock(mu);
    if (discarded.count(id.value()) > 0) return discarded_status(id);
    ++writers[id.value()];
    return Status::ok();
  }

  // Leaves; `written`: the file this writer created, if any. If the checkpoint was discarded meanwhile, removes
  // that file, and the whole chk-<n>/ if this was the last writer in flight; then returns kCancelled.
  Status leave_writer(CheckpointId id, const std::string& written) {
    bool last = false;
    std::string dir;
    {
      std::lock_guard lock(mu);
      auto it = writers.find(id.value());
      if (it != writers.end() && --it->second == 0) {
        writers.erase(it);
        last = true;
      }
      if (discarded.count(id.value()) == 0) return Status::ok();
      if (last) created_dirs.erase(id.value());
      if (last) dir = folder_of_locked(id);
    }
    if (!written.empty()) {
      if (auto f = fs_for(written); f.is_ok()) (void)(*f)->remove_file(written);
    }
    if (!dir.empty()) {
      if (auto f = fs_for(dir); f.is_ok()) (void)(*f)->remove_all(dir);
    }
    return discarded_status(id);
  }
  Status initialized_or_error() {
    std::lock_guard lock(mu);
    if (!job) return Status::failed_precondition("filesystem checkpoint storage '" + base_dir + "' is not initialized");
    return Status::ok();
  }
  Result<std::string> job_dir_or_error() {
    std::lock_guard lock(mu);
    if (!job) return Status::failed_precondition("filesystem checkpoint storage '" + base_dir + "' is not initialized");
    if (savepoints_only) {
      return Status::failed_precondition("job " + job->to_hex() + " takes savepoints only (periodic checkpointing "
                                         "is off: execution.checkpointing.interval is 0), so it has no checkpoint "
                                         "folder and takes no checkpoint");
    }
    return job_dir;
  }

  // Where the data file `rel` (relative to the job folder) of checkpoint `id` goes, and what its handle records:
  // join(job_dir, rel) and `rel`; with entropy injection the marker of entropy_dir replaced by random characters
  // drawn from `stream`, recorded as that absolute path (and remembered in entropy_files unless `shared`).
  struct Placement {
    std::string path;
    std::string recorded;
  };
  Placement place(CheckpointId id, const std::string& job_dir_of_files, const std::string& rel,
                  const std::string& stream, bool savepoint, bool shared) {
    if (savepoint || !entropy) return {fs::join_path(job_dir_of_files, rel), rel};
    std::string job_hex;
    {
      std::lock_guard lock(mu);
      job_hex = job ? job->to_hex() : std::string();
    }
    const std::string templ = fs::join_path(fs::join_path(entropy_dir, job_hex), rel);
    const std::string path =
        fs::inject_entropy(templ, entropy->key, names->alphanumeric("entropy:" + stream, static_cast<size_t>(entropy->length)));
    if (!shared) {
      std::lock_guard lock(mu);
      entropy_files[id.value()].push_back(path);
    }
    return {path, path};
  }

  // Creates chk-<n>/ (once per id). Its name becomes durable in write_metadata, together with the rest: a
  // checkpoint folder matters only once it has a `_metadata`, and a directory fsync here would be one more
  // journal commit on every checkpoint's path.
  // The caller is an entered writer of `id` (enter_writer).
  Result<std::string> ensure_checkpoint_dir(CheckpointId id) {
    {
      // A savepoint's folder exists already (begin_savepoint's caller created it).
      std::lock_guard lock(mu);
      if (auto sp = savepoint_dirs.find(id.value()); sp != savepoint_dirs.end()) return sp->second;
    }
    SLUICE_RETURN_IF_ERROR(job_dir_or_error().status());
    std::string dir;
    {
      std::lock_guard lock(mu);
      dir = folder_of_locked(id);
      if (created_dirs.count(id.value()) > 0) return dir;
    }
    SLUICE_RETURN_IF_ERROR(fs->create_dir(dir));  // a checkpoint folder: always base_dir's filesystem
    std::lock_guard lock(mu);
    created_dirs.insert(id.value());
    return dir;
  }
};

namespace {

// Keeps [A-Za-z0-9._-], maps the rest to '_', never starts with '.', at most 64 characters.
std::string sanitize_name(const std::string& hint) {
  std::string out;
  for (char c : hint) {
    if (out.size() == 64) break;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              (c == '.' && !out.empty());
    out += ok ? c : '_';
  }
  return out.empty() ? "state" : out;
}

// Whether a file of that name exists (one stat, or one HEAD on S3). Names carry 64 random bits; the check keeps a
// job from ever overwriting a file it did not create.
Result<bool> name_taken(fs::FileSystem& fs, const std::string& path, const std::string& owner) {
  auto size = fs.file_size(path);
  if (size.is_ok()) return true;
  if (size.status().code() == StatusCode::kNotFound) return false;
  return size.status().with_context(owner);
}

class FsStreamFactory final : public CheckpointStreamFactory {
 public:
  // Files go to `base_dir`/`prefix`<name>: the job directory and "chk-<n>/" for a checkpoint, the savepoint's own
  // folder and "" for a savepoint.
  FsStreamFactory(std::shared_ptr<FileSystemCheckpointStorage::Shared> shared, CheckpointId id, std::string base_dir,
                  std::string prefix, bool savepoint)
      : shared_(std::move(shared)), id_(id), job_dir_(std::move(base_dir)), prefix_(std::move(prefix)),
        savepoint_(savepoint) {}

  Result<StreamStateHandle> write_state(const std::string& owner, const std::string& name_hint,
                                        const std::vector<uint8_t>& bytes) override {
    StreamStateHandle h;
    h.size_bytes = bytes.size();
    h.checksum = XXH3_64bits(bytes.data(), bytes.size());
    if (static_cast<int64_t>(bytes.size()) < shared_->inline_threshold_bytes) {
      h.inline_bytes = bytes;
      return h;
    }
    SLUICE_RETURN_IF_ERROR(shared_->enter_writer(id_).with_context(owner));
    std::string written;
    auto result = write_file_entered(owner, name_hint, bytes, std::move(h), &written);
    Status left = shared_->leave_writer(id_, written);
    if (!left.is_ok()) return left.with_context(owner);
    return result;
  }

  // A (native) savepoint keeps every file in its own folder under a plain name: nothing goes to shared/.
  Result<StreamStateHandle> write_shared_file(const std::string& owner, const std::string& name_hint,
                                              const std::string& local_path) override {
    if (savepoint_) return upload(owner, "", name_hint, local_path, /*shared=*/false, /*keep_extension=*/true);
    return upload(owner, std::string(kSharedDirName), name_hint, local_path, /*shared=*/true, /*keep_extension=*/true);
  }
  Result<StreamStateHandle> write_private_file(const std::string& owner, const std::string& name_hint,
                                               const std::string& local_path) override {
    if (savepoint_) return upload(owner, "", name_hint, local_path, /*shared=*/false, /*keep_extension=*/false);
    return upload(owner, checkpoint_dir_name(id_), name_hint, local_path, /*shared=*/false, /*keep_extension=*/false);
  }

 private:

  // write_state's file case, between enter_writer and leave_writer; `written`: the file, once it exists.
  Result<StreamStateHandle> write_file_entered(const std::string& owner, const std::string& name_hint,
                                               const std::vector<uint8_t>& bytes, StreamStateHandle h,
                                               std::string* written) {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> target, shared_->fs_for(job_dir_));
    fs::FileSystem& fs = *target;
    const std::string name = sanitize_name(name_hint);
    std::string path;
    // One stream per writer and file kind (not per checkpoint: the set of streams stays bounded).
    const std::string stream = owner + "|state|" + name;
    for (int attempt = 0;; ++attempt) {
      const std::string rel = prefix_ + name + "-" + shared_->names->hex("file:" + stream);
      auto placed = shared_->place(id_, job_dir_, rel, stream, savepoint_, /*shared=*/false);
      path = std::move(placed.path);
      h.relative_path = std::move(placed.recorded);
      SLUICE_ASSIGN_OR_RETURN(bool taken, name_taken(fs, path, owner));
      if (!taken) break;
      if (attempt == 8) return Status::internal(owner + ": cannot find an unused file name for '" + path + "'");
    }
    Status st = fs.write_file(path, bytes, fs::Durability::kSync);
    if (!st.is_ok()) {
      return st.with_context(owner + ": writing state file '" + path + "' (" + format_bytes(bytes.size()) + ")");
    }
    *written = path;  // leave_writer removes it if the checkpoint was discarded meanwhile
    return h;
  }

  // `folder`: relative to job_dir_ ("" for the savepoint folder itself); `shared`: a file of the job's shared/
  // folder, deleted by discard(n) while n is not complete.
  Result<StreamStateHandle> upload(const std::string& owner, const std::string& folder, const std::string& name_hint,
                                   const std::string& local_path, bool shared, bool keep_extension) {
    SLUICE_RETURN_IF_ERROR(shared_->enter_writer(id_).with_context(owner));
    std::string written;
    auto result = upload_entered(owner, folder, name_hint, local_path, shared, keep_extension, &written);
    Status left = shared_->leave_writer(id_, written);
    if (!left.is_ok()) return left.with_context(owner);
    return result;
  }

  // upload between enter_writer and leave_writer; `written`: the file, once it exists.
  Result<StreamStateHandle> upload_entered(const std::string& owner, const std::string& folder,
                                           const std::string& name_hint, const std::string& local_path, bool shared,
                                           bool keep_extension, std::string* written) {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> target, shared_->fs_for(job_dir_));
    fs::FileSystem& fs = *target;
    const std::string name = sanitize_name(name_hint);
    StreamStateHandle h;
    std::string path;
    // SST files keep their extension: "<hint>-<16 hex>.sst".
    std::string ext;
    if (keep_extension) {
      std::string base = fs::path_file_name(local_path);
      size_t dot = base.rfind('.');
      if (dot != std::string::npos && dot > 0 && dot + 1 < base.size()) ext = "." + sanitize_name(base.substr(dot + 1));
    }
    const std::string stream = owner + (shared ? "|shared|" : "|private|") + name;
    for (int attempt = 0;; ++attempt) {
      const std::string rel =
          (folder.empty() ? "" : folder + "/") + name + "-" + shared_->names->hex("file:" + stream) + ext;
      auto placed = shared_->place(id_, job_dir_, rel, stream, savepoint_, shared);
      path = std::move(placed.path);
      h.relative_path = std::move(placed.recorded);
      SLUICE_ASSIGN_OR_RETURN(bool taken, name_taken(fs, path, owner));
      if (!taken) break;
      if (attempt == 8) return Status::internal(owner + ": cannot find an unused file name for '" + path + "'");
    }
    if (shared) {  // recorded before the file exists, so a discard(n) racing with the upload finds it
      std::lock_guard lock(shared_->mu);
      shared_->pending_uploads[id_.value()].push_back(h.relative_path);
    }
    auto digest = fs.copy_local_file(local_path, path, fs::Durability::kSync);
    if (!digest.is_ok()) {
      return digest.status().with_context(owner + ": uploading '" + local_path + "' to '" + path + "'");
    }
    h.size_bytes = digest->size_bytes;
    h.checksum = digest->checksum;
    *written = path;  // leave_writer removes it if the checkpoint was discarded meanwhile
    return h;
  }

 public:

 private:
  std::shared_ptr<FileSystemCheckpointStorage::Shared> shared_;
  CheckpointId id_;
  std::string job_dir_;
  std::string prefix_;
  bool savepoint_ = false;
};

}  // namespace

FileSystemCheckpointStorage::FileSystemCheckpointStorage(std::string base_dir, FileSystemStorageOptions options)
    : shared_(std::make_shared<Shared>()) {
  shared_->file_systems = std::move(options.file_systems);
  if (options.file_system) {
    shared_->fs = std::move(options.file_system);
  } else if (auto f = shared_->file_systems.for_path(base_dir.empty() ? "." : base_dir); f.is_ok()) {
    shared_->fs = std::move(f).value();
  } else {
    shared_->fs_error = f.status().with_context("execution.checkpointing.dir");  // initialize() returns it
  }
  shared_->names = name_source_or_random(std::move(options.names));
  const fs::EntropyInjection* entropy = shared_->fs ? shared_->fs->entropy_injection() : nullptr;
  // Only URIs (s3://, file://): a data file's handle records its path as an absolute URI.
  if (entropy != nullptr && fs::has_entropy_key(base_dir, entropy->key) && !fs::uri_scheme(base_dir).empty()) {
    shared_->entropy = *entropy;
    shared_->entropy_dir = base_dir;
    base_dir = fs::remove_entropy_key(base_dir, entropy->key);
  }
  shared_->base_dir = std::move(base_dir);
  shared_->inline_threshold_bytes = options.inline_threshold_bytes;
}

FileSystemCheckpointStorage::~FileSystemCheckpointStorage() = default;

Status FileSystemCheckpointStorage::initialize(const JobId& job) {
  Shared& s = *shared_;
  if (s.inline_threshold_bytes < 0 || s.inline_threshold_bytes > kMaxInlineThresholdBytes) {
    return Status::invalid_argument("execution.checkpointing.data-inline-threshold: expected 0 .. 1 MiB, got " +
                                    std::to_string(s.inline_threshold_bytes) + " bytes");
  }
  if (s.base_dir.empty()) return Status::invalid_argument("execution.checkpointing.dir: empty checkpoint directory");
  SLUICE_RETURN_IF_ERROR(s.fs_error);
  const std::string jd = fs::join_path(s.base_dir, job.to_hex());
  SLUICE_RETURN_IF_ERROR(fs::create_directories_durable(*s.fs, jd).with_context("initializing checkpoint storage"));
  for (std::string_view sub : {kSharedDirName, kTaskOwnedDirName}) {
    SLUICE_RETURN_IF_ERROR(s.fs->create_dir(fs::join_path(jd, sub)).with_context("initializing checkpoint storage"));
  }
  SLUICE_RETURN_IF_ERROR(s.fs->sync_dir(jd).with_context("initializing checkpoint storage"));
  std::lock_guard lock(s.mu);
  s.job = job;
  s.job_dir = jd;
  s.savepoints_only = false;
  s.created_dirs.clear();
  s.discarded.clear();
  return Status::ok();
}

Status FileSystemCheckpointStorage::initialize_for_savepoints(const JobId& job) {
  Shared& s = *shared_;
  if (s.inline_threshold_bytes < 0 || s.inline_threshold_bytes > kMaxInlineThresholdBytes) {
    return Status::invalid_argument("execution.checkpointing.data-inline-threshold: expected 0 .. 1 MiB, got " +
                                    std::to_string(s.inline_threshold_bytes) + " bytes");
  }
  std::lock_guard lock(s.mu);
  s.job = job;
  s.job_dir.clear();
  s.savepoints_only = true;
  s.created_dirs.clear();
  s.discarded.clear();
  return Status::ok();
}

Result<std::shared_ptr<CheckpointStreamFactory>> FileSystemCheckpointStorage::stream_factory(CheckpointId id) {
  const std::string ctx = "checkpoint " + std::to_string(id.value());
  SLUICE_RETURN_IF_ERROR(shared_->enter_writer(id).with_context(ctx));
  auto dir = shared_->ensure_checkpoint_dir(id);
  Status left = shared_->leave_writer(id, "");
  if (!dir.is_ok()) return dir.status().with_context(ctx);
  SLUICE_RETURN_IF_ERROR(left.with_context(ctx));
  if (shared_->is_savepoint(id)) {
    return std::shared_ptr<CheckpointStreamFactory>(std::make_shared<FsStreamFactory>(shared_, id, *dir, "", true));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string jd, shared_->job_dir_or_error());
  return std::shared_ptr<CheckpointStreamFactory>(
      std::make_shared<FsStreamFactory>(shared_, id, jd, checkpoint_dir_name(id) + "/", false));
}

Status FileSystemCheckpointStorage::begin_savepoint(CheckpointId id, const std::string& savepoint_dir) {
  const std::string ctx = "savepoint " + std::to_string(id.value());
  SLUICE_RETURN_IF_ERROR(shared_->initialized_or_error().with_context(ctx));
  std::lock_guard lock(shared_->mu);
  // Each deployment on a TaskManager routes the savepoint it is triggered for (region failover: several).
  if (auto it = shared_->savepoint_dirs.find(id.value()); it != shared_->savepoint_dirs.end() && it->second == savepoint_dir) {
    return Status::ok();
  }
  if (shared_->created_dirs.count(id.value()) > 0 || shared_->writers.count(id.value()) > 0 ||
      shared_->discarded.count(id.value()) > 0) {
    return Status::failed_precondition(ctx + ": already being written as a checkpoint");
  }
  shared_->savepoint_dirs[id.value()] = savepoint_dir;
  return Status::ok();
}

Result<std::string> FileSystemCheckpointStorage::write_metadata(const CheckpointMetadata& metadata) {
  Shared& s = *shared_;
  const std::string ctx = "writing the metadata of checkpoint " + std::to_string(metadata.checkpoint_id.value());
  {
    std::lock_guard lock(s.mu);
    if (s.job && metadata.job_id != *s.job) {
      return Status::failed_precondition(ctx + ": it belongs to job " + metadata.job_id.to_hex() +
                                         ", this storage to job " + s.job->to_hex());
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, encode_metadata(metadata));
  SLUICE_RETURN_IF_ERROR(s.enter_writer(metadata.checkpoint_id).with_context(ctx));
  auto dir = write_metadata_entered(metadata, bytes, ctx);
  Status left = s.leave_writer(metadata.checkpoint_id, "");
  if (!left.is_ok()) return left.with_context(ctx);  // discarded meanwhile: the folder is gone, `_metadata` too
  if (!dir.is_ok()) return dir;
  std::lock_guard lock(s.mu);
  s.completed.insert(metadata.checkpoint_id.value());
  s.pending_uploads.erase(metadata.checkpoint_id.value());
  return dir;
}

Result<std::string> FileSystemCheckpointStorage::write_metadata_entered(const CheckpointMetadata& metadata,
                                                                        const std::vector<uint8_t>& bytes,
                                                                        const std::string& ctx) {
  Shared& s = *shared_;
  auto dir_or = s.ensure_checkpoint_dir(metadata.checkpoint_id);
  if (!dir_or.is_ok()) return dir_or.status().with_context(ctx);
  const std::string dir = std::move(dir_or).value();
  const std::string final_path = fs::join_path(dir, kMetadataFileName);
  auto target = s.fs_for(dir);
  if (!target.is_ok()) return target.status().with_context(ctx);
  fs::FileSystem& fsys = **target;
  SLUICE_ASSIGN_OR_RETURN(bool exists, name_taken(fsys, final_path, ctx));
  if (exists) return Status::failed_precondition(ctx + ": '" + final_path + "' already exists");
  std::string jd;
  if (metadata.type == SnapshotType::kSavepoint && s.is_savepoint(metadata.checkpoint_id)) {
    jd = fs::path_parent(dir);  // the target directory holds the savepoint folder's name
    if (jd.empty()) jd = ".";
  } else {
    SLUICE_ASSIGN_OR_RETURN(jd, s.job_dir_or_error());
  }
  // Before `_metadata` may exist, the names it depends on must be durable: chk-<n>/'s entries (the state
  // files), the job folder's entry for chk-<n>, and shared/'s entries for an incremental checkpoint. Then
  // `_metadata` is published (the commit point; whole or not at all on every scheme) and chk-<n>/ synced for
  // its name. On an object store the syncs do nothing and the write is one PUT.
  std::vector<std::string> dirs{dir, jd};
  if (metadata.has_incremental_state() && metadata.type == SnapshotType::kCheckpoint) {
    dirs.push_back(fs::join_path(jd, kSharedDirName));
  }
  Status st;
  for (const std::string& d : dirs) {
    st = fsys.sync_dir(d);
    if (!st.is_ok()) return st.with_context(ctx);
  }
  bool written = false;
  st = fsys.write_file(final_path, bytes, fs::Durability::kSync);
  written = st.is_ok();
  if (st.is_ok()) st = fsys.sync_dir(dir);
  if (!st.is_ok()) {
    // Not complete unless we say so: take back a `_metadata` whose durability is unknown.
    if (written) (void)fsys.remove_file(final_path);
    return st.with_context(ctx);
  }
  return dir;
}

Result<CheckpointMetadata> FileSystemCheckpointStorage::read_metadata(const std::string& location) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, shared_->fs_for(location));
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*f, location));
  return read_checkpoint_metadata(*f, loc);
}

Result<std::vector<uint8_t>> FileSystemCheckpointStorage::read_state(const std::string& location,
                                                                      const StreamStateHandle& handle) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, shared_->fs_for(location));
  if (handle.is_inline()) return read_state_handle(*f, "", handle);
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*f, location));
  return read_state_handle(*f, loc.checkpoint_dir, handle);
}

Status FileSystemCheckpointStorage::check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                                                        RestoreFileCheck check) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, shared_->fs_for(location));
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*f, location));
  return checkpoint::check_restore_files(*f, loc.checkpoint_dir, metadata, check);
}

Status FileSystemCheckpointStorage::discard(CheckpointId id) {
  SLUICE_RETURN_IF_ERROR(shared_->initialized_or_error());
  std::string dir;
  bool writers_in_flight = false;
  {
    std::lock_guard lock(shared_->mu);
    dir = shared_->folder_of_locked(id);
    shared_->discarded.insert(id.value());
    shared_->created_dirs.erase(id.value());
    writers_in_flight = shared_->writers.count(id.value()) > 0;
  }
  // No writer can enter from now on. The folder goes now; a writer still in flight may yet create it or a file in
  // it (it passed its check before the mark), so the last writer out removes it again (leave_writer), and a
  // removal that fails meanwhile (a file appeared while the folder was being emptied) is left to that writer.
  // No folder at all: a checkpoint id of a storage with savepoints only (nothing was written for it).
  Status removed;
  if (!dir.empty()) {
    auto target = shared_->fs_for(dir);
    removed = target.is_ok() ? (*target)->remove_all(dir) : target.status();
  }
  if (!removed.is_ok() && !writers_in_flight) {
    return removed.with_context("discarding checkpoint " + std::to_string(id.value()));
  }
  // The shared files an aborted checkpoint uploaded (never those of a completed one: others may share them). A
  // writer still uploading one removes it itself when it leaves.
  std::vector<std::string> uploads, entropy_files;
  {
    std::lock_guard lock(shared_->mu);
    if (auto e = shared_->entropy_files.find(id.value()); e != shared_->entropy_files.end()) {
      entropy_files = std::move(e->second);
      shared_->entropy_files.erase(e);
    }
    auto it = shared_->pending_uploads.find(id.value());
    if (it != shared_->pending_uploads.end() && shared_->completed.count(id.value()) == 0) {
      uploads = std::move(it->second);
      shared_->pending_uploads.erase(it);
    }
  }
  // Entropy files are deleted like shared ones: one by one, absolute paths.
  uploads.insert(uploads.end(), entropy_files.begin(), entropy_files.end());
  return discard_shared_files(uploads).with_context("discarding checkpoint " + std::to_string(id.value()));
}

Status FileSystemCheckpointStorage::discard_shared_files(const std::vector<std::string>& relative_paths) {
  if (relative_paths.empty()) return Status::ok();
  SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir());
  Status first;
  for (const std::string& p : relative_paths) {
    Status st = shared_->fs->remove_file(handle_path_in_job(jd, p));
    if (!st.is_ok() && first.is_ok()) first = st.with_context("deleting shared state file '" + p + "'");
  }
  return first;
}

Status FileSystemCheckpointStorage::discard_location(const std::string& location) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, shared_->fs_for(location));
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*f, location));
  // Its entropy data files are not below its folder: delete those its `_metadata` names (not the shared ones: the
  // SharedStateRegistry decides about those).
  if (auto md = read_checkpoint_metadata(*f, loc); md.is_ok()) {
    for (const std::string& file : files_outside_checkpoint_dir(*md, loc)) {
      SLUICE_RETURN_IF_ERROR(f->remove_file(file).with_context("deleting claimed checkpoint " + location));
    }
  }
  return f->remove_all(loc.checkpoint_dir).with_context("deleting claimed checkpoint " + location);
}

Status FileSystemCheckpointStorage::write_side_file(const std::string& location, const std::string& name,
                                                   const std::vector<uint8_t>& bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> f, shared_->fs_for(location));
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*f, location));
  return f->write_file(fs::join_path(loc.checkpoint_dir, name), bytes, fs::Durability::kNone)
      .with_context("writing " + name + " of checkpoint " + location);
}

Result<std::shared_ptr<fs::FileSystem>> FileSystemCheckpointStorage::file_system(const std::string& path) const {
  return shared_->fs_for(path);
}

std::optional<std::string> FileSystemCheckpointStorage::file_path(const std::string& location,
                                                                        const std::string& relative_path) const {
  auto f = shared_->fs_for(location);
  if (!f.is_ok()) return std::nullopt;
  auto loc = locate_checkpoint(**f, location);
  if (!loc.is_ok()) return std::nullopt;
  return handle_file_path(loc->checkpoint_dir, relative_path);
}

std::optional<std::string> FileSystemCheckpointStorage::rebase_shared_path(const std::string& location,
                                                                           const std::string& relative_path) const {
  auto jd = job_dir();
  if (!jd.is_ok()) return std::nullopt;
  auto f = shared_->fs_for(location);
  if (!f.is_ok()) return std::nullopt;
  auto loc = locate_checkpoint(**f, location);
  if (!loc.is_ok()) return std::nullopt;
  if (is_absolute_handle_path(relative_path)) return relative_path;  // an entropy file: valid from anywhere
  std::string their_job = fs::canonical_path(loc->base_dir), our_job = fs::canonical_path(*jd);
  if (their_job == our_job) return relative_path;
  if (fs::path_parent(their_job) != fs::path_parent(our_job)) return std::nullopt;
  if (relative_path.rfind("../", 0) == 0) return relative_path;  // already a sibling's file
  return "../" + fs::path_file_name(their_job) + "/" + relative_path;
}

Result<bool> FileSystemCheckpointStorage::remove_job_dir_if_empty() {
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->savepoints_only) return false;  // it made no job folder
  }
  SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir());
  fs::FileSystem& fs = *shared_->fs;
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, fs.stat(jd));
  if (kind == fs::PathKind::kMissing) return false;
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries, fs.list_dir(jd));
  bool finished_restore = false;  // the record stays, and the folder with it; its empty subfolders go
  for (const fs::DirEntry& e : entries) {
    if (e.name == kFinishedRestoreFileName && e.kind == fs::PathKind::kFile) {
      finished_restore = true;
      continue;
    }
    bool known_subdir = e.kind == fs::PathKind::kDirectory && (e.name == kSharedDirName || e.name == kTaskOwnedDirName);
    if (!known_subdir) return false;
    SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> inner, fs.list_dir(fs::join_path(jd, e.name)));
    if (!inner.empty()) return false;
  }
  for (const fs::DirEntry& e : entries) {
    if (e.kind != fs::PathKind::kDirectory) continue;
    Status st = fs.remove_empty_dir(fs::join_path(jd, e.name));
    if (st.code() == StatusCode::kFailedPrecondition) return false;  // something arrived meanwhile
    SLUICE_RETURN_IF_ERROR(st);
  }
  if (finished_restore) return false;
  Status st = fs.remove_empty_dir(jd);
  if (st.code() == StatusCode::kFailedPrecondition) return false;
  SLUICE_RETURN_IF_ERROR(st);
  return true;
}

Status FileSystemCheckpointStorage::record_finished_restore(const std::string& restored_location,
                                                            int64_t finished_at_ms) {
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->savepoints_only) return Status::ok();  // no job folder under a checkpoint directory
  }
  SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir());
  fs::FileSystem& fs = *shared_->fs;
  SLUICE_RETURN_IF_ERROR(fs.create_dir(jd));
  const std::string text = format_finished_restore(FinishedRestore{restored_location, finished_at_ms});
  return fs.write_file(fs::join_path(jd, kFinishedRestoreFileName), std::vector<uint8_t>(text.begin(), text.end()),
                       fs::Durability::kSync);
}

std::string FileSystemCheckpointStorage::describe() const {
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->savepoints_only) {
      return "filesystem, savepoints only (state below " +
             format_bytes(static_cast<uint64_t>(shared_->inline_threshold_bytes)) + " inline)";
    }
  }
  return "filesystem:" + shared_->base_dir + " (state below " +
         format_bytes(static_cast<uint64_t>(shared_->inline_threshold_bytes)) + " inline)";
}

const std::string& FileSystemCheckpointStorage::base_dir() const { return shared_->base_dir; }

Result<std::string> FileSystemCheckpointStorage::job_dir() const { return shared_->job_dir_or_error(); }

Result<std::string> FileSystemCheckpointStorage::checkpoint_dir(CheckpointId id) const {
  SLUICE_ASSIGN_OR_RETURN(std::string jd, shared_->job_dir_or_error());
  return fs::join_path(jd, checkpoint_dir_name(id));
}

}  // namespace sluice::checkpoint
