#include "fs/s3/s3_recoverable_writer.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "core/failure_markers.h"
#include "fs/s3/s3_digest.h"
#include "fs/s3/s3_file_system.h"
#include "fs/s3/s3_part_pipeline.h"

namespace sluice::s3 {
namespace {

struct PersistedPart {
  int32_t part_number = 0;
  std::string etag;
  uint64_t size_bytes = 0;
  SLUICE_FIELDS(PersistedPart, part_number, etag, size_bytes)
};

// The scheme's encoding of a recoverable (ResumeRecoverable::state, CommitRecoverable::state).
struct UploadState {
  std::string bucket;
  std::string key;
  std::string upload_id;
  std::vector<PersistedPart> parts;
  std::string leftover_key;  // "" when none
  uint64_t leftover_bytes = 0;
  SLUICE_FIELDS(UploadState, bucket, key, upload_id, parts, leftover_key, leftover_bytes)
};

std::string s3_uri(const std::string& bucket, const std::string& key) { return "s3://" + bucket + "/" + key; }

// "a/b/part-1" -> "a/b/.part-1.leftover-": the prefix of every leftover object of that key.
std::string leftover_prefix(const std::string& key) {
  const size_t slash = key.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : key.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  return dir + "." + name + ".leftover-";
}

Result<UploadState> state_of(const std::vector<uint8_t>& bytes, const std::string& target) {
  auto s = deserialize_bytes<UploadState>(bytes.data(), bytes.size(), "S3 recoverable");
  if (!s.is_ok()) return Status::invalid_argument("not a recoverable of the s3 filesystem for '" + target + "'");
  SLUICE_ASSIGN_OR_RETURN(S3Location loc, parse_s3_path(target));
  if (loc.bucket != s->bucket || loc.key != s->key) {
    return Status::invalid_argument("the recoverable of '" + target + "' belongs to the upload of '" +
                                    s3_uri(s->bucket, s->key) + "': an S3 upload cannot move to another key");
  }
  return std::move(s).value();
}

std::vector<CompletedPart> completed_parts(const std::vector<PersistedPart>& parts) {
  std::vector<CompletedPart> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(CompletedPart{p.part_number, p.etag});
  return out;
}

class S3RecoverableStream final : public fs::RecoverableOutputStream {
 public:
  S3RecoverableStream(std::shared_ptr<S3Client> client, std::string target, UploadState state,
                      std::vector<uint8_t> buffer, uint64_t nonce)
      : client_(std::move(client)), target_(std::move(target)), state_(std::move(state)), buffer_(std::move(buffer)),
        nonce_(nonce),
        parts_(client_, state_.bucket, state_.key, state_.upload_id, client_->options().upload_parallelism) {
    for (const auto& p : state_.parts) position_ += p.size_bytes;
    position_ += buffer_.size();
    next_part_number_ = static_cast<int32_t>(state_.parts.size()) + 1;
  }

  Status write(std::span<const uint8_t> bytes) override {
    if (closed_) return Status::failed_precondition("file '" + target_ + "' is closed");
    const size_t part_size = client_->options().part_size_bytes;
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    position_ += bytes.size();
    size_t start = 0;
    while (buffer_.size() - start >= part_size) {
      const auto first = buffer_.begin() + static_cast<std::ptrdiff_t>(start);
      SLUICE_RETURN_IF_ERROR(submit_part(std::vector<uint8_t>(first, first + static_cast<std::ptrdiff_t>(part_size))));
      start += part_size;
    }
    if (start > 0) buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start));
    return Status::ok();
  }

  uint64_t position_bytes() const override { return position_; }

  Result<fs::ResumeRecoverable> persist() override {
    if (closed_) return Status::failed_precondition("file '" + target_ + "' is closed");
    SLUICE_RETURN_IF_ERROR(finish_parts());  // the recoverable names only parts S3 has acknowledged
    UploadState s = state_;
    s.leftover_key.clear();
    s.leftover_bytes = buffer_.size();
    if (!buffer_.empty()) {
      // A unique name per persist: an older checkpoint may still need the leftover of its own persist.
      char suffix[48];
      std::snprintf(suffix, sizeof(suffix), "%llu-%016llx", static_cast<unsigned long long>(position_),
                    static_cast<unsigned long long>(nonce_));
      s.leftover_key = leftover_prefix(state_.key) + suffix;
      SLUICE_RETURN_IF_ERROR(client_->put_object(s.bucket, s.leftover_key, buffer_)
                                 .with_context("persisting '" + target_ + "'"));
    }
    return fs::ResumeRecoverable{target_, position_, serialize_bytes(s)};
  }

