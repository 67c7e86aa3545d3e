#include "checkpoint/local_recovery_storage.h"

#include <cinttypes>
#include <cstdio>
#include <iterator>

#include <spdlog/spdlog.h>
#include <xxhash.h>

namespace sluice::checkpoint {
namespace {

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace

// The primary's factory, with a local copy of every state file it writes.
class LocalRecoveryStorage::Factory final : public CheckpointStreamFactory {
 public:
  Factory(std::weak_ptr<LocalRecoveryStorage> owner, CheckpointId id, std::shared_ptr<CheckpointStreamFactory> primary)
      : owner_(std::move(owner)), id_(id), primary_(std::move(primary)) {}

  Result<StreamStateHandle> write_state(const std::string& owner, const std::string& name_hint,
                                        const std::vector<uint8_t>& bytes) override {
    SLUICE_ASSIGN_OR_RETURN(StreamStateHandle handle, primary_->write_state(owner, name_hint, bytes));
    if (handle.is_inline()) return handle;
    if (std::shared_ptr<LocalRecoveryStorage> storage = owner_.lock()) storage->keep_copy(id_, handle, bytes);
    return handle;
  }
  Result<StreamStateHandle> write_shared_file(const std::string& owner, const std::string& name_hint,
                                              const std::string& local_path) override {
    return primary_->write_shared_file(owner, name_hint, local_path);
  }
  Result<StreamStateHandle> write_private_file(const std::string& owner, const std::string& name_hint,
                                               const std::string& local_path) override {
    return primary_->write_private_file(owner, name_hint, local_path);
  }

 private:
  std::weak_ptr<LocalRecoveryStorage> owner_;  // gone: no local copy
  const CheckpointId id_;
  const std::shared_ptr<CheckpointStreamFactory> primary_;
};

Result<std::shared_ptr<LocalRecoveryStorage>> LocalRecoveryStorage::create(std::shared_ptr<CheckpointStorage> primary,
                                                                           std::shared_ptr<fs::FileSystem> local_fs,
                                                                           std::string local_dir,
                                                                           int32_t retained_checkpoints) {
  if (!primary) return Status::invalid_argument("local recovery: no checkpoint storage to keep local copies of");
  if (!local_fs) return Status::invalid_argument("local recovery: no file system for the local copies");
  if (local_dir.empty()) return Status::invalid_argument("local recovery: the local state directory is empty");
  if (retained_checkpoints < 1) {
    return Status::invalid_argument("local recovery: retained checkpoints " + std::to_string(retained_checkpoints) +
                                    " (expected >= 1)");
  }
  SLUICE_ASSIGN_OR_RETURN(fs::PathKind kind, local_fs->stat(local_dir));
  if (kind != fs::PathKind::kMissing) {
    return Status::failed_precondition("local recovery: the local state directory '" + local_dir +
                                       "' exists already (each process makes its own and removes it at exit)");
  }
  SLUICE_RETURN_IF_ERROR(
      fs::create_directories_durable(*local_fs, local_dir).with_context("local recovery: creating '" + local_dir + "'"));
  return std::shared_ptr<LocalRecoveryStorage>(
      new LocalRecoveryStorage(std::move(primary), std::move(local_fs), std::move(local_dir), retained_checkpoints));
}

LocalRecoveryStorage::LocalRecoveryStorage(std::shared_ptr<CheckpointStorage> primary,
                                           std::shared_ptr<fs::FileSystem> local_fs, std::string local_dir,
                                           int32_t retained)
    : primary_(std::move(primary)), local_fs_(std::move(local_fs)), local_dir_(std::move(local_dir)),
      retained_(retained) {}

LocalRecoveryStorage::~LocalRecoveryStorage() {
  Status removed = local_fs_->remove_all(local_dir_);
  if (!removed.is_ok()) spdlog::warn("local recovery: cannot remove '{}': {}", local_dir_, removed.to_string());
}

LocalRecoveryStats LocalRecoveryStorage::stats() const {
  return {local_reads_.load(), fallback_reads_.load(), remote_reads_.load(), copies_written_.load()};
}

std::string LocalRecoveryStorage::describe() const {
  return primary_->describe() + " (local copies in " + local_dir_ + ")";
}

Result<std::shared_ptr<CheckpointStreamFactory>> LocalRecoveryStorage::stream_factory(CheckpointId id) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<CheckpointStreamFactory> primary, primary_->stream_factory(id));
  std::vector<int64_t> old;
  {
    std::lock_guard lock(mu_);
    if (savepoints_.count(id.value()) != 0) return primary;
    checkpoints_.insert(id.value());
    while (static_cast<int32_t>(checkpoints_.size()) > retained_) {
      old.push_back(*checkpoints_.begin());
      checkpoints_.erase(checkpoints_.begin());
    }
  }
  drop(old);
  return std::shared_ptr<CheckpointStreamFactory>(std::make_shared<Factory>(weak_from_this(), id, std::move(primary)));
}

