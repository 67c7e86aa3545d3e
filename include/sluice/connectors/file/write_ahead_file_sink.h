// The write-ahead-log sink over plain files (sink/write_ahead_sink.h): when checkpoint n completes, each batch
// of n's output is appended to the subtask's file <dir>/part-<subtask> (fsync), and then a marker file
// <dir>/_committed/<batch id> is created (fsync of file and directory). A failure between the two appends the
// batch again after the restore: at-least-once; no committed line is ever lost. A torn last line (the process
// died inside an append) is cut off when the subtask opens its file, so lines stay whole.
// Readers take part-* files; lines become visible when their checkpoint completes.
// Errors: I/O failures throw (the task fails; the restore writes the batch again). Threading: task thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/file/output_folder_claim.h"
#include "sluice/sink/write_ahead_sink.h"

namespace sluice::file {

// The non-template part: one subtask's data file and the marker directory.
class WriteAheadFileWriter {
 public:
  WriteAheadFileWriter(std::string dir, int32_t subtask);
  // Appends the lines ('\n' added) and fsyncs.
  void append(const std::vector<std::string>& lines);
  bool has_marker(const std::string& batch_id) const;
  void write_marker(const std::string& batch_id);

 private:
  std::string dir_, data_path_, marker_dir_;
};

template <class T>
class WriteAheadFileSink final : public WriteAheadSink<T> {
 public:
  using Encoder = std::function<void(const T&, std::string& out)>;
  WriteAheadFileSink(std::string dir, Encoder encoder) : dir_(std::move(dir)), encoder_(std::move(encoder)) {
    if (dir_.empty()) throw std::invalid_argument("WriteAheadFileSink: the directory is empty");
    if (!encoder_) throw std::invalid_argument("WriteAheadFileSink: the encoder is empty");
  }
  std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext&) const override {
    return output_folder_claims(dir_);
  }
  std::unique_ptr<WriteAheadTarget<T>> create_target(WriteAheadContext& ctx) const override {
    return std::make_unique<Target>(std::make_unique<WriteAheadFileWriter>(dir_, ctx.subtask_index()), encoder_, ctx);
  }

 private:
  class Target final : public WriteAheadTarget<T> {
   public:
    Target(std::unique_ptr<WriteAheadFileWriter> w, Encoder enc, WriteAheadContext& ctx)
        : w_(std::move(w)), enc_(std::move(enc)), ctx_(ctx) {}
    bool is_checkpoint_committed(int32_t subtask, int64_t checkpoint) override {
      return w_->has_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }
    void send_values(const std::vector<T>& values, int32_t, int64_t) override {
      std::vector<std::string> lines(values.size());
      for (size_t i = 0; i < values.size(); ++i) enc_(values[i], lines[i]);
      w_->append(lines);
    }
    void commit_checkpoint(int32_t subtask, int64_t checkpoint) override {
      w_->write_marker(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }

   private:
    std::unique_ptr<WriteAheadFileWriter> w_;
    Encoder enc_;
    WriteAheadContext& ctx_;
  };
  std::string dir_;
  Encoder encoder_;
};

}  // namespace sluice::file
