#include "rocksdb_options.h"

#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>

#include <cstdarg>
#include <cstdio>
#include <deque>
#include <string>

#include <spdlog/spdlog.h>

#include "sluice/state/rocksdb_options_factory.h"

namespace sluice::rocksdb_options {
namespace {

// Merge = concatenation of the operands in order: ListState stores the serialized elements back to back
// (TypeSerializer is self-delimiting), so appending an element is a merge of its bytes.
class ConcatMergeOperator final : public rocksdb::MergeOperator {
 public:
  const char* Name() const override { return "SluiceListAppend"; }

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    size_t n = in.existing_value != nullptr ? in.existing_value->size() : 0;
    for (const rocksdb::Slice& s : in.operand_list) n += s.size();
    out->new_value.clear();
    out->new_value.reserve(n);
    if (in.existing_value != nullptr) out->new_value.append(in.existing_value->data(), in.existing_value->size());
    for (const rocksdb::Slice& s : in.operand_list) out->new_value.append(s.data(), s.size());
    return true;
  }

  bool PartialMergeMulti(const rocksdb::Slice&, const std::deque<rocksdb::Slice>& operands, std::string* new_value,
                         rocksdb::Logger*) const override {
    size_t n = 0;
    for (const rocksdb::Slice& s : operands) n += s.size();
    new_value->clear();
    new_value->reserve(n);
    for (const rocksdb::Slice& s : operands) new_value->append(s.data(), s.size());
    return true;
  }
};

const std::shared_ptr<rocksdb::MergeOperator>& merge_operator() {
  static const std::shared_ptr<rocksdb::MergeOperator> op = std::make_shared<ConcatMergeOperator>();
  return op;
}

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// RocksDB's own messages go to the job's log instead of a LOG file in the working folder. That file shares the
// state's disk: once a write to it has failed (a full disk), RocksDB 7.8 appends to it again while it reports the
// background error, and Debian's build, assertions on, aborts the process there instead of failing the task.
class JobLogInfoLog final : public rocksdb::Logger {
 public:
  explicit JobLogInfoLog(rocksdb::InfoLogLevel level) : rocksdb::Logger(level) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::INFO_LEVEL, format, ap); }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::HEADER_LEVEL) return;
    char text[1024];
    std::vsnprintf(text, sizeof text, format, ap);
    // RocksDB's WARN is chatty (every incremental checkpoint nests DisableFileDeletions and says so): the job's
    // log shows RocksDB's errors, its warnings at debug.
    const spdlog::level::level_enum to = level >= rocksdb::ERROR_LEVEL ? spdlog::level::err
                                         : level == rocksdb::WARN_LEVEL ? spdlog::level::debug
                                                                        : spdlog::level::trace;
    spdlog::log(to, "rocksdb: {}", text);
  }
};

// After the options factory, which may set its own level or logger.
void route_info_log(rocksdb::DBOptions& o) {
  if (o.info_log == nullptr) o.info_log = std::make_shared<JobLogInfoLog>(o.info_log_level);
}

void base_db_options(rocksdb::DBOptions& o) {
  o.avoid_flush_during_shutdown = true;
  o.info_log_level = rocksdb::WARN_LEVEL;
  o.stats_dump_period_sec = 0;
  o.stats_persist_period_sec = 0;
  o.use_fsync = false;
}

// The table options currently in `cf` (a copy), or null if its table factory is not block-based.
std::unique_ptr<rocksdb::BlockBasedTableOptions> block_based_options_of(const rocksdb::ColumnFamilyOptions& cf) {
  if (cf.table_factory == nullptr) return std::make_unique<rocksdb::BlockBasedTableOptions>();
  const auto* t = cf.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  if (t == nullptr) return nullptr;
  return std::make_unique<rocksdb::BlockBasedTableOptions>(*t);
}

// The HIGH_MEM profiles' table settings: a 256 MiB cache of the instance's own (replaced under managed memory),
// a full bloom filter of 10 bits per key (Flink's bloom-filter default), and `block_size`.
void high_mem_table(rocksdb::ColumnFamilyOptions& cf, size_t block_size) {
  std::unique_ptr<rocksdb::BlockBasedTableOptions> t = block_based_options_of(cf);
  if (t == nullptr) t = std::make_unique<rocksdb::BlockBasedTableOptions>();
  t->block_cache = rocksdb::NewLRUCache(256 * kMiB);
  t->block_size = block_size;
  t->filter_policy.reset(rocksdb::NewBloomFilterPolicy(10, /*use_block_based_builder=*/false));
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(*t));
}

}  // namespace

