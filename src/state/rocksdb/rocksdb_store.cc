#include "sluice/detail/state/rocksdb/rocksdb_store.h"

#include <rocksdb/db.h>
#include <rocksdb/slice.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <condition_variable>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "rocksdb_native_metrics.h"
#include "rocksdb_options.h"
#include "rocksdb_ttl_compaction_filter.h"
#include "working_dir_owner.h"
#include "write_back_cache.h"

namespace sluice {

namespace {

rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 120)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}


}  // namespace

// What the store shares with its snapshots: the database (null once the store closed) and the live snapshots,
// so the store can wait for readers and release every snapshot before it closes the database.
struct RocksDBStore::Shared {
  std::mutex mu;
  std::condition_variable cv;
  rocksdb::DB* db = nullptr;  // guarded by mu; null once the store closed
  int readers = 0;            // leases held over all snapshots; guarded by mu
  bool closing = false;       // no new leases once the store began to close; guarded by mu
  std::unordered_set<const rocksdb::Snapshot*> live;  // guarded by mu
};

struct RocksDBStore::Impl {
  std::string path;
  // Held for the folder's life, so a later run can tell this folder from an abandoned one (working_dir_owner.h).
  rocksdb_workdir::OwnerLock owner;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  // The shared block cache and write-buffer manager (null: unbounded memory); declared before db, so they
  // outlive it.
  std::shared_ptr<const rocksdb_memory::SharedResources> memory;
  rocksdb::DB* db = nullptr;  // owned; closed in ~RocksDBStore
  rocksdb::ColumnFamilyHandle* default_cf = nullptr;  // only when opened by open_existing
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;
  std::vector<std::string> cf_names;
  rocksdb::ColumnFamilyOptions cf_options;
  std::unique_ptr<RocksDBNativeMetricMonitor> metrics;  // null when no native metric is enabled
  rocksdb::ReadOptions read_options;
  rocksdb::WriteOptions write_options = rocksdb_options::write_options();
  rocksdb::PinnableSlice pinned;  // get() results; reused so reads do not allocate
  std::unique_ptr<rocksdb_cache::WriteBackCache> cache;  // null unless configured
  // By column family id: the TTL filter factories of column families opened from a restored database (null for
  // those created here, which get their filter at creation).
  std::vector<std::shared_ptr<DeferredTtlCompactionFilterFactory>> deferred_ttl;

  // Everything the cache holds that RocksDB has not seen, written to RocksDB (the cache keeps it, clean).
  void write_back() {
    if (cache) cache->write_back();
  }

  // What every open database gets after RocksDB opened it: the write-back cache and the native metrics.
  void finish_open(const RocksDBStore::Options& options) {
    auto write_entry = [this](int32_t cf, std::string_view key, const std::string* value) {
      rocksdb::ColumnFamilyHandle* h = cfs[static_cast<size_t>(cf)];
      rocksdb::Status st = value != nullptr ? db->Put(write_options, h, slice(key), slice(*value))
                                            : db->Delete(write_options, h, slice(key));
      if (!st.ok()) fail(value != nullptr ? "write-back put" : "write-back delete", cf, st);
    };
    using Sizing = RocksDBWriteBackCacheOptions::Sizing;
    switch (options.write_back_cache.sizing) {
      case Sizing::kOff: break;
      case Sizing::kFixed:
        cache = std::make_unique<rocksdb_cache::WriteBackCache>(options.write_back_cache.max_size_bytes, write_entry);
        break;
      case Sizing::kManagedMemoryShare:
        if (memory != nullptr && memory->write_back_caches != nullptr) {
          cache = std::make_unique<rocksdb_cache::WriteBackCache>(memory->write_back_caches.get(), write_entry);
        } else {  // no budget to share
          cache = std::make_unique<rocksdb_cache::WriteBackCache>(rocksdb_memory::kUnmanagedWriteBackCacheBytes,
                                                                  write_entry);
        }
        break;
    }
    if (options.native_metrics.any() && options.native_metric_registrar) {
      metrics = std::make_unique<RocksDBNativeMetricMonitor>(db, options.native_metrics, options.native_metric_registrar);
    }
  }

