// FileSink (row format): each subtask writes its records as lines to part files in a directory, rolling to
// a new part file when the current one reaches a size (Flink's DefaultRollingPolicy part size, 128 MiB).
//
// Part files are named part-<subtask>-<counter> (counter from 0 per subtask); a restarted attempt a > 0 of the job
// writes part-<subtask>-<a>-<counter>, so it never truncates what an earlier attempt wrote. A new run truncates
// the files of the same names. Guarantee: none of its own - a job that fails leaves what it wrote (possibly a
// partial last line), and everything written is kept: with a replayable source and checkpointing, what was
// written after the restored checkpoint is written again (at-least-once; docs/guarantees.md). The exactly-once
// variant is TransactionalFileSink (transactional_file_sink.h).
// The encoder appends one record's text (without the newline) to `out`. Errors: a directory that cannot
// be created or a write that fails throws from the writer, failing the task with the file's name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "sluice/connectors/file/output_folder_claim.h"
#include "sluice/sink/sink.h"

namespace sluice::file {

// Appends bytes to numbered part files in `dir`; not a template so the I/O lives in the library.
class PartFileWriter {
 public:
  // attempt: the job attempt (SinkInitContext::attempt_number), part of the names from 1 on.
  PartFileWriter(std::string dir, int32_t subtask, int64_t roll_size_bytes, int32_t attempt = 0);
  ~PartFileWriter();
  PartFileWriter(const PartFileWriter&) = delete;
  PartFileWriter& operator=(const PartFileWriter&) = delete;
  // Appends `line` plus '\n'; rolls first if the current part file is full.
  void append_line(const std::string& line);
  void flush();  // writes buffered bytes to the OS
  void close();  // flush + fsync + close
  int64_t bytes_written() const { return total_bytes_; }

 private:
  void open_next();
  void write_out();

  std::string dir_;
  int32_t subtask_;
  int32_t attempt_;
  int64_t roll_size_bytes_;
  int fd_ = -1;
  int32_t counter_ = 0;
  int64_t part_bytes_ = 0;
  int64_t total_bytes_ = 0;
  std::string current_path_;
  std::string buffer_;
};

template <class T>
class FileSink final : public Sink<T> {
 public:
  using Encoder = std::function<void(const T&, std::string& out)>;
  static constexpr int64_t kDefaultPartSizeBytes = 128ll << 20;

  static FileSink for_row_format(std::string dir, Encoder encoder, int64_t part_size_bytes = kDefaultPartSizeBytes) {
    return FileSink(std::move(dir), std::move(encoder), part_size_bytes);
  }

  std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext&) const override {
    return output_folder_claims(dir_);
  }
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext& ctx) const override {
    return std::make_unique<Writer>(dir_, ctx.subtask_index(), ctx.attempt_number(), part_size_bytes_, encoder_);
  }

 private:
  FileSink(std::string dir, Encoder encoder, int64_t part_size)
      : dir_(std::move(dir)), encoder_(std::move(encoder)), part_size_bytes_(part_size) {}

  class Writer final : public SinkWriter<T> {
   public:
    Writer(const std::string& dir, int32_t subtask, int32_t attempt, int64_t part_size, Encoder enc)
        : files_(dir, subtask, part_size, attempt), encoder_(std::move(enc)) {}
    void write(T&& record) override {
      line_.clear();
      encoder_(record, line_);
      files_.append_line(line_);
    }
    void flush(bool) override { files_.flush(); }
    void close() override { files_.close(); }

   private:
    PartFileWriter files_;
    Encoder encoder_;
    std::string line_;
  };

  std::string dir_;
  Encoder encoder_;
  int64_t part_size_bytes_;
};

}  // namespace sluice::file
