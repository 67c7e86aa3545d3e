#include "checkpoint/jobmanager_checkpoint_storage.h"

#include <xxhash.h>

#include <map>
#include <mutex>
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

// Parses "jobmanager://<job>/<n>".
bool parse_location(const std::string& location, JobId* job, int64_t* id) {
  static constexpr std::string_view kScheme = "jobmanager://";
  if (location.compare(0, kScheme.size(), kScheme) != 0) return false;
  std::string rest = location.substr(kScheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || !JobId::parse(rest.substr(0, slash), job)) return false;
  std::string n = rest.substr(slash + 1);
  if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos) return false;
  *id = std::stoll(n);
  return true;
}

}  // namespace

JobManagerCheckpointStorage::JobManagerCheckpointStorage(JobManagerStorageOptions options)
    : shared_(std::make_shared<Shared>()) {
  shared_->max_state_size_bytes = options.max_state_size_bytes;
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
  std::lock_guard lock(shared_->mu);
  if (shared_->job != job) shared_->completed.clear();
  shared_->job = job;
  return Status::ok();
}

Result<std::shared_ptr<CheckpointStreamFactory>> JobManagerCheckpointStorage::stream_factory(CheckpointId id) {
  std::lock_guard lock(shared_->mu);
  if (!shared_->job) {
    return Status::failed_precondition("checkpoint " + std::to_string(id.value()) +
                                       ": JobManager checkpoint storage is not initialized");
  }
  return std::shared_ptr<CheckpointStreamFactory>(std::make_shared<JmStreamFactory>(shared_->max_state_size_bytes));
}

Result<std::string> JobManagerCheckpointStorage::write_metadata(const CheckpointMetadata& metadata) {
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
  if (!handle.is_inline()) {
    return Status::invalid_argument(location + ": state file '" + handle.relative_path +
                                    "' cannot be read from the JobManager checkpoint storage (inline state only)");
  }
  auto bytes = read_inline_state_handle(handle);
  if (!bytes.is_ok()) return bytes.status().with_context(location);
  return bytes;
}

Status JobManagerCheckpointStorage::discard(CheckpointId id) {
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
