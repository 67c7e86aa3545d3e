#include "checkpoint/filesystem_checkpoint_storage.h"

#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <mutex>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "checkpoint/byte_size_text.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/metadata_codec.h"

namespace sluice::checkpoint {

namespace {
Status discarded_status(CheckpointId id) {
  return Status::cancelled("checkpoint " + std::to_string(id.value()) + " was aborted and its files discarded");
}
}  // namespace

struct FileSystemCheckpointStorage::Shared {
  std::shared_ptr<FileSystem> fs;
  std::string base_dir;
  int64_t inline_threshold_bytes;

  std::mutex mu;
  std::optional<JobId> job;         // set by initialize()
  std::string job_dir;              // <base_dir>/<job-id>
  std::set<int64_t> created_dirs;   // chk-<n> folders made durable by this run
  // Checkpoints discard() removed. A subtask's asynchronous part may still be writing one of them (it was
  // aborted or subsumed under it): its later writes must neither resurrect chk-<n>/ nor leave files in it.
  std::set<int64_t> discarded;
  std::set<int64_t> completed;  // checkpoints whose write_metadata succeeded
  // Shared files uploaded for each checkpoint that has not completed yet (relative paths). Discarding such a
  // checkpoint deletes them: no other checkpoint can refer to them (backends reuse only completed uploads).
  std::map<int64_t, std::vector<std::string>> pending_uploads;

  // Writers (stream_factory's mkdir, state files, uploads, `_metadata`) in flight per checkpoint, counted from
  // their "is it discarded?" check to their end, under `mu`. discard(n) removes chk-<n>/ only when none is in
  // flight; otherwise the last writer out removes it. So no writer can create chk-<n>/ or a file in it after the
  // discard removed it (the race a check-then-write had).
  std::map<int64_t, int> writers;
  // Savepoints (begin_savepoint): their folders, by id. Their files carry plain names, relative to that folder.
  std::map<int64_t, std::string> savepoint_dirs;

  // The folder of checkpoint or savepoint `id`; "" before initialize() for a checkpoint. Under `mu`.
  std::string folder_of_locked(CheckpointId id) const {
    auto sp = savepoint_dirs.find(id.value());
    if (sp != savepoint_dirs.end()) return sp->second;
    return job ? join_path(job_dir, checkpoint_dir_name(id)) : std::string();
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
    if (!written.empty()) (void)fs->remove_file(written);
    if (!dir.empty()) (void)fs->remove_all(dir);
    return discarded_status(id);
  }
  std::mt19937_64 rng{std::random_device{}()};

  Result<std::string> job_dir_or_error() {
    std::lock_guard lock(mu);
    if (!job) return Status::failed_precondition("filesystem checkpoint storage '" + base_dir + "' is not initialized");
    return job_dir;
  }

  std::string random_suffix() {
    uint64_t v;
    {
      std::lock_guard lock(mu);
      v = rng();
    }
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
    return std::string(buf, 16);
  }