  [[noreturn]] void fail(const char* op, int32_t cf, const rocksdb::Status& s) const {
    throw RocksDBError(rocksdb_options::rocksdb_failure(
        s, std::string("RocksDB ") + op + " in column family '" + cf_names[static_cast<size_t>(cf)] + "' of " + path,
        path));
  }
};

struct RocksDBStore::Iterator::Impl {
  // The bounds and options first: the RocksDB iterator (declared last, destroyed first) points at them.
  std::string lower, upper;
  rocksdb::Slice lower_slice, upper_slice;
  rocksdb::ReadOptions options;
  std::unique_ptr<rocksdb::Iterator> it;

  Impl(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string_view lo, std::string_view up,
       const rocksdb::Snapshot* snapshot)
      : lower(lo), upper(up) {
    lower_slice = rocksdb::Slice(lower);
    upper_slice = rocksdb::Slice(upper);
    options.iterate_lower_bound = &lower_slice;
    if (!upper.empty()) options.iterate_upper_bound = &upper_slice;
    if (snapshot != nullptr) {
      options.snapshot = snapshot;
      options.fill_cache = false;  // a snapshot scan reads everything once: do not evict the hot blocks
    }
    it.reset(db->NewIterator(options, cf));
    it->Seek(lower_slice);
  }
};

struct RocksDBStore::WriteBatch::Impl {
  const RocksDBStore::Impl* store;
  rocksdb::WriteBatch batch;
  // With a write-back cache: the keys the batch writes, whose cached entries it makes stale.
  std::vector<std::pair<int32_t, std::string>> keys;
  std::vector<int32_t> ranged_cfs;  // column families with a delete_range
  void touched(int32_t cf, std::string_view key) {
    if (store->cache) keys.emplace_back(cf, std::string(key));
  }
  rocksdb::ColumnFamilyHandle* cf(int32_t id) const { return store->cfs[static_cast<size_t>(id)]; }
};

struct RocksDBStore::Snapshot::Impl {
  std::shared_ptr<Shared> shared;
  const rocksdb::Snapshot* snapshot = nullptr;           // guarded by shared->mu; null once released
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;         // the handles as of the snapshot
  int readers = 0;                                       // this snapshot's leases; guarded by shared->mu
};

// ---- RocksDBStore -------------------------------------------------------------------------------------------

RocksDBStore::RocksDBStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {
struct WorkingDir {
  std::filesystem::path path;
  rocksdb_workdir::OwnerLock owner;
};

// Creates <local_dir>/sluice-rocksdb-<instance>-<16 hex> (and local_dir if needed) with its owner lock, after
// removing the folders of processes that died under this local dir (once per process).
Result<WorkingDir> create_working_dir(const RocksDBStore::Options& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = options.local_dir.empty() ? fs::temp_directory_path(ec) : fs::path(options.local_dir);
  if (ec) return Status::io_error("RocksDB state backend: no system temp directory: " + ec.message());
  fs::create_directories(parent, ec);
  if (ec) {
    return Status::io_error("state.backend.rocksdb.localdir: cannot create '" + parent.string() + "': " + ec.message());
  }
  rocksdb_workdir::remove_abandoned_working_dirs_once(parent.string());
  const std::string stem = std::string(rocksdb_workdir::kWorkingDirPrefix) +
                           (options.instance_name.empty() ? std::string("instance") : sanitize(options.instance_name));
  fs::path dir;
  const std::shared_ptr<NameSource> names = name_source_or_random(options.names);
  for (int attempt = 0;; ++attempt) {
    dir = parent / (stem + "-" + names->hex("rocksdb-dir:" + options.instance_name));
    if (fs::create_directory(dir, ec)) break;
    if (ec || attempt == 8) {
      return Status::io_error("RocksDB state backend: cannot create a working directory under '" + parent.string() +
                              "': " + (ec ? ec.message() : "names taken"));
    }
  }
  Result<rocksdb_workdir::OwnerLock> owner = rocksdb_workdir::OwnerLock::take(dir.string());
  if (!owner.is_ok()) {
    fs::remove_all(dir, ec);
    return owner.status();
  }
  return WorkingDir{dir, std::move(owner).value()};
}
}  // namespace