void LocalRecoveryStorage::keep_copy(CheckpointId id, const StreamStateHandle& handle, const std::vector<uint8_t>& bytes) {
  const std::string dir = local_dir_ + "/chk-" + std::to_string(id.value());
  const std::string file = dir + "/" + hex16(XXH3_64bits(handle.relative_path.data(), handle.relative_path.size()));
  {
    std::lock_guard lock(mu_);
    if (checkpoints_.count(id.value()) == 0) return;  // dropped meanwhile (discarded, or older than the retained)
  }
  // Not synced: a copy lost in a power loss only costs the faster read (the checksum catches a torn one).
  Status written = local_fs_->create_dir(dir);
  if (written.is_ok()) written = local_fs_->write_file(file, bytes, fs::Durability::kNone);
  if (!written.is_ok()) {
    spdlog::warn("local recovery: no local copy of '{}' (checkpoint {}): {}", handle.relative_path, id.value(),
                 written.to_string());
    return;
  }
  bool keep = false;
  {
    std::lock_guard lock(mu_);
    keep = checkpoints_.count(id.value()) != 0;
    if (keep) copies_[handle.relative_path] = {id.value(), file};
  }
  if (!keep) {
    (void)local_fs_->remove_file(file);  // its checkpoint was dropped while the copy was written
    return;
  }
  copies_written_.fetch_add(1);
}

void LocalRecoveryStorage::drop(const std::vector<int64_t>& ids) {
  if (ids.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (int64_t id : ids) checkpoints_.erase(id);
    for (auto it = copies_.begin(); it != copies_.end();) {
      bool dropped = false;
      for (int64_t id : ids) dropped = dropped || it->second.first == id;
      it = dropped ? copies_.erase(it) : std::next(it);
    }
  }
  for (int64_t id : ids) (void)local_fs_->remove_all(local_dir_ + "/chk-" + std::to_string(id));
}

Result<std::vector<uint8_t>> LocalRecoveryStorage::read_state(const std::string& location,
                                                               const StreamStateHandle& handle) {
  if (handle.is_inline()) return primary_->read_state(location, handle);
  std::optional<std::pair<int64_t, std::string>> copy;
  {
    std::lock_guard lock(mu_);
    if (auto it = copies_.find(handle.relative_path); it != copies_.end()) copy = it->second;
  }
  if (!copy) {
    remote_reads_.fetch_add(1);
    return primary_->read_state(location, handle);
  }
  Result<std::vector<uint8_t>> bytes = local_fs_->read_file(copy->second);
  std::string why;
  if (!bytes.is_ok()) {
    why = "missing or unreadable (" + bytes.status().to_string() + ")";
  } else if (bytes->size() != handle.size_bytes) {
    why = "damaged: " + std::to_string(bytes->size()) + " bytes, the checkpoint recorded " +
          std::to_string(handle.size_bytes);
  } else if (XXH3_64bits(bytes->data(), bytes->size()) != handle.checksum) {
    why = "damaged: its checksum differs from the checkpoint's";
  }
  if (why.empty()) {
    local_reads_.fetch_add(1);
    return std::move(*bytes);
  }
  spdlog::warn("local recovery: the local copy {} of '{}' (checkpoint {}) is {}; reading it from checkpoint storage",
               copy->second, handle.relative_path, copy->first, why);
  fallback_reads_.fetch_add(1);
  return primary_->read_state(location, handle);
}

Status LocalRecoveryStorage::discard(CheckpointId id) {
  drop({id.value()});
  return primary_->discard(id);
}

Status LocalRecoveryStorage::begin_savepoint(CheckpointId id, const std::string& savepoint_dir) {
  bool copied = false;
  {
    std::lock_guard lock(mu_);
    savepoints_.insert(id.value());
    copied = checkpoints_.count(id.value()) != 0;  // a task of this process got its barrier first
  }
  if (copied) drop({id.value()});
  return primary_->begin_savepoint(id, savepoint_dir);
}

}  // namespace sluice::checkpoint
