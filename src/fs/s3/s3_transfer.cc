// S3Client::upload_file and S3Client::download_to_file: whole local files, in parallel parts when large.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <span>
#include <thread>

#include "fs/s3/s3_client.h"
#include "fs/s3/s3_client_impl.h"

namespace sluice::s3 {

namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { close(); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // 0, or the errno of close(2).
  int close() {
    int err = 0;
    if (fd_ >= 0 && ::close(fd_) != 0) err = errno;
    fd_ = -1;
    return err;
  }

 private:
  int fd_;
};

Status local_error(std::string_view what, const std::string& path, int err) {
  std::string message = std::string(what) + " local file '" + path + "': " + std::strerror(err);
  if (err == ENOENT) return Status::not_found(message);
  return Status::io_error(message);
}

// Reads exactly `length` bytes at `offset`; kIOError naming the path on an error or an early end of file.
Status pread_full(int fd, const std::string& path, uint8_t* out, uint64_t length, uint64_t offset) {
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return local_error("reading", path, errno);
    if (n == 0) {
      return Status::io_error("reading local file '" + path + "': it ended at byte " + std::to_string(offset + done) +
                              ", expected " + std::to_string(length - done) + " more bytes (did it shrink?)");
    }
    done += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

Status pwrite_full(int fd, const std::string& path, const uint8_t* bytes, uint64_t length, uint64_t offset) {
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return local_error("writing", path, errno);
    done += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

// Runs `work(worker)` on `threads` threads and waits for all.
template <class Work>
void run_workers(int32_t threads, Work work) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int32_t i = 0; i < threads; ++i) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

// The first error any worker reports, and a flag the others poll to stop early.
class FirstError {
 public:
  void record(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.is_ok()) status_ = std::move(s);
    failed_.store(true);
  }
  bool failed() const { return failed_.load(); }
  Status status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  Status status_;
  std::atomic<bool> failed_{false};
};

// Part size for `size_bytes`: the configured one, grown to a whole MiB so that no more than 10,000 parts are
// needed.
uint64_t part_size_for(uint64_t size_bytes, uint64_t configured_part_size) {
  uint64_t needed = (size_bytes + kMaxPartCount - 1) / kMaxPartCount;
  needed = (needed + kMiB - 1) / kMiB * kMiB;
  return std::max(configured_part_size, needed);
}

}  // namespace

namespace {

// A multipart upload of `size` bytes whose parts `read_part(offset, length, buffer)` fills: parts of
// s3.multipart.size (grown for 10,000 parts) sent s3.upload.parallelism at a time, completed, or aborted on
// any failure. `what` names the source in errors.
template <class ReadPart>
Status multipart_upload(S3Client& client, std::string_view bucket, std::string_view key, uint64_t size,
                        const std::string& what, ReadPart read_part) {
  const S3Options& options = client.options();
  const uint64_t part_size = part_size_for(size, options.part_size_bytes);
  const auto part_count = static_cast<int32_t>((size + part_size - 1) / part_size);
  SLUICE_ASSIGN_OR_RETURN(std::string upload_id, client.create_multipart_upload(bucket, key));

  std::vector<CompletedPart> parts(static_cast<size_t>(part_count));
  std::atomic<int32_t> next_part{0};
  FirstError error;
  run_workers(std::min(options.upload_parallelism, part_count), [&] {
    std::vector<uint8_t> buffer;
    for (;;) {
      int32_t index = next_part.fetch_add(1);
      if (index >= part_count || error.failed()) return;
      uint64_t offset = static_cast<uint64_t>(index) * part_size;
      uint64_t length = std::min(part_size, size - offset);
      Result<std::span<const uint8_t>> part = read_part(offset, length, buffer);
      if (!part.is_ok()) return error.record(part.status());
      Result<std::string> etag = client.upload_part(bucket, key, upload_id, index + 1, *part);
      if (!etag.is_ok()) return error.record(etag.status());
      parts[static_cast<size_t>(index)] = CompletedPart{index + 1, std::move(etag).value()};
    }
  });

  Status failed = error.status();
  if (failed.is_ok()) {
    Result<std::string> completed = client.complete_multipart_upload(bucket, key, upload_id, parts);
    if (completed.is_ok()) return Status::ok();
    failed = completed.status();
  }
  Status aborted = client.abort_multipart_upload(bucket, key, upload_id);
  if (!aborted.is_ok() && aborted.code() != StatusCode::kNotFound) {
    return Status(failed.code(),
                  failed.message() + "; aborting the upload failed too, so its parts stay until aborted: " +
                      aborted.message(),
                  failed.retriable());
  }
  return failed.with_context("uploading " + what + " to " + s3_uri(bucket, key) + " (aborted)");
}

}  // namespace

