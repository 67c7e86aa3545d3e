#include "checkpoint/jobmanager_checkpoint_storage.h"

#include <xxhash.h>

#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <optional>
#include <utility>

#include "checkpoint/byte_size_text.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/metadata_codec.h"

namespace sluice::checkpoint {

struct JobManagerCheckpointStorage::Shared {
  int64_t max_state_size_bytes;
  std::mutex mu;
  std::optional<JobId> job;
  std::map<int64_t, CheckpointMetadata> completed;
  std::set<int64_t> savepoint_ids;  // begun by begin_savepoint: the file storage's
};

namespace {

class JmStreamFactory final : public CheckpointStreamFactory {
 public:
  explicit JmStreamFactory(int64_t max_state_size_bytes) : max_(max_state_size_bytes) {}

  Result<StreamStateHandle> write_state(const std::string& owner, const std::string& /*name_hint*/,
                                        const std::vector<uint8_t>& bytes) override {
    if (static_cast<int64_t>(bytes.size()) > max_) {
      return Status::failed_precondition(
          owner + ": state of " + format_bytes(bytes.size()) + " (" + std::to_string(bytes.size()) +
          " bytes) exceeds the max state size of the JobManager checkpoint storage, " +
          format_bytes(static_cast<uint64_t>(max_)) + " (" + std::to_string(max_) +
          " bytes); set execution.checkpointing.dir to checkpoint to files");
    }
    StreamStateHandle h;
    h.inline_bytes = bytes;
    h.size_bytes = bytes.size();
    h.checksum = XXH3_64bits(bytes.data(), bytes.size());
    return h;
  }

 private:
  int64_t max_;
};

constexpr std::string_view kLocationScheme = "jobmanager://";

// Parses "jobmanager://<job>/<n>".
bool parse_location(const std::string& location, JobId* job, int64_t* id) {
  if (!location.starts_with(kLocationScheme)) return false;
  std::string rest = location.substr(kLocationScheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || !JobId::parse(rest.substr(0, slash), job)) return false;
  std::string n = rest.substr(slash + 1);
  if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos) return false;
  *id = std::stoll(n);
  return true;
}

}  // namespace

JobManagerCheckpointStorage::JobManagerCheckpointStorage(JobManagerStorageOptions options,
                                                         std::shared_ptr<CheckpointStorage> savepoints)
    : shared_(std::make_shared<Shared>()), savepoints_(std::move(savepoints)) {
  shared_->max_state_size_bytes = options.max_state_size_bytes;
}

CheckpointStorage* JobManagerCheckpointStorage::files_for(const std::string& location) const {
  return location.starts_with(kLocationScheme) ? nullptr : savepoints_.get();
}

bool JobManagerCheckpointStorage::is_savepoint(CheckpointId id) const {
  std::lock_guard lock(shared_->mu);
  return shared_->savepoint_ids.count(id.value()) > 0;
}

JobManagerCheckpointStorage::~JobManagerCheckpointStorage() = default;

std::string JobManagerCheckpointStorage::location_of(const JobId& job, CheckpointId id) {
  return "jobmanager://" + job.to_hex() + "/" + std::to_string(id.value());
}

Status JobManagerCheckpointStorage::initialize(const JobId& job) {
  if (shared_->max_state_size_bytes <= 0) {
    return Status::invalid_argument("JobManager checkpoint storage: max state size must be positive, got " +
                                    std::to_string(shared_->max_state_size_bytes) + " bytes");
  }
  if (savepoints_) SLUICE_RETURN_IF_ERROR(savepoints_->initialize_for_savepoints(job));
  std::lock_guard lock(shared_->mu);
  if (shared_->job != job) {
    shared_->completed.clear();
    shared_->savepoint_ids.clear();
  }
  shared_->job = job;
  return Status::ok();
}

Status JobManagerCheckpointStorage::initialize_for_savepoints(const JobId& job) {
  if (!savepoints_) return CheckpointStorage::initialize_for_savepoints(job);
  return savepoints_->initialize_for_savepoints(job);
}

Status JobManagerCheckpointStorage::begin_savepoint(CheckpointId id, const std::string& savepoint_dir) {
  if (!savepoints_) return CheckpointStorage::begin_savepoint(id, savepoint_dir);
  SLUICE_RETURN_IF_ERROR(savepoints_->begin_savepoint(id, savepoint_dir));
  std::lock_guard lock(shared_->mu);
  shared_->savepoint_ids.insert(id.value());
  return Status::ok();
}

Status JobManagerCheckpointStorage::check_restore_files(const std::string& location, const CheckpointMetadata& metadata,
                                                        RestoreFileCheck check) {
  if (CheckpointStorage* files = files_for(location)) return files->check_restore_files(location, metadata, check);
  return Status::ok();
}