  // Creates chk-<n>/ (once per id). Its name becomes durable in write_metadata, together with the rest: a
  // checkpoint folder matters only once it has a `_metadata`, and a directory fsync here would be one more
  // journal commit on every checkpoint's path.
  // The caller is an entered writer of `id` (enter_writer).
  Result<std::string> ensure_checkpoint_dir(CheckpointId id) {
    SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir_or_error());
    std::string dir;
    {
      std::lock_guard lock(mu);
      dir = folder_of_locked(id);
      // A savepoint's folder exists already (begin_savepoint's caller created it).
      if (created_dirs.count(id.value()) > 0 || savepoint_dirs.count(id.value()) > 0) return dir;
    }
    SLUICE_RETURN_IF_ERROR(fs->create_dir(dir));
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

// Runs `work` on this thread while `dirs` are synced, in order, on a helper thread (or after `work`, if no
// thread can be started). Returns the first error, `work`'s first.
template <class Work>
Status sync_dirs_while(FileSystemCheckpointStorage::Shared& s, std::vector<std::string> dirs, Work&& work) {
  auto sync_all = [&s, dirs = std::move(dirs)] {
    for (const std::string& d : dirs) SLUICE_RETURN_IF_ERROR(s.fs->sync_dir(d));
    return Status::ok();
  };
  std::future<Status> synced;
  try {
    synced = std::async(std::launch::async, sync_all);
  } catch (const std::system_error&) {
    Status w = work();
    return w.is_ok() ? sync_all() : w;
  }
  Status w = work();
  Status d = synced.get();
  return w.is_ok() ? d : w;
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
    FileSystem& fs = *shared_->fs;
    const std::string name = sanitize_name(name_hint);
    std::string path;
    for (int attempt = 0;; ++attempt) {
      h.relative_path = prefix_ + name + "-" + shared_->random_suffix();
      path = join_path(job_dir_, h.relative_path);
      auto kind = fs.stat(path);
      if (!kind.is_ok()) return kind.status().with_context(owner);
      if (*kind == PathKind::kMissing) break;
      if (attempt == 8) return Status::internal(owner + ": cannot find an unused file name for '" + path + "'");
    }
    const std::string tmp = path + std::string(kInProgressSuffix);
    Status st = fs.write_file(tmp, bytes, Durability::kSync);
    if (st.is_ok()) st = fs.rename(tmp, path);
    if (!st.is_ok()) {
      (void)fs.remove_file(tmp);  // best effort; discard(n) removes the folder anyway
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
    FileSystem& fs = *shared_->fs;
    const std::string name = sanitize_name(name_hint);
    StreamStateHandle h;
    std::string path;
    // SST files keep their extension: "<hint>-<16 hex>.sst".
    std::string ext;
    if (keep_extension) {
      std::string base = path_file_name(local_path);
      size_t dot = base.rfind('.');
      if (dot != std::string::npos && dot > 0 && dot + 1 < base.size()) ext = "." + sanitize_name(base.substr(dot + 1));
    }
    for (int attempt = 0;; ++attempt) {
      h.relative_path = (folder.empty() ? "" : folder + "/") + name + "-" + shared_->random_suffix() + ext;
      path = join_path(job_dir_, h.relative_path);
      auto kind = fs.stat(path);
      if (!kind.is_ok()) return kind.status().with_context(owner);
      if (*kind == PathKind::kMissing) break;
      if (attempt == 8) return Status::internal(owner + ": cannot find an unused file name for '" + path + "'");
    }
    if (shared) {  // recorded before the file exists, so a discard(n) racing with the upload finds it
      std::lock_guard lock(shared_->mu);
      shared_->pending_uploads[id_.value()].push_back(h.relative_path);
    }
    const std::string tmp = path + std::string(kInProgressSuffix);
    auto digest = fs.copy_local_file(local_path, tmp, Durability::kSync);
    Status st = digest.status();
    if (st.is_ok()) st = fs.rename(tmp, path);
    if (!st.is_ok()) {
      (void)fs.remove_file(tmp);
      return st.with_context(owner + ": uploading '" + local_path + "' to '" + path + "'");
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
  shared_->fs = options.file_system ? std::move(options.file_system) : local_file_system();
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
  const std::string jd = join_path(s.base_dir, job.to_hex());
  SLUICE_RETURN_IF_ERROR(create_directories_durable(*s.fs, jd).with_context("initializing checkpoint storage"));
  for (std::string_view sub : {kSharedDirName, kTaskOwnedDirName}) {
    SLUICE_RETURN_IF_ERROR(s.fs->create_dir(join_path(jd, sub)).with_context("initializing checkpoint storage"));
  }
  SLUICE_RETURN_IF_ERROR(s.fs->sync_dir(jd).with_context("initializing checkpoint storage"));
  std::lock_guard lock(s.mu);
  s.job = job;
  s.job_dir = jd;
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
  SLUICE_ASSIGN_OR_RETURN(std::string jd, shared_->job_dir_or_error());
  if (shared_->is_savepoint(id)) {
    return std::shared_ptr<CheckpointStreamFactory>(std::make_shared<FsStreamFactory>(shared_, id, *dir, "", true));
  }
  return std::shared_ptr<CheckpointStreamFactory>(
      std::make_shared<FsStreamFactory>(shared_, id, jd, checkpoint_dir_name(id) + "/", false));
}

Status FileSystemCheckpointStorage::begin_savepoint(CheckpointId id, const std::string& savepoint_dir) {
  const std::string ctx = "savepoint " + std::to_string(id.value());
  SLUICE_RETURN_IF_ERROR(shared_->job_dir_or_error().status().with_context(ctx));
  std::lock_guard lock(shared_->mu);
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
  const std::string final_path = join_path(dir, kMetadataFileName);
  auto existing = s.fs->stat(final_path);
  if (!existing.is_ok()) return existing.status().with_context(ctx);
  if (*existing != PathKind::kMissing) {
    return Status::failed_precondition(ctx + ": '" + final_path + "' already exists");
  }
  SLUICE_ASSIGN_OR_RETURN(std::string jd, s.job_dir_or_error());
  if (metadata.type == SnapshotType::kSavepoint && s.is_savepoint(metadata.checkpoint_id)) {
    jd = path_parent(dir);  // the target directory holds the savepoint folder's name
    if (jd.empty()) jd = ".";
  }
  const std::string tmp = final_path + "." + s.random_suffix() + std::string(kInProgressSuffix);
  bool renamed = false;
  // Before `_metadata` may exist: the temp file's bytes, chk-<n>/'s entries (the state files' names) and the
  // job folder's entry for chk-<n> must be durable. The three syncs are independent: the directories are
  // synced on a helper thread while the temp file is written and synced (a journaling filesystem serves them
  // with one commit instead of three in a row).
  // An incremental checkpoint's shared files must be durable too: sync shared/ with the others.
  std::vector<std::string> dirs{dir, jd};
  if (metadata.has_incremental_state() && metadata.type == SnapshotType::kCheckpoint) {
    dirs.push_back(join_path(jd, kSharedDirName));
  }
  Status st = sync_dirs_while(s, std::move(dirs), [&] { return s.fs->write_file(tmp, bytes, Durability::kSync); });
  if (st.is_ok()) {
    st = s.fs->rename(tmp, final_path);
    renamed = st.is_ok();
  }
  if (st.is_ok()) st = s.fs->sync_dir(dir);
  if (!st.is_ok()) {
    // Not complete unless we say so: take back a `_metadata` whose durability is unknown.
    (void)s.fs->remove_file(renamed ? final_path : tmp);
    return st.with_context(ctx);
  }
  return dir;
}

Result<CheckpointMetadata> FileSystemCheckpointStorage::read_metadata(const std::string& location) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*shared_->fs, location));
  return read_checkpoint_metadata(*shared_->fs, loc);
}

Result<std::vector<uint8_t>> FileSystemCheckpointStorage::read_state(const std::string& location,
                                                                      const StreamStateHandle& handle) {
  if (handle.is_inline()) return read_state_handle(*shared_->fs, "", handle);
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*shared_->fs, location));
  return read_state_handle(*shared_->fs, loc.checkpoint_dir, handle);
}