Result<std::unique_ptr<RocksDBStore>> RocksDBStore::open(const Options& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  SLUICE_ASSIGN_OR_RETURN(WorkingDir working, create_working_dir(options));
  const fs::path& dir = working.path;
  Result<rocksdb_options::InstanceOptions> rocks = rocksdb_options::instance_options(options);
  if (!rocks.is_ok()) {
    fs::remove_all(dir, ec);
    return rocks.status();
  }
  auto impl = std::make_unique<Impl>();
  impl->path = dir.string();
  impl->owner = std::move(working.owner);
  impl->memory = rocks->shared;
  impl->cf_options = rocks->column_family;
  rocksdb::Status s = rocksdb::DB::Open(rocks->db, impl->path, &impl->db);
  if (!s.ok()) {
    fs::remove_all(dir, ec);
    return Status::io_error("RocksDB state backend: cannot open a database in '" + impl->path + "': " + s.ToString());
  }
  impl->shared->db = impl->db;
  impl->finish_open(options);
  return std::unique_ptr<RocksDBStore>(new RocksDBStore(std::move(impl)));
}

RocksDBStore::~RocksDBStore() {
  impl_->cache.reset();  // its changes die with the database: nothing here survives the process anyway
  Shared& sh = *impl_->shared;
  {
    std::unique_lock<std::mutex> lock(sh.mu);
    sh.closing = true;
    sh.cv.wait(lock, [&] { return sh.readers == 0; });
    for (const rocksdb::Snapshot* s : sh.live) impl_->db->ReleaseSnapshot(s);
    sh.live.clear();
    sh.db = nullptr;
  }
  if (impl_->metrics) impl_->metrics->close();  // the gauges keep their final values
  for (rocksdb::ColumnFamilyHandle* h : impl_->cfs) impl_->db->DestroyColumnFamilyHandle(h);
  impl_->cfs.clear();
  if (impl_->default_cf != nullptr) impl_->db->DestroyColumnFamilyHandle(impl_->default_cf);
  impl_->pinned.Reset();
  rocksdb::Status closed = impl_->db->Close();
  (void)closed;  // nothing to do about it: the files go next
  delete impl_->db;
  impl_->db = nullptr;
  std::error_code ec;
  std::filesystem::remove_all(impl_->path, ec);
}

const std::string& RocksDBStore::path() const { return impl_->path; }

Result<int32_t> RocksDBStore::column_family(const std::string& name, const TtlCompactionFilterConfig* ttl) {
  for (size_t i = 0; i < impl_->cf_names.size(); ++i) {
    if (impl_->cf_names[i] == name) return static_cast<int32_t>(i);
  }
  rocksdb::ColumnFamilyOptions cf_options = impl_->cf_options;
  if (ttl != nullptr) cf_options.compaction_filter_factory = make_ttl_compaction_filter_factory(*ttl);
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  rocksdb::Status s = impl_->db->CreateColumnFamily(cf_options, name, &handle);
  if (!s.ok()) {
    return Status::io_error("RocksDB: cannot create column family '" + name + "' in " + impl_->path + ": " +
                            s.ToString());
  }
  impl_->cfs.push_back(handle);
  impl_->cf_names.push_back(name);
  return static_cast<int32_t>(impl_->cfs.size() - 1);
}

