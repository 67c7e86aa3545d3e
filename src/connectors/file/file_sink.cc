#include "sluice/connectors/file/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace sluice::file {

namespace {
constexpr size_t kFlushThreshold = 64 * 1024;
}

PartFileWriter::PartFileWriter(std::string dir, int32_t subtask, int64_t roll_size_bytes, int32_t attempt)
    : dir_(std::move(dir)), subtask_(subtask), attempt_(attempt), roll_size_bytes_(roll_size_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("file sink: cannot create directory '" + dir_ + "': " + ec.message());
}

PartFileWriter::~PartFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void PartFileWriter::open_next() {
  if (fd_ >= 0) close();
  current_path_ = dir_ + "/part-" + std::to_string(subtask_) + "-" +
                  (attempt_ > 0 ? std::to_string(attempt_) + "-" : std::string()) + std::to_string(counter_++);
  fd_ = ::open(current_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("file sink: cannot create '" + current_path_ + "': " + std::strerror(errno));
  part_bytes_ = 0;
}

void PartFileWriter::append_line(const std::string& line) {
  if (fd_ < 0 || part_bytes_ >= roll_size_bytes_) {
    write_out();
    open_next();
  }
  buffer_ += line;
  buffer_ += '\n';
  part_bytes_ += static_cast<int64_t>(line.size() + 1);
  total_bytes_ += static_cast<int64_t>(line.size() + 1);
  if (buffer_.size() >= kFlushThreshold) write_out();
}

void PartFileWriter::write_out() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("file sink: writing '" + current_path_ + "': " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void PartFileWriter::flush() {
  if (fd_ >= 0) write_out();
}

void PartFileWriter::close() {
  if (fd_ < 0) return;
  write_out();
  if (::fsync(fd_) != 0) throw std::runtime_error("file sink: fsync '" + current_path_ + "': " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
}

}  // namespace sluice::file
