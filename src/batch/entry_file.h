// Files of blocking-record entries (runtime/network/blocking_record_framing.h): what blocking exchanges and sort spills
// write and read back. A writer appends bytes to `<path>.inprogress` and makes them visible under `path` only on
// commit() (flush, fsync, rename), so a task that fails midway never leaves a file a later stage would read as
// complete. A reader returns the entries one by one from a buffered sequential read.
// Errors: kIOError naming the file (open, write, read, rename), kCorruption for a file that ends inside an entry.
// Thread-safety: one thread per object.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/network/blocking_record_framing.h"
#include "sluice/core/status.h"

namespace sluice::batch {

class EntryFileWriter {
 public:
  EntryFileWriter() = default;
  EntryFileWriter(const EntryFileWriter&) = delete;
  EntryFileWriter& operator=(const EntryFileWriter&) = delete;
  ~EntryFileWriter();  // an uncommitted file is removed

  Status open(const std::string& path);
  Status append(const uint8_t* bytes, size_t n);
  Status commit();
  const std::string& path() const { return path_; }
  int64_t bytes_written() const { return bytes_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t bytes_ = 0;
};

class EntryFileReader {
 public:
  EntryFileReader() = default;
  EntryFileReader(const EntryFileReader&) = delete;
  EntryFileReader& operator=(const EntryFileReader&) = delete;
  ~EntryFileReader();

  Status open(const std::string& path);
  // The next entry (valid until the next call), or false at the end of the file.
  Result<bool> next(runtime::BlockingRecordView* out);

 private:
  Status fill();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
};

}  // namespace sluice::batch
