// Incremental snapshots and their restore for RocksDBBackendCore (incremental_snapshot.h).
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <mutex>
#include <random>
#include <system_error>
#include <utility>

#include "fs/file_system.h"
#include "sluice/detail/state/rocksdb/rocksdb_backend_core.h"
#include "sluice/detail/state/rocksdb/rocksdb_key_layout.h"

namespace sluice {

// What a backend remembers about its uploads. Shared with its snapshots (set_uploaded runs on async threads).
struct RocksDBUploadTracker {
  std::mutex mu;
  // Per checkpoint not yet confirmed: SST local name -> its shared file.
  std::map<int64_t, std::map<std::string, SharedFileRef>> pending;
  // The SSTs of the last completed checkpoint: what the next snapshot may reuse.
  std::map<std::string, SharedFileRef> confirmed;
};

std::shared_ptr<RocksDBUploadTracker> new_upload_tracker() { return std::make_shared<RocksDBUploadTracker>(); }

std::string new_backend_id(const RocksDBStateBackendOptions& options) {
  const std::shared_ptr<NameSource> names = name_source_or_random(options.names);
  const std::string stream = "rocksdb-backend:" + options.instance_name;
  return names->hex(stream) + names->hex(stream);
}

namespace {

namespace stdfs = std::filesystem;

bool is_sst(const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0; }

class RocksDBIncrementalSnapshot final : public IncrementalKeyedSnapshot {
 public:
  RocksDBIncrementalSnapshot(std::string dir, std::shared_ptr<RocksDBUploadTracker> tracker, SnapshotFileReuse reuse)
      : dir_(std::move(dir)), tracker_(std::move(tracker)), reuse_(reuse) {}
  ~RocksDBIncrementalSnapshot() override { release(); }

  void set_uploaded(std::map<std::string, SharedFileRef> shared) override {
    // A native savepoint's files live in its own folder (paths relative to it): never reused by checkpoints.
    if (reuse_ == SnapshotFileReuse::kUploadEverything) return;
    std::lock_guard<std::mutex> lock(tracker_->mu);
    tracker_->pending[checkpoint_id.value()] = std::move(shared);
  }

  void release() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    released_ = true;
    std::error_code ec;
    stdfs::remove_all(dir_, ec);
  }

 private:
  const std::string dir_;
  const std::shared_ptr<RocksDBUploadTracker> tracker_;
  const SnapshotFileReuse reuse_;
  std::mutex mu_;
  bool released_ = false;
};

// Size and XXH3-64 of a local file, streamed.
Status check_digest(const sluice::fs::FileDigest& d, const IncrementalRestoreFile& f, const std::string& what) {
  if (d.size_bytes != f.size_bytes) {
    return Status::corruption(what + ": file '" + f.path + "' (" + f.local_name + ") is damaged: it has " +
                              std::to_string(d.size_bytes) + " bytes, the checkpoint recorded " +
                              std::to_string(f.size_bytes) + " (truncated or replaced)");
  }
  if (d.checksum != f.checksum) {
    return Status::corruption(what + ": file '" + f.path + "' (" + f.local_name +
                              ") does not match the checksum the checkpoint recorded (damaged)");
  }
  return Status::ok();
}

// Restores at most this many files at once: a download from an object store is latency-bound, a local copy is
// not slowed by a few in parallel.
constexpr size_t kParallelDownloads = 4;

// Puts one handle's files into `dir` through the storage's FileSystem: SST files hard-linked where possible (they
// are immutable), everything else copied; every file checked against its recorded size and checksum. Files are
// fetched kParallelDownloads at a time; the first error (in file order) is returned.
Status download(const IncrementalRestoreHandle& h, const std::string& dir) {
  struct Job {
    const IncrementalRestoreFile* file;
    bool shared;
  };
  std::vector<Job> jobs;
  for (const IncrementalRestoreFile& f : h.shared_files) jobs.push_back({&f, true});
  for (const IncrementalRestoreFile& f : h.private_files) jobs.push_back({&f, false});
  auto fetch = [&](const Job& j) -> Status {
    const IncrementalRestoreFile& f = *j.file;
    const std::string what = h.what + (j.shared ? " shared file " : " private file ") + f.local_name;
    sluice::fs::FileSystem& source = f.file_system ? *f.file_system : *sluice::fs::local_file_system();
    const std::string dest = (std::filesystem::path(dir) / f.local_name).string();
    auto d = source.copy_to_local_file(
        f.path, dest, j.shared ? sluice::fs::LocalCopyMode::kLinkIfPossible : sluice::fs::LocalCopyMode::kIndependent);
    if (!d.is_ok()) {
      if (d.status().code() == StatusCode::kNotFound) {
        return Status::not_found(what + ": '" + f.path +
                                 "' is missing (the checkpoint refers to it, but it does not exist)");
      }
      return d.status().with_context(what);
    }
    return check_digest(*d, f, what);
  };
  std::vector<Status> results(jobs.size());
  for (size_t begin = 0; begin < jobs.size(); begin += kParallelDownloads) {
    const size_t end = std::min(jobs.size(), begin + kParallelDownloads);
    std::vector<std::future<Status>> running;
    for (size_t i = begin + 1; i < end; ++i) running.push_back(std::async(std::launch::async, fetch, jobs[i]));
    results[begin] = fetch(jobs[begin]);
    for (size_t i = begin + 1; i < end; ++i) results[i] = running[i - begin - 1].get();
    for (size_t i = begin; i < end; ++i) SLUICE_RETURN_IF_ERROR(results[i]);
  }
  return Status::ok();
}

// Copies key groups [range] of every column family of `from` into the same-named column families of `to`.
Status copy_key_groups(RocksDBStore& from, RocksDBStore& to, KeyGroupRange range, const std::string& what) {
  const std::string lower = rocksdb_layout::key_group_prefix(range.start());
  const std::string upper = rocksdb_layout::key_group_prefix(range.end_inclusive() + 1);
  const std::vector<std::string> names = from.column_family_names();
  for (size_t i = 0; i < names.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(int32_t cf, to.column_family(names[i]));
    RocksDBStore::WriteBatch batch(to);
    size_t bytes = 0;
    for (auto it = from.new_iterator(static_cast<int32_t>(i), lower, upper); ; it->next()) {
      if (!it->valid()) {
        SLUICE_RETURN_IF_ERROR(it->status().with_context(what));
        break;
      }
      batch.put(cf, it->key(), it->value());
      bytes += it->key().size() + it->value().size();
      if (bytes >= (4u << 20)) {
        SLUICE_RETURN_IF_ERROR(to.try_write(batch).with_context(what));
        batch.clear();
        bytes = 0;
      }
    }
    if (batch.count() > 0) SLUICE_RETURN_IF_ERROR(to.try_write(batch).with_context(what));
  }
  return Status::ok();
}

}  // namespace

