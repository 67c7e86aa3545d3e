#include "sluice/connectors/file/file_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <stdexcept>

namespace sluice::file {

namespace fs = std::filesystem;

Result<std::vector<std::string>> list_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  auto hidden = [](const fs::path& p) {
    std::string n = p.filename().string();
    return !n.empty() && (n[0] == '.' || n[0] == '_');
  };
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return Status::not_found("file source path '" + p + "' does not exist");
    if (fs::is_regular_file(st)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (hidden(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) found.push_back(it->path().string());
    }
    if (ec) return Status::io_error("listing '" + p + "': " + ec.message());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

namespace {

class FileEnumerator final : public SplitEnumerator<FileSplit> {
 public:
  FileEnumerator(SplitEnumeratorContext<FileSplit>& ctx, std::vector<std::string> paths)
      : ctx_(ctx), paths_(std::move(paths)) {}
  // Continues from snapshot_state(): the files not handed out yet (the listing is not repeated).
  FileEnumerator(SplitEnumeratorContext<FileSplit>& ctx, const std::vector<uint8_t>& state) : ctx_(ctx), listed_(true) {
    auto splits = deserialize_bytes<std::vector<FileSplit>>(state.data(), state.size(), "file source enumerator state");
    if (!splits.is_ok()) throw std::invalid_argument(splits.status().to_string());
    pending_.assign(splits->begin(), splits->end());
  }
  void start() override {
    if (listed_) return;
    listed_ = true;
    auto files = list_files(paths_);
    if (!files.is_ok()) throw std::runtime_error(files.status().to_string());
    for (auto& f : files.value()) pending_.push_back(FileSplit{f, 0});
  }
  void add_reader(int32_t) override {}
  void handle_split_request(int32_t subtask) override {
    if (pending_.empty()) {
      ctx_.signal_no_more_splits(subtask);
      return;
    }
    ctx_.assign_split(std::move(pending_.front()), subtask);
    pending_.pop_front();
  }
  void add_splits_back(std::vector<FileSplit> splits, int32_t) override {
    for (auto& s : splits) pending_.push_back(std::move(s));
  }
  std::vector<uint8_t> snapshot_state(CheckpointId) override {
    return serialize_bytes(std::vector<FileSplit>(pending_.begin(), pending_.end()));
  }

 private:
  SplitEnumeratorContext<FileSplit>& ctx_;
  std::vector<std::string> paths_;
  bool listed_ = false;
  std::deque<FileSplit> pending_;
};

class FileReader final : public SourceReader<std::string, FileSplit> {
 public:
  explicit FileReader(SourceReaderContext& ctx) : ctx_(ctx) {}
  ~FileReader() override { close_file(); }

  void start() override { ctx_.send_split_request(); }

  InputStatus poll_next(ReaderOutput<std::string>& out) override {
    if (fd_ < 0 && !open_next()) {
      return no_more_ && splits_.empty() ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
    }
    std::string line;
    if (!read_line(line)) {  // end of file: the split is done
      close_file();
      splits_.pop_front();
      ctx_.send_split_request();
      return (no_more_ && splits_.empty()) ? InputStatus::kEndOfInput : InputStatus::kMoreAvailable;
    }
    out.collect(std::move(line));
    return InputStatus::kMoreAvailable;
  }
  void add_splits(std::vector<FileSplit> splits) override {
    for (auto& s : splits) splits_.push_back(std::move(s));
  }
  void notify_no_more_splits() override { no_more_ = true; }
  std::vector<FileSplit> snapshot_state() override { return {splits_.begin(), splits_.end()}; }
  void close() override { close_file(); }

 private:
  bool open_next() {
    if (splits_.empty()) return false;
    FileSplit& s = splits_.front();
    fd_ = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("file source: cannot open '" + s.path + "': " + std::strerror(errno));
    if (s.offset > 0 && ::lseek(fd_, s.offset, SEEK_SET) < 0) {
      throw std::runtime_error("file source: cannot seek '" + s.path + "' to " + std::to_string(s.offset));
    }
    buf_.clear();
    pos_ = 0;
    eof_ = false;
    return true;
  }
  void close_file() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Reads the next line into `line`; false at end of file. Updates the split's offset.
  bool read_line(std::string& line) {
    while (true) {
      auto nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        size_t len = nl - pos_;
        line.assign(buf_, pos_, len);
        splits_.front().offset += static_cast<int64_t>(len + 1);
        pos_ = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      if (eof_) {
        if (pos_ < buf_.size()) {  // last line without newline
          line.assign(buf_, pos_, std::string::npos);
          splits_.front().offset += static_cast<int64_t>(buf_.size() - pos_);
          pos_ = buf_.size();
          if (!line.empty() && line.back() == '\r') line.pop_back();
          return true;
        }
        return false;
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      size_t old = buf_.size();
      buf_.resize(old + kChunk);
      ssize_t n = ::read(fd_, buf_.data() + old, kChunk);
      if (n < 0) {
        throw std::runtime_error("file source: reading '" + splits_.front().path + "': " + std::strerror(errno));
      }
      buf_.resize(old + static_cast<size_t>(n));
      if (n == 0) eof_ = true;
    }
  }

  static constexpr size_t kChunk = 64 * 1024;
  SourceReaderContext& ctx_;
  std::deque<FileSplit> splits_;
  bool no_more_ = false;
  int fd_ = -1;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

}  // namespace

std::unique_ptr<SplitEnumerator<FileSplit>> FileSource::create_enumerator(SplitEnumeratorContext<FileSplit>& ctx) const {
  return std::make_unique<FileEnumerator>(ctx, paths_);
}

std::unique_ptr<SplitEnumerator<FileSplit>> FileSource::restore_enumerator(SplitEnumeratorContext<FileSplit>& ctx,
                                                                          const std::vector<uint8_t>& state) const {
  return std::make_unique<FileEnumerator>(ctx, state);
}

std::unique_ptr<SourceReader<std::string, FileSplit>> FileSource::create_reader(SourceReaderContext& ctx) const {
  return std::make_unique<FileReader>(ctx);
}

}  // namespace sluice::file

namespace sluice {
template class SourceOperator<std::string, file::FileSplit>;
template class SourceCoordinator<std::string, file::FileSplit>;
}  // namespace sluice