void apply_predefined(RocksDBPredefinedOptions predefined, rocksdb::DBOptions& db, rocksdb::ColumnFamilyOptions& cf) {
  switch (predefined) {
    case RocksDBPredefinedOptions::kDefault:
      return;
    case RocksDBPredefinedOptions::kSpinningDiskOptimized:
      cf.compaction_style = rocksdb::kCompactionStyleLevel;
      cf.level_compaction_dynamic_level_bytes = true;
      db.max_background_jobs = 4;
      db.max_open_files = -1;
      return;
    case RocksDBPredefinedOptions::kSpinningDiskOptimizedHighMem:
      cf.level_compaction_dynamic_level_bytes = true;
      db.max_background_jobs = 4;
      db.max_open_files = -1;
      cf.max_bytes_for_level_base = 1024 * kMiB;
      cf.max_write_buffer_number = 4;
      cf.min_write_buffer_number_to_merge = 3;
      cf.target_file_size_base = 256 * kMiB;
      cf.write_buffer_size = 64 * kMiB;
      high_mem_table(cf, 128 * kKiB);
      return;
    case RocksDBPredefinedOptions::kFlashSsdOptimized:
      db.max_background_jobs = 4;
      db.max_open_files = -1;
      return;
    case RocksDBPredefinedOptions::kFlashSsdOptimizedHighMem:
      db.max_background_jobs = 4;
      db.max_open_files = -1;
      cf.level_compaction_dynamic_level_bytes = true;
      cf.max_write_buffer_number = 4;
      cf.min_write_buffer_number_to_merge = 2;
      cf.write_buffer_size = 64 * kMiB;
      high_mem_table(cf, 4 * kKiB);
      return;
  }
}

namespace {

// Step 4 on one column family's options.
Status apply_own_column_settings(rocksdb::ColumnFamilyOptions& cf, const rocksdb_memory::SharedResources* shared) {
  cf.merge_operator = merge_operator();
  if (shared == nullptr) return Status::ok();
  std::unique_ptr<rocksdb::BlockBasedTableOptions> t = block_based_options_of(cf);
  if (t == nullptr) {
    return Status::invalid_argument(
        std::string("RocksDB options: with managed memory (state.backend.rocksdb.memory.managed or .fixed-per-tm) "
                    "the table factory must be block-based, but the options factory installed '") +
        cf.table_factory->Name() + "'");
  }
  t->block_cache = shared->cache;
  t->no_block_cache = false;
  t->cache_index_and_filter_blocks = true;
  t->cache_index_and_filter_blocks_with_high_priority = true;
  t->pin_l0_filter_and_index_blocks_in_cache = true;
  t->pin_top_level_index_and_filter = true;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(*t));
  return Status::ok();
}

}  // namespace

Result<InstanceOptions> instance_options(const RocksDBStateBackendOptions& options) {
  if (options.write_back_cache.sizing == RocksDBWriteBackCacheOptions::Sizing::kFixed &&
      options.write_back_cache.max_size_bytes <= 0) {
    return Status::invalid_argument("state.backend.rocksdb.cache.max-size: a write-back cache of a fixed size needs "
                                    "a positive number of bytes, got " +
                                    std::to_string(options.write_back_cache.max_size_bytes));
  }
  InstanceOptions out;
  SLUICE_ASSIGN_OR_RETURN(out.shared, rocksdb_memory::shared_resources_for(options.memory,
                                                                          rocksdb_memory::write_back_fraction_of(options)));
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions cf;
  base_db_options(db);
  apply_predefined(options.predefined_options, db, cf);
  if (options.options_factory != nullptr) {
    options.options_factory->create_db_options(db);
    options.options_factory->create_column_options(cf);
  }
  route_info_log(db);
  db.create_if_missing = true;
  db.error_if_exists = true;
  if (out.shared != nullptr) db.write_buffer_manager = out.shared->write_buffer_manager;
  SLUICE_RETURN_IF_ERROR(apply_own_column_settings(cf, out.shared.get()));
  out.db = rocksdb::Options(db, cf);
  out.column_family = cf;
  return out;
}

rocksdb::Options db_options() {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions cf = column_family_options();
  base_db_options(db);
  route_info_log(db);
  db.create_if_missing = true;
  db.error_if_exists = true;
  return rocksdb::Options(db, cf);
}

rocksdb::ColumnFamilyOptions column_family_options() {
  rocksdb::ColumnFamilyOptions o;
  o.merge_operator = merge_operator();
  return o;
}

rocksdb::WriteOptions write_options() {
  rocksdb::WriteOptions w;
  w.disableWAL = true;
  w.sync = false;
  return w;
}

Status rocksdb_failure(const rocksdb::Status& s, const std::string& what, const std::string& dir) {
  const std::string text = what + " failed: " + s.ToString();
  if (s.IsNoSpace() || s.ToString().find("No space left on device") != std::string::npos) {
    return Status::io_error(text + " (the disk of the RocksDB working directory '" + dir +
                            "' is full: free space there or set state.backend.rocksdb.localdir)");
  }
  if (s.IsIOError()) return Status::io_error(text + " (RocksDB working directory '" + dir + "')");
  if (s.IsCorruption()) return Status::corruption(text + " (RocksDB working directory '" + dir + "')");
  return Status::internal(text + " (RocksDB working directory '" + dir + "')");
}

}  // namespace sluice::rocksdb_options