  Result<fs::CommitRecoverable> close_for_commit() override {
    if (closed_) return Status::failed_precondition("file '" + target_ + "' is closed");
    if (!buffer_.empty() || next_part_number_ == 1) SLUICE_RETURN_IF_ERROR(submit_part(std::move(buffer_)));
    buffer_.clear();
    SLUICE_RETURN_IF_ERROR(finish_parts());
    closed_ = true;
    UploadState s = state_;
    s.leftover_key.clear();
    s.leftover_bytes = 0;
    return fs::CommitRecoverable{target_, position_, serialize_bytes(s)};
  }

  // Waits for the parts in flight, so that an abort after close() is not overtaken by one of them.
  void close() noexcept override {
    closed_ = true;
    parts_.cancel();
  }

 private:
  Status submit_part(std::vector<uint8_t> bytes) {
    Status s = parts_.submit(next_part_number_, std::move(bytes));
    if (!s.is_ok()) return s.with_context("writing '" + target_ + "'");
    ++next_part_number_;
    return Status::ok();
  }

  // Waits for the parts in flight and records them.
  Status finish_parts() {
    auto done = parts_.drain();
    if (!done.is_ok()) return done.status().with_context("writing '" + target_ + "'");
    for (UploadedPart& p : *done) state_.parts.push_back(PersistedPart{p.part_number, std::move(p.etag), p.size_bytes});
    return Status::ok();
  }

  std::shared_ptr<S3Client> client_;
  std::string target_;
  UploadState state_;  // parts uploaded so far; leftover fields unused
  std::vector<uint8_t> buffer_;
  uint64_t nonce_;
  PartPipeline parts_;  // full parts on their way; destroyed first, so its threads end before the members above
  int32_t next_part_number_ = 1;
  uint64_t position_ = 0;
  bool closed_ = false;
};

class S3RecoverableWriter final : public fs::RecoverableWriter {
 public:
  S3RecoverableWriter(std::shared_ptr<S3Client> client, std::shared_ptr<NameSource> names)
      : client_(std::move(client)), names_(std::move(names)) {}

  Result<std::unique_ptr<fs::RecoverableOutputStream>> open(const std::string& target_path) override {
    SLUICE_ASSIGN_OR_RETURN(S3Location loc, parse_s3_path(target_path));
    if (loc.key.empty()) return Status::invalid_argument("not a file path: '" + target_path + "'");
    auto id = client_->create_multipart_upload(loc.bucket, loc.key);
    if (!id.is_ok()) return id.status().with_context("opening '" + target_path + "'");
    UploadState s{loc.bucket, loc.key, *id, {}, "", 0};
    return std::unique_ptr<fs::RecoverableOutputStream>(
        std::make_unique<S3RecoverableStream>(client_, target_path, std::move(s), std::vector<uint8_t>{}, nonce()));
  }

  Result<std::unique_ptr<fs::RecoverableOutputStream>> recover(const fs::ResumeRecoverable& r) override {
    SLUICE_ASSIGN_OR_RETURN(UploadState s, state_of(r.state, r.target_path));
    auto parts = client_->list_parts(s.bucket, s.key, s.upload_id);
    if (!parts.is_ok()) {
      return parts.status().with_context("cannot resume '" + r.target_path + "' (upload " + s.upload_id + ")");
    }
    std::vector<uint8_t> leftover;
    if (!s.leftover_key.empty()) {
      auto got = client_->get_object(s.bucket, s.leftover_key);
      if (!got.is_ok()) {
        return got.status().with_context("cannot resume '" + r.target_path + "': its leftover object");
      }
      if (got->size() != s.leftover_bytes) {
        return Status::corruption("cannot resume '" + r.target_path + "': leftover object '" + s.leftover_key +
                                  "' has " + std::to_string(got->size()) + " bytes, expected " +
                                  std::to_string(s.leftover_bytes));
      }
      leftover = std::move(got).value();
    }
    s.leftover_key.clear();
    s.leftover_bytes = 0;
    auto stream = std::make_unique<S3RecoverableStream>(client_, r.target_path, std::move(s), std::move(leftover), nonce());
    if (stream->position_bytes() != r.position_bytes) {
      return Status::corruption("cannot resume '" + r.target_path + "': its parts and leftover hold " +
                                std::to_string(stream->position_bytes()) + " bytes, the recoverable says " +
                                std::to_string(r.position_bytes));
    }
    return std::unique_ptr<fs::RecoverableOutputStream>(std::move(stream));
  }

