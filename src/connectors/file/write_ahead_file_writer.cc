#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "sluice/connectors/file/write_ahead_file_sink.h"

namespace sluice::file {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw std::runtime_error("write-ahead file sink: " + what + " '" + path + "': " + std::strerror(errno));
}
void fsync_path(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) io_fail("cannot open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) io_fail("cannot fsync", path);
}
void write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
}
}  // namespace

WriteAheadFileWriter::WriteAheadFileWriter(std::string dir, int32_t subtask)
    : dir_(std::move(dir)), data_path_(dir_ + "/part-" + std::to_string(subtask)), marker_dir_(dir_ + "/_committed") {
  std::error_code ec;
  fs::create_directories(marker_dir_, ec);
  if (ec) throw std::runtime_error("write-ahead file sink: cannot create directory '" + marker_dir_ + "': " + ec.message());
  // Cut a torn last line (a crash inside an append): the batch it belonged to has no marker and is appended again.
  if (!fs::exists(data_path_)) return;
  const auto size = fs::file_size(data_path_);
  if (size == 0) return;
  int fd = ::open(data_path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) io_fail("cannot open", data_path_);
  off_t end = static_cast<off_t>(size);
  char c = 0;
  while (end > 0 && ::pread(fd, &c, 1, end - 1) == 1 && c != '\n') --end;
  if (end != static_cast<off_t>(size) && (::ftruncate(fd, end) != 0 || ::fsync(fd) != 0)) {
    ::close(fd);
    io_fail("cannot cut the torn last line of", data_path_);
  }
  ::close(fd);
}

void WriteAheadFileWriter::append(const std::vector<std::string>& lines) {
  std::string bytes;
  for (const auto& l : lines) {
    bytes += l;
    bytes += '\n';
  }
  int fd = ::open(data_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) io_fail("cannot open", data_path_);
  write_all(fd, bytes, data_path_);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) io_fail("cannot fsync", data_path_);
  fsync_path(dir_, O_RDONLY | O_DIRECTORY);  // a newly created file's entry
}

bool WriteAheadFileWriter::has_marker(const std::string& batch_id) const { return fs::exists(marker_dir_ + "/" + batch_id); }

void WriteAheadFileWriter::write_marker(const std::string& batch_id) {
  const std::string path = marker_dir_ + "/" + batch_id;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_fail("cannot create marker", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) io_fail("cannot fsync", path);
  fsync_path(marker_dir_, O_RDONLY | O_DIRECTORY);
}

}  // namespace sluice::file