Status FileSystemCheckpointStorage::check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                                                        RestoreFileCheck check) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*shared_->fs, location));
  return checkpoint::check_restore_files(*shared_->fs, loc.checkpoint_dir, metadata, check);
}

Status FileSystemCheckpointStorage::discard(CheckpointId id) {
  SLUICE_RETURN_IF_ERROR(shared_->job_dir_or_error().status());
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
  Status removed = shared_->fs->remove_all(dir);
  if (!removed.is_ok() && !writers_in_flight) {
    return removed.with_context("discarding checkpoint " + std::to_string(id.value()));
  }
  // The shared files an aborted checkpoint uploaded (never those of a completed one: others may share them). A
  // writer still uploading one removes it itself when it leaves.
  std::vector<std::string> uploads;
  {
    std::lock_guard lock(shared_->mu);
    auto it = shared_->pending_uploads.find(id.value());
    if (it != shared_->pending_uploads.end() && shared_->completed.count(id.value()) == 0) {
      uploads = std::move(it->second);
      shared_->pending_uploads.erase(it);
    }
  }
  return discard_shared_files(uploads).with_context("discarding checkpoint " + std::to_string(id.value()));
}

Status FileSystemCheckpointStorage::discard_shared_files(const std::vector<std::string>& relative_paths) {
  if (relative_paths.empty()) return Status::ok();
  SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir());
  Status first;
  for (const std::string& p : relative_paths) {
    Status st = shared_->fs->remove_file(join_path(jd, p));
    if (!st.is_ok() && first.is_ok()) first = st.with_context("deleting shared state file '" + p + "'");
  }
  return first;
}