Status JobManagerCheckpointStorage::write_side_file(const std::string& location, const std::string& name,
                                                    const std::vector<uint8_t>& bytes) {
  if (CheckpointStorage* files = files_for(location)) return files->write_side_file(location, name, bytes);
  return Status::ok();
}

std::optional<std::string> JobManagerCheckpointStorage::file_path(const std::string& location,
                                                                  const std::string& relative_path) const {
  if (CheckpointStorage* files = files_for(location)) return files->file_path(location, relative_path);
  return std::nullopt;
}

Result<std::shared_ptr<fs::FileSystem>> JobManagerCheckpointStorage::file_system(const std::string& path) const {
  if (savepoints_) return savepoints_->file_system(path);
  return CheckpointStorage::file_system(path);
}

Result<std::shared_ptr<CheckpointStreamFactory>> JobManagerCheckpointStorage::stream_factory(CheckpointId id) {
  if (is_savepoint(id)) return savepoints_->stream_factory(id);
  std::lock_guard lock(shared_->mu);
  if (!shared_->job) {
    return Status::failed_precondition("checkpoint " + std::to_string(id.value()) +
                                       ": JobManager checkpoint storage is not initialized");
  }
  return std::shared_ptr<CheckpointStreamFactory>(std::make_shared<JmStreamFactory>(shared_->max_state_size_bytes));
}

Result<std::string> JobManagerCheckpointStorage::write_metadata(const CheckpointMetadata& metadata) {
  if (is_savepoint(metadata.checkpoint_id)) return savepoints_->write_metadata(metadata);
  const std::string ctx = "checkpoint " + std::to_string(metadata.checkpoint_id.value());
  SLUICE_RETURN_IF_ERROR(validate_metadata(metadata).with_context(ctx));
  if (!metadata.referenced_files().empty()) {
    return Status::invalid_argument(ctx + ": refers to file '" + metadata.referenced_files().front() +
                                    "', but the JobManager checkpoint storage holds inline state only");
  }
  std::lock_guard lock(shared_->mu);
  if (!shared_->job) return Status::failed_precondition(ctx + ": JobManager checkpoint storage is not initialized");
  if (metadata.job_id != *shared_->job) {
    return Status::failed_precondition(ctx + ": belongs to job " + metadata.job_id.to_hex() + ", this storage to job " +
                                       shared_->job->to_hex());
  }
  if (!shared_->completed.emplace(metadata.checkpoint_id.value(), metadata).second) {
    return Status::failed_precondition(ctx + " is already complete");
  }
  return location_of(metadata.job_id, metadata.checkpoint_id);
}

Result<CheckpointMetadata> JobManagerCheckpointStorage::read_metadata(const std::string& location) {
  if (CheckpointStorage* files = files_for(location)) return files->read_metadata(location);
  JobId job;
  int64_t id = 0;
  if (!parse_location(location, &job, &id)) {
    return Status::invalid_argument("'" + location +
                                    "' is not a JobManager checkpoint location (jobmanager://<job>/<n>)");
  }
  std::lock_guard lock(shared_->mu);
  auto it = shared_->completed.find(id);
  if (shared_->job != job || it == shared_->completed.end()) {
    return Status::not_found(location + ": no such checkpoint in the JobManager's memory");
  }
  return it->second;
}

Result<std::vector<uint8_t>> JobManagerCheckpointStorage::read_state(const std::string& location,
                                                                      const StreamStateHandle& handle) {
  if (CheckpointStorage* files = files_for(location)) return files->read_state(location, handle);
  if (!handle.is_inline()) {
    return Status::invalid_argument(location + ": state file '" + handle.relative_path +
                                    "' cannot be read from the JobManager checkpoint storage (inline state only)");
  }
  auto bytes = read_inline_state_handle(handle);
  if (!bytes.is_ok()) return bytes.status().with_context(location);
  return bytes;
}

Status JobManagerCheckpointStorage::discard(CheckpointId id) {
  if (is_savepoint(id)) return savepoints_->discard(id);
  std::lock_guard lock(shared_->mu);
  shared_->completed.erase(id.value());
  return Status::ok();
}

Result<bool> JobManagerCheckpointStorage::remove_job_dir_if_empty() {
  std::lock_guard lock(shared_->mu);
  return shared_->completed.empty();
}

std::string JobManagerCheckpointStorage::describe() const {
  return "jobmanager (max state size " + format_bytes(static_cast<uint64_t>(shared_->max_state_size_bytes)) + ")";
}

}  // namespace sluice::checkpoint
