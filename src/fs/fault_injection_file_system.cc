#include "fs/fault_injection_file_system.h"

#include <utility>

#include "fs/path.h"

namespace sluice::fs {
namespace {

const char* op_name(FileOp op) {
  switch (op) {
    case FileOp::kCreateDir: return "create_dir";
    case FileOp::kWriteFile: return "write_file";
    case FileOp::kSyncDir: return "sync_dir";
    case FileOp::kRead: return "read";
    case FileOp::kRemove: return "remove";
  }
  return "?";
}

std::string normalized(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string parent_dir(const std::string& path) {
  std::string p = path_parent(path);
  return p.empty() ? "." : p;
}

bool is_under(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

}  // namespace

FaultInjectionFileSystem::FaultInjectionFileSystem(std::shared_ptr<FileSystem> base) : base_(std::move(base)) {}

void FaultInjectionFileSystem::inject_failure(FileOp op, std::string path_substring, int count, int skip) {
  if (count == 0) return;
  std::lock_guard lock(mu_);
  faults_.push_back(Fault{op, std::move(path_substring), count, skip});
}

void FaultInjectionFileSystem::clear_failures() {
  std::lock_guard lock(mu_);
  faults_.clear();
}

int64_t FaultInjectionFileSystem::count(FileOp op) const {
  std::lock_guard lock(mu_);
  return counts_[static_cast<int>(op)];
}

void FaultInjectionFileSystem::set_hook(Hook hook) {
  std::lock_guard lock(mu_);
  hook_ = std::move(hook);
}

Status FaultInjectionFileSystem::check_fault(FileOp op, const std::string& path) {
  Hook hook;
  {
    std::lock_guard lock(mu_);
    hook = hook_;
  }
  if (hook) hook(op, path);
  std::lock_guard lock(mu_);
  ++counts_[static_cast<int>(op)];
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->op != op) continue;
    if (path.find(it->path_substring) == std::string::npos) continue;
    if (it->skip > 0) {
      --it->skip;
      continue;
    }
    if (it->remaining > 0 && --it->remaining == 0) faults_.erase(it);
    return Status::io_error(std::string("injected failure: ") + op_name(op) + " '" + path + "'");
  }
  return Status::ok();
}

bool FaultInjectionFileSystem::exists(const std::string& path) {
  auto k = base_->stat(path);
  return k.is_ok() && *k != PathKind::kMissing;
}

Status FaultInjectionFileSystem::create_dir(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kCreateDir, path));
  std::string p = normalized(path);
  bool existed = exists(p);
  SLUICE_RETURN_IF_ERROR(base_->create_dir(p));
  if (!existed) {
    std::lock_guard lock(mu_);
    pending_.push_back(PendingEntry{parent_dir(p), p, std::nullopt});
  }
  return Status::ok();
}

Status FaultInjectionFileSystem::write_file(const std::string& path, const std::vector<uint8_t>& bytes,
                                            Durability durability) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kWriteFile, path));
  std::string p = normalized(path);
  // The file is published under its name (a rename on a local disk): until the directory is synced, a power
  // loss brings back what the name held before, or nothing.
  std::optional<std::vector<uint8_t>> displaced;
  if (exists(p)) {
    auto old = base_->read_file(p);
    if (old.is_ok()) displaced = std::move(old).value();
  }
  SLUICE_RETURN_IF_ERROR(base_->write_file(p, bytes, durability));
  std::lock_guard lock(mu_);
  pending_.push_back(PendingEntry{parent_dir(p), p, std::move(displaced)});
  if (durability == Durability::kSync) {
    unsynced_data_.erase(p);
  } else {
    unsynced_data_.insert(p);
  }
  return Status::ok();
}

Status FaultInjectionFileSystem::sync_dir(const std::string& dir) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kSyncDir, dir));
  std::string d = normalized(dir);
  SLUICE_RETURN_IF_ERROR(base_->sync_dir(d));
  std::lock_guard lock(mu_);
  std::erase_if(pending_, [&](const PendingEntry& e) { return e.dir == d; });
  return Status::ok();
}

Result<std::vector<uint8_t>> FaultInjectionFileSystem::read_file(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kRead, path));
  return base_->read_file(normalized(path));
}

Result<FileDigest> FaultInjectionFileSystem::digest_file(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kRead, path));
  return base_->digest_file(normalized(path));
}

Result<PathKind> FaultInjectionFileSystem::stat(const std::string& path) { return base_->stat(normalized(path)); }

Result<uint64_t> FaultInjectionFileSystem::file_size(const std::string& path) {
  return base_->file_size(normalized(path));
}

Result<std::vector<DirEntry>> FaultInjectionFileSystem::list_dir(const std::string& dir) {
  return base_->list_dir(normalized(dir));
}

Status FaultInjectionFileSystem::remove_file(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kRemove, path));
  std::string p = normalized(path);
  SLUICE_RETURN_IF_ERROR(base_->remove_file(p));
  std::lock_guard lock(mu_);
  unsynced_data_.erase(p);
  return Status::ok();
}

Status FaultInjectionFileSystem::remove_empty_dir(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kRemove, path));
  return base_->remove_empty_dir(normalized(path));
}

Status FaultInjectionFileSystem::remove_all(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(check_fault(FileOp::kRemove, path));
  std::string p = normalized(path);
  SLUICE_RETURN_IF_ERROR(base_->remove_all(p));
  std::lock_guard lock(mu_);
  std::erase_if(unsynced_data_, [&](const std::string& s) { return is_under(s, p); });
  return Status::ok();
}

Status FaultInjectionFileSystem::drop_unsynced() {
  std::set<std::string> unsynced;
  std::vector<PendingEntry> pending;
  {
    std::lock_guard lock(mu_);
    unsynced.swap(unsynced_data_);
    pending.swap(pending_);
  }
  // Lost bytes first, then the directory changes, newest first. Undo steps whose subject is gone are skipped.
  for (const std::string& p : unsynced) SLUICE_RETURN_IF_ERROR(base_->remove_file(p));
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    if (it->displaced) {
      SLUICE_RETURN_IF_ERROR(base_->write_file(it->path, *it->displaced, Durability::kSync));
    } else if (exists(it->path)) {
      SLUICE_RETURN_IF_ERROR(base_->remove_all(it->path));
    }
  }
  return Status::ok();
}

}  // namespace sluice::fs