  Status commit(const fs::CommitRecoverable& c) override {
    SLUICE_ASSIGN_OR_RETURN(UploadState s, state_of(c.state, c.target_path));
    const std::vector<CompletedPart> parts = completed_parts(s.parts);
    auto done = client_->complete_multipart_upload(s.bucket, s.key, s.upload_id, parts);
    if (!done.is_ok()) {
      if (done.status().code() != StatusCode::kNotFound) {
        return done.status().with_context("cannot commit '" + c.target_path + "'");
      }
      // S3 forgets an upload once completed: the object with the ETag of these parts means committed before.
      SLUICE_RETURN_IF_ERROR(committed_before(s, parts, c.target_path));
    }
    return delete_leftovers(s.bucket, s.key);
  }

  Result<std::vector<fs::InProgressFile>> list_in_progress(const std::string& dir) override {
    SLUICE_ASSIGN_OR_RETURN(S3Location loc, parse_s3_path(dir));
    const std::string prefix = loc.key.empty() ? "" : loc.key + "/";
    auto uploads = client_->list_multipart_uploads(loc.bucket, prefix);
    if (!uploads.is_ok()) return uploads.status().with_context("listing unpublished files in '" + dir + "'");
    std::vector<fs::InProgressFile> out;
    for (const auto& u : *uploads) {
      if (u.key.size() <= prefix.size() || u.key.find('/', prefix.size()) != std::string::npos) continue;
      out.push_back(fs::InProgressFile{s3_uri(loc.bucket, u.key), fs::InProgressFile::Stage::kUnknown, u.upload_id});
    }
    // In target order whatever order the store lists in (s3proxy's filesystem store does not sort).
    std::sort(out.begin(), out.end(), [](const fs::InProgressFile& a, const fs::InProgressFile& b) {
      return a.target_path < b.target_path || (a.target_path == b.target_path && a.handle < b.handle);
    });
    return out;
  }

  Status abort(const fs::InProgressFile& file) override {
    SLUICE_ASSIGN_OR_RETURN(S3Location loc, parse_s3_path(file.target_path));
    Status s = client_->abort_multipart_upload(loc.bucket, loc.key, file.handle);
    if (!s.is_ok() && s.code() != StatusCode::kNotFound) return s.with_context("aborting '" + file.target_path + "'");
    return delete_leftovers(loc.bucket, loc.key);
  }

 private:
  Status committed_before(const UploadState& s, const std::vector<CompletedPart>& parts, const std::string& target) {
    const std::string gone = "cannot commit '" + target + "': its upload " + s.upload_id + " is gone";
    auto head = client_->head_object(s.bucket, s.key);
    if (!head.is_ok()) {
      if (head.status().code() == StatusCode::kNotFound) {
        return committable_data_gone(gone + " and the object does not exist");
      }
      return head.status().with_context(gone);
    }
    auto expected = expected_multipart_etag(parts);
    if (!expected.is_ok()) return expected.status().with_context(gone);
    if (!same_etag(head->etag, *expected)) {
      return committable_data_gone(gone + " and the object there has ETag " + head->etag + ", not " + *expected +
                                   " of the recorded parts");
    }
    return Status::ok();
  }

  Status delete_leftovers(const std::string& bucket, const std::string& key) {
    auto listed = client_->list_objects(bucket, leftover_prefix(key));
    if (!listed.is_ok()) return listed.status().with_context("deleting leftover objects of '" + s3_uri(bucket, key) + "'");
    std::vector<std::string> keys;
    for (const auto& o : listed->objects) keys.push_back(o.key);
    if (keys.empty()) return Status::ok();
    auto failed = client_->delete_objects(bucket, keys);
    if (!failed.is_ok()) return failed.status();
    if (!failed->empty()) {
      return Status::io_error("cannot delete leftover object '" + s3_uri(bucket, failed->front().key) +
                              "': " + failed->front().code + " " + failed->front().message);
    }
    return Status::ok();
  }

  uint64_t nonce() { return names_->next("s3-leftover"); }

  std::shared_ptr<S3Client> client_;
  std::shared_ptr<NameSource> names_;
};

}  // namespace

std::shared_ptr<fs::RecoverableWriter> make_s3_recoverable_writer(std::shared_ptr<S3Client> client,
                                                                  std::shared_ptr<NameSource> names) {
  return std::make_shared<S3RecoverableWriter>(std::move(client), name_source_or_random(std::move(names)));
}

}  // namespace sluice::s3
