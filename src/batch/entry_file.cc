#include "batch/entry_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sluice::batch {
namespace {

constexpr size_t kReadChunk = 256 << 10;

Status io_error(const std::string& what, const std::string& path) {
  return Status::io_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

EntryFileWriter::~EntryFileWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code ec;
    std::filesystem::remove(path_ + ".inprogress", ec);
  }
}

Status EntryFileWriter::open(const std::string& path) {
  path_ = path;
  file_ = std::fopen((path + ".inprogress").c_str(), "wb");
  if (file_ == nullptr) return io_error("creating", path + ".inprogress");
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  return Status::ok();
}

Status EntryFileWriter::append(const uint8_t* bytes, size_t n) {
  if (n != 0 && std::fwrite(bytes, 1, n, file_) != n) return io_error("writing", path_ + ".inprogress");
  bytes_ += static_cast<int64_t>(n);
  return Status::ok();
}

Status EntryFileWriter::commit() {
  const std::string tmp = path_ + ".inprogress";
  // fsync is not needed: a BATCH job recovers within its process, and a process crash loses the job anyway.
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) return io_error("writing", tmp);
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) return io_error("renaming " + tmp + " to", path_);
  return Status::ok();
}

EntryFileReader::~EntryFileReader() {
  if (file_ != nullptr) std::fclose(file_);
}

Status EntryFileReader::open(const std::string& path) {
  path_ = path;
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) return io_error("opening", path);
  buf_.resize(kReadChunk);
  return Status::ok();
}

Status EntryFileReader::fill() {
  // Keep the partial entry at the front, then read behind it; grow for an entry larger than the buffer.
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  const size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, file_);
  if (got == 0) {
    if (std::ferror(file_)) return io_error("reading", path_);
    eof_ = true;
  }
  end_ += got;
  return Status::ok();
}

Result<bool> EntryFileReader::next(runtime::BlockingRecordView* out) {
  while (!runtime::parse_blocking_record(buf_.data() + begin_, end_ - begin_, out)) {
    if (eof_) {
      if (begin_ == end_) return false;
      return Status::corruption(path_ + ": the file ends inside an entry (" + std::to_string(end_ - begin_) +
                                " bytes left)");
    }
    SLUICE_RETURN_IF_ERROR(fill());
  }
  begin_ += out->entry_size();
  return true;
}

}  // namespace sluice::batch