const std::string& RocksDBStore::column_family_name(int32_t cf) const {
  return impl_->cf_names[static_cast<size_t>(cf)];
}

void RocksDBStore::publish_native_metrics(int32_t cf, const std::string& group) {
  if (impl_->metrics) impl_->metrics->register_column_family(group, impl_->cfs[static_cast<size_t>(cf)]);
}

rocksdb::DB* RocksDBStore::db_for_test() const { return impl_->db; }

rocksdb::ColumnFamilyHandle* RocksDBStore::column_family_handle_for_test(int32_t cf) const {
  return impl_->cfs[static_cast<size_t>(cf)];
}

bool RocksDBStore::get(int32_t cf, std::string_view key, std::string_view* value) {
  Impl& m = *impl_;
  if (m.cache) {
    switch (m.cache->get(cf, key, value)) {
      case rocksdb_cache::WriteBackCache::Lookup::kValue: return true;
      case rocksdb_cache::WriteBackCache::Lookup::kAbsent: return false;
      case rocksdb_cache::WriteBackCache::Lookup::kMiss: break;
    }
  }
  m.pinned.Reset();
  rocksdb::Status s = m.db->Get(m.read_options, m.cfs[static_cast<size_t>(cf)], slice(key), &m.pinned);
  if (s.ok()) {
    *value = std::string_view(m.pinned.data(), m.pinned.size());
    if (m.cache) *value = m.cache->fill(cf, key, value);
    return true;
  }
  if (s.IsNotFound()) {
    if (m.cache) m.cache->fill(cf, key, nullptr);
    return false;
  }
  m.fail("get", cf, s);
}

void RocksDBStore::put(int32_t cf, std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  if (m.cache) return m.cache->put(cf, key, value);
  rocksdb::Status s = m.db->Put(m.write_options, m.cfs[static_cast<size_t>(cf)], slice(key), slice(value));
  if (!s.ok()) m.fail("put", cf, s);
}

void RocksDBStore::merge(int32_t cf, std::string_view key, std::string_view operand) {
  Impl& m = *impl_;
  if (m.cache && m.cache->merge(cf, key, operand)) return;
  rocksdb::Status s = m.db->Merge(m.write_options, m.cfs[static_cast<size_t>(cf)], slice(key), slice(operand));
  if (!s.ok()) m.fail("merge", cf, s);
}

void RocksDBStore::remove(int32_t cf, std::string_view key) {
  Impl& m = *impl_;
  if (m.cache) return m.cache->remove(cf, key);
  rocksdb::Status s = m.db->Delete(m.write_options, m.cfs[static_cast<size_t>(cf)], slice(key));
  if (!s.ok()) m.fail("delete", cf, s);
}

Status RocksDBStore::try_write(WriteBatch& batch) {
  if (impl_->cache) {
    // The batch applies after every cached change (a merge in it appends to them) and replaces the cached
    // entries of the keys it writes.
    try {
      impl_->write_back();
    } catch (const RocksDBError& e) {
      return e.status();
    }
    for (const auto& [cf, key] : batch.impl_->keys) impl_->cache->invalidate(cf, key);
    for (int32_t cf : batch.impl_->ranged_cfs) impl_->cache->invalidate_column_family(cf);
  }
  rocksdb::Status s = impl_->db->Write(impl_->write_options, &batch.impl_->batch);
  if (!s.ok()) return rocksdb_options::rocksdb_failure(s, "RocksDB write of a batch into " + impl_->path, impl_->path);
  return Status::ok();
}

void RocksDBStore::write(WriteBatch& batch) {
  Status s = try_write(batch);
  if (!s.is_ok()) throw RocksDBError(s);
}

std::unique_ptr<RocksDBStore::Iterator> RocksDBStore::new_iterator(int32_t cf, std::string_view lower,
                                                                   std::string_view upper) const {
  impl_->write_back();
  return std::make_unique<Iterator>(
      std::make_unique<Iterator::Impl>(impl_->db, impl_->cfs[static_cast<size_t>(cf)], lower, upper, nullptr));
}