Result<uint64_t> S3Client::upload_file(std::string_view bucket, std::string_view key, const std::string& local_path) {
  FileDescriptor fd(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return local_error("opening", local_path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return local_error("reading the size of", local_path, errno);
  const auto size = static_cast<uint64_t>(st.st_size);

  if (size < impl_->options.multipart_threshold_bytes) {
    std::vector<uint8_t> bytes(size);
    SLUICE_RETURN_IF_ERROR(pread_full(fd.get(), local_path, bytes.data(), size, 0));
    SLUICE_RETURN_IF_ERROR(put_object(bucket, key, bytes));
    return size;
  }
  Status uploaded = multipart_upload(
      *this, bucket, key, size, "'" + local_path + "'",
      [&](uint64_t offset, uint64_t length, std::vector<uint8_t>& buffer) -> Result<std::span<const uint8_t>> {
        buffer.resize(length);
        SLUICE_RETURN_IF_ERROR(pread_full(fd.get(), local_path, buffer.data(), length, offset));
        return std::span<const uint8_t>(buffer);
      });
  SLUICE_RETURN_IF_ERROR(uploaded);
  return size;
}

Status S3Client::upload_bytes(std::string_view bucket, std::string_view key, std::span<const uint8_t> bytes) {
  if (bytes.size() < impl_->options.multipart_threshold_bytes) return put_object(bucket, key, bytes);
  return multipart_upload(
      *this, bucket, key, bytes.size(), std::to_string(bytes.size()) + " bytes",
      [&](uint64_t offset, uint64_t length, std::vector<uint8_t>&) -> Result<std::span<const uint8_t>> {
        return bytes.subspan(offset, length);
      });
}

Result<uint64_t> S3Client::download_to_file(std::string_view bucket, std::string_view key,
                                            const std::string& local_path) {
  SLUICE_ASSIGN_OR_RETURN(ObjectHead head, head_object(bucket, key));
  FileDescriptor fd(::open(local_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return local_error("creating", local_path, errno);
  auto fail = [&](Status s) -> Status {
    fd.close();
    ::unlink(local_path.c_str());
    return s.with_context("downloading " + s3_uri(bucket, key) + " to '" + local_path + "'");
  };

  const uint64_t part_size = impl_->options.part_size_bytes;
  uint64_t size = head.size_bytes;
  if (size <= part_size) {
    Result<std::vector<uint8_t>> bytes = get_object(bucket, key);
    if (!bytes.is_ok()) return fail(bytes.status());
    size = bytes->size();
    Status written = pwrite_full(fd.get(), local_path, bytes->data(), size, 0);
    if (!written.is_ok()) return fail(written);
  } else {
    const auto range_count = static_cast<int32_t>((size + part_size - 1) / part_size);
    std::atomic<int32_t> next_range{0};
    FirstError error;
    run_workers(std::min(impl_->options.download_parallelism, range_count), [&] {
      for (;;) {
        int32_t index = next_range.fetch_add(1);
        if (index >= range_count || error.failed()) return;
        uint64_t offset = static_cast<uint64_t>(index) * part_size;
        uint64_t length = std::min(part_size, size - offset);
        HttpRequest request{HttpMethod::kGet,
                            impl_->url(bucket, key),
                            {{"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)},
                             {"If-Match", head.etag}},
                            {}};
        if (head.etag.empty()) request.headers.pop_back();
        Result<HttpResponse> got = impl_->execute(impl_->context("GetObject", bucket, key), request).result;
        if (!got.is_ok()) return error.record(got.status());
        if (got->status != 206 || got->body.size() != length) {
          return error.record(Status::corruption(
              "S3 GetObject of " + s3_uri(bucket, key) + " bytes " + std::to_string(offset) + ".." +
              std::to_string(offset + length - 1) + " at " + impl_->endpoint_url + " answered HTTP " +
              std::to_string(got->status) + " with " + std::to_string(got->body.size()) + " bytes, expected 206 with " +
              std::to_string(length)));
        }
        Status written = pwrite_full(fd.get(), local_path, got->body.data(), length, offset);
        if (!written.is_ok()) return error.record(written);
      }
    });
    if (error.failed()) return fail(error.status());
  }
  if (int err = fd.close(); err != 0) return fail(local_error("closing", local_path, err));
  return size;
}

}  // namespace sluice::s3