Status FileSystemCheckpointStorage::discard_location(const std::string& location) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*shared_->fs, location));
  return shared_->fs->remove_all(loc.checkpoint_dir).with_context("deleting claimed checkpoint " + location);
}

Status FileSystemCheckpointStorage::write_side_file(const std::string& location, const std::string& name,
                                                   const std::vector<uint8_t>& bytes) {
  SLUICE_ASSIGN_OR_RETURN(CheckpointLocation loc, locate_checkpoint(*shared_->fs, location));
  return shared_->fs->write_file(join_path(loc.checkpoint_dir, name), bytes, Durability::kNone)
      .with_context("writing " + name + " of checkpoint " + location);
}

std::optional<std::string> FileSystemCheckpointStorage::local_file_path(const std::string& location,
                                                                        const std::string& relative_path) const {
  auto loc = locate_checkpoint(*shared_->fs, location);
  if (!loc.is_ok()) return std::nullopt;
  return handle_file_path(loc->checkpoint_dir, relative_path);
}

std::optional<std::string> FileSystemCheckpointStorage::rebase_shared_path(const std::string& location,
                                                                           const std::string& relative_path) const {
  auto jd = job_dir();
  if (!jd.is_ok()) return std::nullopt;
  auto loc = locate_checkpoint(*shared_->fs, location);
  if (!loc.is_ok()) return std::nullopt;
  auto normal = [](const std::string& p) { return std::filesystem::weakly_canonical(p).string(); };
  std::string their_job = normal(loc->base_dir), our_job = normal(*jd);
  if (their_job == our_job) return relative_path;
  if (path_parent(their_job) != path_parent(our_job)) return std::nullopt;
  if (relative_path.rfind("../", 0) == 0) return relative_path;  // already a sibling's file
  return "../" + path_file_name(their_job) + "/" + relative_path;
}

Result<bool> FileSystemCheckpointStorage::remove_job_dir_if_empty() {
  SLUICE_ASSIGN_OR_RETURN(std::string jd, job_dir());
  FileSystem& fs = *shared_->fs;
  SLUICE_ASSIGN_OR_RETURN(PathKind kind, fs.stat(jd));
  if (kind == PathKind::kMissing) return false;
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, fs.list_dir(jd));
  for (const DirEntry& e : entries) {
    bool known_subdir = e.kind == PathKind::kDirectory && (e.name == kSharedDirName || e.name == kTaskOwnedDirName);
    if (!known_subdir) return false;
    SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> inner, fs.list_dir(join_path(jd, e.name)));
    if (!inner.empty()) return false;
  }
  for (const DirEntry& e : entries) {
    Status st = fs.remove_empty_dir(join_path(jd, e.name));
    if (st.code() == StatusCode::kFailedPrecondition) return false;  // something arrived meanwhile
    SLUICE_RETURN_IF_ERROR(st);
  }
  Status st = fs.remove_empty_dir(jd);
  if (st.code() == StatusCode::kFailedPrecondition) return false;
  SLUICE_RETURN_IF_ERROR(st);
  return true;
}

std::string FileSystemCheckpointStorage::describe() const {
  return "filesystem:" + shared_->base_dir + " (state below " +
         format_bytes(static_cast<uint64_t>(shared_->inline_threshold_bytes)) + " inline)";
}

const std::string& FileSystemCheckpointStorage::base_dir() const { return shared_->base_dir; }

Result<std::string> FileSystemCheckpointStorage::job_dir() const { return shared_->job_dir_or_error(); }

Result<std::string> FileSystemCheckpointStorage::checkpoint_dir(CheckpointId id) const {
  SLUICE_ASSIGN_OR_RETURN(std::string jd, shared_->job_dir_or_error());
  return join_path(jd, checkpoint_dir_name(id));
}

}  // namespace sluice::checkpoint