bool RocksDBStore::has_key_in(int32_t cf, std::string_view lower, std::string_view upper) const {
  return new_iterator(cf, lower, upper)->valid();
}

std::shared_ptr<RocksDBStore::Snapshot> RocksDBStore::snapshot() {
  impl_->write_back();  // the snapshot is the state at this call, cached changes included
  auto impl = std::make_unique<Snapshot::Impl>();
  impl->shared = impl_->shared;
  impl->cfs = impl_->cfs;
  {
    std::lock_guard<std::mutex> lock(impl_->shared->mu);
    impl->snapshot = impl_->db->GetSnapshot();
    impl_->shared->live.insert(impl->snapshot);
  }
  return std::make_shared<Snapshot>(std::move(impl));
}

void RocksDBStore::write_back() { impl_->write_back(); }

RocksDBStore::CacheStats RocksDBStore::cache_stats() const {
  const rocksdb_cache::WriteBackCache* c = impl_->cache.get();
  if (c == nullptr) return {};
  return CacheStats{true,          c->max_size_bytes(), c->size_bytes(),       static_cast<int64_t>(c->entries()),
                    static_cast<int64_t>(c->dirty_entries()), c->hits(), c->misses(), c->evictions(),
                    c->dirty_evictions()};
}

size_t RocksDBStore::live_snapshots() const {
  std::lock_guard<std::mutex> lock(impl_->shared->mu);
  return impl_->shared->live.size();
}

int64_t RocksDBStore::estimate_num_keys() const {
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* h : impl_->cfs) {
    uint64_t v = 0;
    if (impl_->db->GetIntProperty(h, "rocksdb.estimate-num-keys", &v)) total += v;
  }
  return static_cast<int64_t>(total);
}

int64_t RocksDBStore::estimate_size_bytes() const {
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* h : impl_->cfs) {
    uint64_t v = 0;
    if (impl_->db->GetIntProperty(h, "rocksdb.total-sst-files-size", &v)) total += v;
    if (impl_->db->GetIntProperty(h, "rocksdb.cur-size-all-mem-tables", &v)) total += v;
  }
  return static_cast<int64_t>(total);
}

Status RocksDBStore::compact_all(int32_t cf) {
  try {
    impl_->write_back();  // what the cache holds is part of the state being compacted
  } catch (const RocksDBError& e) {
    return e.status();
  }
  rocksdb::ColumnFamilyHandle* h = impl_->cfs[static_cast<size_t>(cf)];
  rocksdb::FlushOptions flush;
  flush.wait = true;
  rocksdb::Status s = impl_->db->Flush(flush, h);
  if (s.ok()) {
    rocksdb::CompactRangeOptions compact;
    compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    s = impl_->db->CompactRange(compact, h, nullptr, nullptr);
  }
  if (!s.ok()) {
    return Status::io_error("RocksDB compaction of column family '" + impl_->cf_names[static_cast<size_t>(cf)] +
                            "' in " + impl_->path + " failed: " + s.ToString());
  }
  return Status::ok();
}

// ---- Iterator -----------------------------------------------------------------------------------------------

RocksDBStore::Iterator::Iterator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDBStore::Iterator::~Iterator() = default;
bool RocksDBStore::Iterator::valid() const { return impl_->it->Valid(); }
std::string_view RocksDBStore::Iterator::key() const {
  rocksdb::Slice k = impl_->it->key();
  return {k.data(), k.size()};
}
std::string_view RocksDBStore::Iterator::value() const {
  rocksdb::Slice v = impl_->it->value();
  return {v.data(), v.size()};
}
void RocksDBStore::Iterator::next() { impl_->it->Next(); }
Status RocksDBStore::Iterator::status() const {
  rocksdb::Status s = impl_->it->status();
  if (s.ok()) return Status::ok();
  return Status::io_error("RocksDB iteration failed: " + s.ToString());
}

