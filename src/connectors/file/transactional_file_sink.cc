#include "sluice/connectors/file/transactional_file_sink.h"

#include <set>
#include <span>
#include <stdexcept>

#include "fs/file_system.h"
#include "fs/file_system_registry.h"
#include "fs/path.h"
#include "fs/recoverable_writer.h"
#include "sluice/core/clock.h"

namespace sluice::file {
namespace {

[[noreturn]] void fail(const Status& s) { throw std::runtime_error("file sink: " + s.to_string()); }

template <class T>
T value_or_fail(Result<T> r) {
  if (!r.is_ok()) fail(r.status());
  return std::move(r).value();
}

std::shared_ptr<fs::FileSystem> file_system_for(const fs::FileSystemRegistry& registry, const std::string& path) {
  return value_or_fail(registry.for_path(path));
}

std::shared_ptr<fs::RecoverableWriter> writer_for(const fs::FileSystemRegistry& registry, const std::string& path,
                                                  int64_t bytes_per_sync) {
  return value_or_fail(file_system_for(registry, path)->create_recoverable_writer(
      fs::RecoverableWriterOptions{bytes_per_sync}));
}

// A part file "part-<job>-<subtask>-<checkpoint>-<counter>": its job, subtask and checkpoint, or subtask -1 for
// any other name.
struct PartName {
  std::string job;
  int32_t subtask = -1;
  int64_t checkpoint = -1;
};
PartName parse_part_name(const std::string& name) {
  PartName p;
  if (name.rfind("part-", 0) != 0) return p;
  size_t a = name.find('-', 5);  // after the job id
  if (a == std::string::npos) return p;
  size_t b = name.find('-', a + 1);
  if (b == std::string::npos) return p;
  size_t c = name.find('-', b + 1);
  if (c == std::string::npos) return p;
  try {
    p.checkpoint = std::stoll(name.substr(b + 1, c - b - 1));
    p.subtask = std::stoi(name.substr(a + 1, b - a - 1));
  } catch (...) {
    return PartName{};
  }
  p.job = name.substr(5, a - 5);
  return p;
}

const fs::FileSystemRegistry& local_only() {
  static const fs::FileSystemRegistry registry;
  return registry;
}

}  // namespace

bool is_part_file_name(std::string_view name) {
  constexpr std::string_view kPrefix = "part-";
  constexpr size_t kJobIdDigits = 32;
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  if (name.size() < kJobIdDigits + 1 || name[kJobIdDigits] != '-') return false;
  for (char c : name.substr(0, kJobIdDigits)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  name.remove_prefix(kJobIdDigits + 1);
  for (int field = 0; field < 3; ++field) {  // <subtask>-<checkpoint>-<counter>
    const size_t end = field < 2 ? name.find('-') : name.size();
    if (end == 0 || end == std::string_view::npos) return false;
    for (char c : name.substr(0, end)) {
      if (c < '0' || c > '9') return false;
    }
    name.remove_prefix(field < 2 ? end + 1 : end);
  }
  return true;
}

void commit_part_files(const fs::FileSystemRegistry& file_systems, const std::vector<FileCommittable>& committables) {
  for (const auto& c : committables) {
    auto writer = writer_for(file_systems, c.final_path, TransactionalPartWriter::kDefaultBytesPerSync);
    Status s = writer->commit(fs::CommitRecoverable{c.final_path, c.size_bytes, c.state});
    if (!s.is_ok()) {
      const PartName p = parse_part_name(fs::path_file_name(c.final_path));
      fail(s.with_context("committing part file '" + c.final_path + "' (pre-committed at checkpoint " +
                          std::to_string(p.checkpoint) + " or the next one the sink saw)"));
    }
  }
}

void commit_part_files(const std::vector<FileCommittable>& committables) {
  commit_part_files(local_only(), committables);
}

void commit_part_files_in(const fs::FileSystemRegistry& file_systems, const std::string& dir,
                          const std::vector<FileCommittable>& committables) {
  std::vector<FileCommittable> here;
  here.reserve(committables.size());
  for (const auto& c : committables) {
    here.push_back(FileCommittable{fs::join_path(dir, fs::path_file_name(c.final_path)), c.size_bytes, c.state});
  }
  commit_part_files(file_systems, here);
}

void commit_part_files_in(const std::string& dir, const std::vector<FileCommittable>& committables) {
  commit_part_files_in(local_only(), dir, committables);
}

TransactionalPartWriter::TransactionalPartWriter(std::string dir, std::string job_id, int32_t subtask,
                                                 std::function<int64_t()> next_checkpoint_id, int64_t part_size_bytes,
                                                 bool recover, const std::vector<FileCommittable>& keep,
                                                 int64_t bytes_per_sync, int32_t parallelism,
                                                 std::shared_ptr<const fs::FileSystemRegistry> file_systems)
    : TransactionalPartWriter(PartWriterConfig{std::move(dir), std::move(job_id), subtask, std::move(next_checkpoint_id),
                                               RollingPolicy::on_checkpoint(part_size_bytes), recover, {}, keep, {},
                                               bytes_per_sync, parallelism, std::move(file_systems), nullptr}) {}

TransactionalPartWriter::TransactionalPartWriter(PartWriterConfig config)
    : dir_(std::move(config.dir)), job_id_(std::move(config.job_id)), subtask_(config.subtask),
      next_checkpoint_id_(std::move(config.next_checkpoint_id)), rolling_(config.rolling), clock_(config.clock) {
  if (Status s = rolling_.validate(); !s.is_ok()) fail(s);
  const fs::FileSystemRegistry& registry = config.file_systems ? *config.file_systems : local_only();
  auto fsys = file_system_for(registry, dir_);
  if (Status s = fs::create_directories_durable(*fsys, dir_); !s.is_ok()) {
    fail(s.with_context("cannot create directory '" + dir_ + "'"));
  }
  writer_ = value_or_fail(fsys->create_recoverable_writer(fs::RecoverableWriterOptions{config.bytes_per_sync}));
  for (const auto& c : config.keep) referenced_.insert(fs::path_file_name(c.final_path));
  for (const auto& p : config.resume) referenced_.insert(fs::path_file_name(p.final_path));
  abort_lingering(config);
  resume_restored(config.resume);
}

// Aborts lingering transactions: this subtask's unpublished files the restored state does not own. Without a
// restored checkpoint only this run's own (an earlier attempt that failed before its first checkpoint): another
// run's may still belong to a checkpoint someone restores later. With one, only files of the restored snapshot's
// lineage or of this run: another job's files in the same folder are never touched.
// After a restore, an unpublished file not after the restored checkpoint may be owned by another subtask: the
// committables and the writer state are split-distributed, so after a rescale (or with subtasks holding different
// numbers of entries) a file can be handed to a subtask other than the one whose index it carries, which commits or
// continues it concurrently. Only files started after the restored checkpoint are certainly leftovers: a file
// started before the restored checkpoint's barrier was either rolled at it or persisted into it. After a scale-down
// nobody has the indexes >= the new parallelism: restored subtask 0 aborts their leftovers by the same rules.
void TransactionalPartWriter::abort_lingering(const PartWriterConfig& config) {
  const bool recover = config.recover;
  const bool sweeps_vanished = recover && subtask_ == 0 && config.parallelism > 0;
  const int64_t first_after_restore = recover ? next_checkpoint_id_() : 0;
  std::set<std::string> lineage(config.lineage_job_ids.begin(), config.lineage_job_ids.end());
  lineage.insert(job_id_);
  for (const fs::InProgressFile& f : value_or_fail(writer_->list_in_progress(dir_))) {
    const std::string name = fs::path_file_name(f.target_path);
    const PartName p = parse_part_name(name);
    const bool mine = p.subtask == subtask_ || (sweeps_vanished && p.subtask >= config.parallelism);
    if (p.subtask < 0 || !mine || referenced_.count(name) > 0) continue;
    if (lineage.count(p.job) == 0) continue;
    if (recover && p.checkpoint < first_after_restore) continue;
    if (Status s = writer_->abort(f); !s.is_ok()) fail(s);
  }
}

// Reopens the restored open files exactly where their checkpoint persisted them. One carrying this subtask's index
// is written on; the others are closed for commit (committed with the next checkpoint).
void TransactionalPartWriter::resume_restored(const std::vector<InProgressPart>& parts) {
  for (const InProgressPart& p : parts) {
    const std::string target = fs::join_path(dir_, fs::path_file_name(p.final_path));
    auto stream = writer_->recover(fs::ResumeRecoverable{target, p.position_bytes, p.state});
    if (!stream.is_ok()) {
      fail(stream.status().with_context("resuming in-progress part file '" + target + "' at byte " +
                                        std::to_string(p.position_bytes) + " (kept open by the restored checkpoint)"));
    }
    const bool continue_it = !out_ && parse_part_name(fs::path_file_name(target)).subtask == subtask_;
    if (continue_it) {
      out_ = std::move(stream).value();
      current_ = target;
      part_bytes_ = static_cast<int64_t>(p.position_bytes);
      created_ms_ = p.creation_time_ms;
      last_write_ms_ = now_ms();
      continue;
    }
    fs::CommitRecoverable c = value_or_fail((*stream)->close_for_commit());
    ready_.push_back(FileCommittable{std::move(c.target_path), c.size_bytes, std::move(c.state)});
  }
}

TransactionalPartWriter::~TransactionalPartWriter() { close(); }

int64_t TransactionalPartWriter::now_ms() const {
  return clock_ != nullptr ? clock_->now_ms() : SystemClock::shared()->now_ms();
}

void TransactionalPartWriter::open_new() {
  const std::string base = "part-" + job_id_ + "-" + std::to_string(subtask_) + "-" +
                           std::to_string(next_checkpoint_id_()) + "-" + std::to_string(counter_++);
  current_ = fs::join_path(dir_, base);
  out_ = value_or_fail(writer_->open(current_));
  part_bytes_ = 0;
  created_ms_ = last_write_ms_ = now_ms();
}

void TransactionalPartWriter::write_out() {
  if (buffer_.empty()) return;
  const auto* data = reinterpret_cast<const uint8_t*>(buffer_.data());
  if (Status s = out_->write(std::span<const uint8_t>(data, buffer_.size())); !s.is_ok()) fail(s);
  buffer_.clear();
}

void TransactionalPartWriter::finish_current() {
  if (!out_) return;
  write_out();
  fs::CommitRecoverable c = value_or_fail(out_->close_for_commit());
  out_.reset();
  ready_.push_back(FileCommittable{std::move(c.target_path), c.size_bytes, std::move(c.state)});
}

void TransactionalPartWriter::append_line(const std::string& line) {
  if (out_) {
    const int64_t now = now_ms();
    if (rolling_.should_roll_on_event(current_info()) || rolling_.should_roll_on_processing_time(current_info(), now)) {
      finish_current();
    } else {
      last_write_ms_ = now;
    }
  }
  if (!out_) open_new();
  buffer_ += line;
  buffer_ += '\n';
  part_bytes_ += static_cast<int64_t>(line.size() + 1);
  if (buffer_.size() >= 64 * 1024) write_out();
}

void TransactionalPartWriter::flush() {
  if (out_) write_out();
}

void TransactionalPartWriter::end_input() { end_of_input_ = true; }

std::vector<FileCommittable> TransactionalPartWriter::prepare_commit() {
  if (out_ && (end_of_input_ || rolling_.should_roll_on_checkpoint(current_info()) ||
               rolling_.should_roll_on_processing_time(current_info(), now_ms()))) {
    finish_current();
  }
  std::vector<FileCommittable> out = std::move(ready_);
  ready_.clear();
  for (const auto& c : out) referenced_.insert(fs::path_file_name(c.final_path));
  return out;
}

std::vector<InProgressPart> TransactionalPartWriter::snapshot_state() {
  if (!out_) return {};
  write_out();
  fs::ResumeRecoverable r = value_or_fail(out_->persist());
  referenced_.insert(fs::path_file_name(current_));
  return {InProgressPart{std::move(r.target_path), r.position_bytes, std::move(r.state), created_ms_}};
}

void TransactionalPartWriter::close() noexcept {
  if (out_) out_->close();
  abort_unreferenced();
  out_.reset();
  ready_.clear();
}

// The open file and the files rolled since the last barrier: unless a checkpoint this writer took (or restored)
// references them, no checkpoint can, and nobody else will abort them before a restore.
void TransactionalPartWriter::abort_unreferenced() noexcept {
  std::set<std::string> orphans;
  if (out_ && referenced_.count(fs::path_file_name(current_)) == 0) orphans.insert(fs::path_file_name(current_));
  for (const auto& c : ready_) {
    if (referenced_.count(fs::path_file_name(c.final_path)) == 0) orphans.insert(fs::path_file_name(c.final_path));
  }
  if (orphans.empty() || !writer_) return;
  try {
    auto listed = writer_->list_in_progress(dir_);
    if (!listed.is_ok()) return;
    for (const fs::InProgressFile& f : *listed) {
      if (orphans.count(fs::path_file_name(f.target_path)) > 0) (void)writer_->abort(f);
    }
  } catch (...) {
    // Best effort: a restore aborts what is left.
  }
}

void FileCommitter::commit(const std::vector<FileCommittable>& committables) {
  if (file_systems_) {
    commit_part_files_in(*file_systems_, dir_, committables);
  } else {
    commit_part_files_in(dir_, committables);
  }
}

namespace {

template <class V>
V decode(const std::vector<uint8_t>& bytes, const char* what) {
  auto v = deserialize_bytes<V>(bytes.data(), bytes.size(), what);
  if (!v.is_ok()) throw std::runtime_error(v.status().to_string());
  return std::move(v).value();
}

}  // namespace

std::unique_ptr<TransactionalPartWriter> open_part_writer(const std::string& dir, const RollingPolicy& rolling,
                                                          TwoPhaseCommitContext& ctx) {
  PartWriterConfig config;
  config.dir = dir;
  config.job_id = ctx.job_id();
  config.subtask = ctx.subtask_index();
  config.next_checkpoint_id = [&ctx] { return ctx.next_checkpoint_id(); };
  config.rolling = rolling;
  config.recover = ctx.is_restored();
  config.lineage_job_ids = ctx.lineage_job_ids();
  for (const auto& b : ctx.restored_committables_bytes()) {
    config.keep.push_back(decode<FileCommittable>(b, "file sink committable"));
  }
  for (const auto& b : ctx.restored_writer_state_bytes()) {
    config.resume.push_back(decode<InProgressPart>(b, "file sink in-progress part"));
  }
  config.parallelism = ctx.parallelism();
  config.file_systems = ctx.file_systems();
  config.clock = &ctx.clock();
  return std::make_unique<TransactionalPartWriter>(std::move(config));
}

std::vector<std::vector<uint8_t>> encode_in_progress_parts(const std::vector<InProgressPart>& parts) {
  std::vector<std::vector<uint8_t>> out;
  out.reserve(parts.size());
  for (const InProgressPart& p : parts) out.push_back(serialize_bytes(p));
  return out;
}

}  // namespace sluice::file

namespace sluice {
// Declared at the end of transactional_file_sink.h.
template class detail::CommittableCollector<file::FileCommittable>;
template class detail::OperatorListState<std::pair<int64_t, file::FileCommittable>>;
template ListState<std::pair<int64_t, file::FileCommittable>>&
OperatorStateStore::get_list<std::pair<int64_t, file::FileCommittable>>(const std::string&, OperatorStateMode);
template std::vector<uint8_t> serialize_bytes<file::FileCommittable>(const file::FileCommittable&);
template Result<file::FileCommittable> deserialize_bytes<file::FileCommittable>(const uint8_t*, size_t,
                                                                                std::string_view);
}  // namespace sluice