std::map<std::string, SharedFileRef> RocksDBBackendCore::reusable_shared_files() const {
  std::lock_guard<std::mutex> lock(tracker_->mu);
  return tracker_->confirmed;
}

void RocksDBBackendCore::notify_checkpoint_complete(CheckpointId id) {
  std::lock_guard<std::mutex> lock(tracker_->mu);
  auto it = tracker_->pending.find(id.value());
  if (it != tracker_->pending.end()) tracker_->confirmed = std::move(it->second);
  tracker_->pending.erase(tracker_->pending.begin(), tracker_->pending.upper_bound(id.value()));
}

void RocksDBBackendCore::notify_checkpoint_aborted(CheckpointId id) {
  std::lock_guard<std::mutex> lock(tracker_->mu);
  tracker_->pending.erase(id.value());
}

Result<std::unique_ptr<IncrementalKeyedSnapshot>> RocksDBBackendCore::snapshot_incremental(CheckpointId id,
                                                                                           SnapshotFileReuse reuse) {
  if (!pending_.empty()) {
    return Status::failed_precondition(
        "a state restored from a full snapshot is not registered by the program; an incremental snapshot holds "
        "only what is in RocksDB (register every restored state, or take full snapshots)");
  }
  SLUICE_RETURN_IF_ERROR(write_heap_states_to_column_families());
  const std::string dir = store_->path() + "-chk-" + std::to_string(id.value());
  std::error_code ec;
  stdfs::remove_all(dir, ec);  // a leftover of an earlier attempt with the same id
  SLUICE_ASSIGN_OR_RETURN(std::vector<LocalSnapshotFile> files, store_->create_native_checkpoint(dir));
  auto snap = std::make_unique<RocksDBIncrementalSnapshot>(dir, tracker_, reuse);
  snap->range = range_;
  snap->backend_id = backend_id_;
  snap->checkpoint_id = id;
  IncrementalStateMeta meta{max_parallelism_, key_serializer_, {}};
  for (const auto& [name, s] : states_) meta.states.push_back(s.meta);
  for (const auto& [name, m] : restored_cf_meta_) meta.states.push_back(m);
  for (const auto& [name, h] : heap_states_) meta.states.push_back(h.table->meta());
  std::sort(meta.states.begin(), meta.states.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  snap->state_meta = encode_incremental_state_meta(meta);
  std::lock_guard<std::mutex> lock(tracker_->mu);
  for (LocalSnapshotFile& f : files) {
    if (!is_sst(f.name)) {
      snap->private_files.push_back(std::move(f));
      continue;
    }
    auto reused = tracker_->confirmed.find(f.name);
    if (reuse == SnapshotFileReuse::kReuseCompletedUploads && reused != tracker_->confirmed.end() &&
        reused->second.size_bytes == f.size_bytes) {
      snap->shared_reused.emplace(f.name, reused->second);
    } else {
      snap->shared_to_upload.push_back(std::move(f));
    }
  }
  return std::unique_ptr<IncrementalKeyedSnapshot>(std::move(snap));
}

Status RocksDBBackendCore::restore_incremental(const std::vector<IncrementalRestoreHandle>& handles) {
  if (!states_.empty() || !restored_cf_meta_.empty() || !pending_.empty() || !heap_states_.empty()) {
    return Status::failed_precondition("restoring incremental RocksDB state: the backend already has state "
                                       "(restore runs once, before states are registered)");
  }
  // Check every handle's meta data first; keep those whose range meets ours.
  std::vector<const IncrementalRestoreHandle*> used;
  std::map<std::string, StateMetaInfo, std::less<>> metas;
  for (const IncrementalRestoreHandle& h : handles) {
    SLUICE_ASSIGN_OR_RETURN(IncrementalStateMeta m, decode_incremental_state_meta(h.state_meta, h.what));
    if (m.max_parallelism != max_parallelism_) {
      return Status::invalid_argument(h.what + ": taken with max parallelism " + std::to_string(m.max_parallelism) +
                                      ", this backend has " + std::to_string(max_parallelism_));
    }
    SLUICE_RETURN_IF_ERROR(check_key_serializer(h.what, m.key_serializer, key_serializer_));
    if (h.range.intersection(range_).is_empty()) continue;
    for (StateMetaInfo& s : m.states) {
      auto [it, added] = metas.emplace(s.name, s);
      if (!added && !(it->second == s)) {
        return Status::invalid_argument(h.what + ": state '" + s.name + "' is " + s.type_description() +
                                        " here but " + it->second.type_description() + " in another handle");
      }
    }
    used.push_back(&h);
  }
  if (used.empty()) return Status::ok();

  // The base: a handle covering our whole range if there is one (opened as it is), else the first.
  const IncrementalRestoreHandle* base = used.front();
  for (const IncrementalRestoreHandle* h : used) {
    if (h->range.intersection(range_) == range_) {
      base = h;
      break;
    }
  }
  RocksDBStore::Options opts{options_.local_dir, options_.instance_name};
  opts.names = options_.names;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RocksDBStore> store,
                          RocksDBStore::open_existing(opts, [&](const std::string& dir) { return download(*base, dir); }));
  // Drop the base's key groups outside our range.
  const KeyGroupRange keep = base->range.intersection(range_);
  if (keep != base->range) {
    const std::string lo = rocksdb_layout::key_group_prefix(0);
    const std::string keep_lo = rocksdb_layout::key_group_prefix(keep.start());
    const std::string keep_hi = rocksdb_layout::key_group_prefix(keep.end_inclusive() + 1);
    const std::string hi = rocksdb_layout::key_group_prefix(max_parallelism_);
    RocksDBStore::WriteBatch batch(*store);
    for (size_t cf = 0; cf < store->column_family_names().size(); ++cf) {
      if (lo < keep_lo) batch.delete_range(static_cast<int32_t>(cf), lo, keep_lo);
      if (keep_hi < hi) batch.delete_range(static_cast<int32_t>(cf), keep_hi, hi);
    }
    SLUICE_RETURN_IF_ERROR(store->try_write(batch).with_context(base->what));
  }
  // The others: opened aside, their intersecting key groups copied in.
  for (const IncrementalRestoreHandle* h : used) {
    if (h == base) continue;
    RocksDBStore::Options aside{options_.local_dir, options_.instance_name + "-restore"};
    aside.names = options_.names;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RocksDBStore> other,
                            RocksDBStore::open_existing(aside, [&](const std::string& dir) { return download(*h, dir); }));
    SLUICE_RETURN_IF_ERROR(copy_key_groups(*other, *store, h->range.intersection(range_), h->what));
  }
  store_ = std::move(store);
  restored_cf_meta_ = std::move(metas);

  // Reuse the restored shared files only when the database is exactly the restored one (no rescaling) and the
  // runtime says this job may refer to them (its own checkpoint, or a claimed one).
  std::map<std::string, SharedFileRef> reusable;
  if (used.size() == 1 && base->range == range_) {
    for (const IncrementalRestoreFile& f : base->shared_files) {
      if (f.reusable_path.empty()) {
        reusable.clear();
        break;
      }
      reusable.emplace(f.local_name, SharedFileRef{f.reusable_path, f.size_bytes, f.checksum});
    }
  }
  std::lock_guard<std::mutex> lock(tracker_->mu);
  tracker_->pending.clear();
  tracker_->confirmed = std::move(reusable);
  return Status::ok();
}

}  // namespace sluice