// ---- WriteBatch ---------------------------------------------------------------------------------------------

RocksDBStore::WriteBatch::WriteBatch(const RocksDBStore& store) : impl_(std::make_unique<Impl>()) {
  impl_->store = store.impl_.get();
}
RocksDBStore::WriteBatch::~WriteBatch() = default;

void RocksDBStore::WriteBatch::put(int32_t cf, std::string_view key, std::string_view value) {
  impl_->touched(cf, key);
  rocksdb::Status s = impl_->batch.Put(impl_->cf(cf), slice(key), slice(value));
  if (!s.ok()) throw RocksDBError("RocksDB write batch put: " + s.ToString());
}
void RocksDBStore::WriteBatch::merge(int32_t cf, std::string_view key, std::string_view operand) {
  impl_->touched(cf, key);
  rocksdb::Status s = impl_->batch.Merge(impl_->cf(cf), slice(key), slice(operand));
  if (!s.ok()) throw RocksDBError("RocksDB write batch merge: " + s.ToString());
}
void RocksDBStore::WriteBatch::remove(int32_t cf, std::string_view key) {
  impl_->touched(cf, key);
  rocksdb::Status s = impl_->batch.Delete(impl_->cf(cf), slice(key));
  if (!s.ok()) throw RocksDBError("RocksDB write batch delete: " + s.ToString());
}
void RocksDBStore::WriteBatch::delete_range(int32_t cf, std::string_view begin, std::string_view end) {
  if (impl_->store->cache) impl_->ranged_cfs.push_back(cf);
  rocksdb::Status s = impl_->batch.DeleteRange(impl_->cf(cf), slice(begin), slice(end));
  if (!s.ok()) throw RocksDBError("RocksDB write batch delete-range: " + s.ToString());
}
size_t RocksDBStore::WriteBatch::count() const { return impl_->batch.Count(); }
void RocksDBStore::WriteBatch::clear() {
  impl_->batch.Clear();
  impl_->keys.clear();
  impl_->ranged_cfs.clear();
}

// ---- Snapshot -----------------------------------------------------------------------------------------------

RocksDBStore::Snapshot::Snapshot(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDBStore::Snapshot::~Snapshot() { release(); }

bool RocksDBStore::Snapshot::acquire_reader() {
  Shared& sh = *impl_->shared;
  std::lock_guard<std::mutex> lock(sh.mu);
  if (sh.closing || impl_->snapshot == nullptr) return false;
  ++sh.readers;
  ++impl_->readers;
  return true;
}

void RocksDBStore::Snapshot::release_reader() {
  Shared& sh = *impl_->shared;
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    --sh.readers;
    --impl_->readers;
  }
  sh.cv.notify_all();
}

std::unique_ptr<RocksDBStore::Iterator> RocksDBStore::Snapshot::new_iterator(int32_t cf, std::string_view lower,
                                                                             std::string_view upper) const {
  // The lease keeps db and snapshot unchanged: the store waits for readers before closing, release() too.
  rocksdb::DB* db;
  const rocksdb::Snapshot* snap;
  {
    std::lock_guard<std::mutex> lock(impl_->shared->mu);
    db = impl_->shared->db;
    snap = impl_->snapshot;
  }
  return std::make_unique<Iterator>(
      std::make_unique<Iterator::Impl>(db, impl_->cfs[static_cast<size_t>(cf)], lower, upper, snap));
}

void RocksDBStore::Snapshot::release() {
  Shared& sh = *impl_->shared;
  std::unique_lock<std::mutex> lock(sh.mu);
  sh.cv.wait(lock, [&] { return impl_->readers == 0; });
  if (impl_->snapshot == nullptr) return;
  if (sh.db != nullptr) {
    sh.db->ReleaseSnapshot(impl_->snapshot);
    sh.live.erase(impl_->snapshot);
  }
  impl_->snapshot = nullptr;
}

// ---- incremental checkpoints ----------------------------------------------------------------------------------

Result<std::vector<LocalSnapshotFile>> RocksDBStore::create_native_checkpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  try {
    impl_->write_back();  // the checkpoint is the state at this call, cached changes included
  } catch (const RocksDBError& e) {
    return e.status();
  }
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(impl_->db, &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush = 0: always flush the memtables first (the WAL is off, so they hold unflushed state).
  if (s.ok()) s = checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0);
  if (!s.ok()) {
    return Status::io_error("RocksDB checkpoint of " + impl_->path + " into '" + dir + "' failed: " + s.ToString());
  }
  std::vector<LocalSnapshotFile> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    uint64_t size = e.file_size(ec);
    if (ec) break;
    files.push_back(LocalSnapshotFile{e.path().filename().string(), e.path().string(), size});
  }
  if (ec) return Status::io_error("listing the RocksDB checkpoint '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return files;
}

Result<std::unique_ptr<RocksDBStore>> RocksDBStore::open_existing(
    const Options& options, const std::function<Status(const std::string& dir)>& populate) {
  namespace fs = std::filesystem;
  std::error_code ec;
  SLUICE_ASSIGN_OR_RETURN(WorkingDir working, create_working_dir(options));
  const fs::path& dir = working.path;
  auto impl = std::make_unique<Impl>();
  impl->path = dir.string();
  impl->owner = std::move(working.owner);
  auto fail = [&](Status st) {
    fs::remove_all(dir, ec);
    return st;
  };
  Status populated = populate(impl->path);
  if (!populated.is_ok()) return fail(populated);
  Result<rocksdb_options::InstanceOptions> rocks = rocksdb_options::instance_options(options);
  if (!rocks.is_ok()) return fail(rocks.status());
  impl->memory = rocks->shared;
  impl->cf_options = rocks->column_family;
  rocksdb::Options o = rocks->db;
  o.create_if_missing = false;
  o.error_if_exists = false;
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(o, impl->path, &names);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  std::vector<std::shared_ptr<DeferredTtlCompactionFilterFactory>> deferred;
  for (const std::string& n : names) {
    if (n == rocksdb::kDefaultColumnFamilyName) {
      descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions(o));
      deferred.push_back(nullptr);
      continue;
    }
    rocksdb::ColumnFamilyOptions cf = impl->cf_options;
    deferred.push_back(std::make_shared<DeferredTtlCompactionFilterFactory>());
    cf.compaction_filter_factory = deferred.back();
    descriptors.emplace_back(n, cf);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  if (s.ok()) s = rocksdb::DB::Open(o, impl->path, descriptors, &handles, &impl->db);
  if (!s.ok()) {
    return fail(Status::io_error("RocksDB state backend: cannot open the restored database in '" + impl->path +
                                 "': " + s.ToString()));
  }
  for (size_t i = 0; i < handles.size(); ++i) {
    if (names[i] == rocksdb::kDefaultColumnFamilyName) {
      impl->default_cf = handles[i];
    } else {
      impl->cfs.push_back(handles[i]);
      impl->cf_names.push_back(names[i]);
      impl->deferred_ttl.push_back(deferred[i]);
    }
  }
  impl->shared->db = impl->db;
  impl->finish_open(options);
  return std::unique_ptr<RocksDBStore>(new RocksDBStore(std::move(impl)));
}

const std::vector<std::string>& RocksDBStore::column_family_names() const { return impl_->cf_names; }

void RocksDBStore::configure_restored_ttl(int32_t cf, const TtlCompactionFilterConfig& ttl) {
  const size_t i = static_cast<size_t>(cf);
  if (i < impl_->deferred_ttl.size() && impl_->deferred_ttl[i]) impl_->deferred_ttl[i]->configure(ttl);
}

}  // namespace sluice
