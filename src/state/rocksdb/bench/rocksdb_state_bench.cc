// Keyed read-modify-write through ValueState<int64_t> on the RocksDB backend, next to a hand-written loop of
// RocksDB Get + Put on the same keys (the same stored bytes: [key group][8-byte key]) with the same options
// (rocksdb_options.h: no WAL, same column family options). The target: the state path reaches at least
// 0.75 of the raw loop's throughput.
//
// Each variant gets its own database, warmed with every key. Then rounds alternate between the two (a full
// pass over the shuffled keys each), so load from other processes hits both alike; the median round counts.
// Prints a JSON object: ns per operation (wall and the thread's CPU) of both, and the ratio raw / state.
//
// Then the hot-key workload of the write-back cache (`state.backend.rocksdb.cache.*`): --hot-updates
// read-modify-writes, 99 % of them on 1,000 hot keys and 1 % on any of the N keys, through ValueState on
// RocksDB with and without the cache; every pass ends with a snapshot (as a checkpoint barrier would: the cache
// writes its changes back), whose cost is included. Target: >= 2 M updates per CPU-second with the cache.
//
//   rocksdb_state_bench [--keys N] [--rounds R] [--hot-updates U] [--cache-bytes B] [--json FILE]
#include <rocksdb/db.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "rocksdb_options.h"
#include "sluice/state/rocksdb_state_backend.h"

namespace sluice {
namespace {

constexpr int32_t kMaxParallelism = 128;

struct Times {
  double wall_ns = 0;
  double cpu_ns = 0;
};

double now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <class F>
Times timed(F&& fn) {
  const double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  fn();
  return Times{now_ns(CLOCK_MONOTONIC) - w0, now_ns(CLOCK_THREAD_CPUTIME_ID) - c0};
}

std::vector<int64_t> shuffled_keys(size_t n) {
  std::vector<int64_t> k(n);
  std::mt19937_64 rng(42);
  for (auto& x : k) x = static_cast<int64_t>(rng() >> 1);
  std::shuffle(k.begin(), k.end(), rng);
  return k;
}

std::string bench_dir() {
  return (std::filesystem::temp_directory_path() / "sluice-rocksdb-bench").string();
}

// The state path: what a keyed operator does per record.
class StateVariant {
 public:
  explicit StateVariant(const std::vector<int64_t>& keys, int64_t cache_bytes = 0) : keys_(keys) {
    RocksDBStateBackendOptions options{bench_dir(), "bench-state"};
    if (cache_bytes > 0) options.write_back_cache = RocksDBWriteBackCacheOptions::fixed(cache_bytes);
    auto b = RocksDBKeyedStateBackend<int64_t>::create(KeyGroupRange(0, kMaxParallelism - 1), kMaxParallelism,
                                                       options);
    if (!b.is_ok()) throw std::runtime_error(b.status().to_string());
    backend_ = std::move(b).value();
    count_ = &backend_->get_state(ValueStateDescriptor<int64_t>("count"));
    for (int64_t k : keys_) {
      backend_->set_current_key(k);
      count_->update(0);
    }
  }
  void pass() { pass(keys_); }
  void pass(const std::vector<int64_t>& sequence) {
    KeyedStateBackend<int64_t>& b = *backend_;
    for (int64_t k : sequence) {
      b.set_current_key(k);
      std::optional<int64_t> v = count_->value();
      count_->update(v.value_or(0) + 1);
    }
  }
  // What a checkpoint barrier costs the task thread (the synchronous part; the cache writes back here).
  void snapshot() { backend_->snapshot()->release(); }
  const RocksDBStore& store() const { return backend_->store(); }
  int64_t checksum() {
    int64_t sum = 0;
    for (int64_t k : keys_) {
      backend_->set_current_key(k);
      sum += count_->value().value_or(0);
    }
    return sum;
  }

 private:
  const std::vector<int64_t>& keys_;
  std::unique_ptr<RocksDBKeyedStateBackend<int64_t>> backend_;
  ValueState<int64_t>* count_ = nullptr;
};

// The hand-written loop: the same stored keys, Get into a reused PinnableSlice, Put the incremented value.
class RawVariant {
 public:
  explicit RawVariant(const std::vector<int64_t>& keys) {
    dir_ = bench_dir() + "/raw-" + std::to_string(std::random_device{}());
    std::filesystem::create_directories(bench_dir());
    // The state backend's default options (managed memory included), so both variants run on the same.
    auto rocks = rocksdb_options::instance_options(RocksDBStateBackendOptions{});
    if (!rocks.is_ok()) throw std::runtime_error(rocks.status().to_string());
    memory_ = rocks->shared;
    rocksdb::Status s = rocksdb::DB::Open(rocks->db, dir_, &db_);
    if (!s.ok()) throw std::runtime_error(s.ToString());
    s = db_->CreateColumnFamily(rocks->column_family, "state:count", &cf_);
    if (!s.ok()) throw std::runtime_error(s.ToString());
    wo_ = rocksdb_options::write_options();
    encoded_.reserve(keys.size());
    for (int64_t k : keys) {
      const int32_t kg = key_group_for_key(k, kMaxParallelism).value();
      std::array<char, 10> e{};
      e[0] = static_cast<char>(kg >> 8);
      e[1] = static_cast<char>(kg & 0xff);
      std::memcpy(e.data() + 2, &k, sizeof(k));
      encoded_.push_back(e);
    }
    const int64_t zero = 0;
    for (const auto& e : encoded_) {
      db_->Put(wo_, cf_, rocksdb::Slice(e.data(), e.size()),
               rocksdb::Slice(reinterpret_cast<const char*>(&zero), sizeof(zero)));
    }
  }
  ~RawVariant() {
    db_->DestroyColumnFamilyHandle(cf_);
    delete db_;
    std::filesystem::remove_all(dir_);
  }
  void pass() {
    for (const auto& e : encoded_) {
      const rocksdb::Slice key(e.data(), e.size());
      value_.Reset();
      int64_t v = 0;
      if (db_->Get(ro_, cf_, key, &value_).ok() && value_.size() == sizeof(v)) std::memcpy(&v, value_.data(), 8);
      ++v;
      db_->Put(wo_, cf_, key, rocksdb::Slice(reinterpret_cast<const char*>(&v), sizeof(v)));
    }
  }
  int64_t checksum() {
    int64_t sum = 0;
    for (const auto& e : encoded_) {
      std::string v;
      if (db_->Get(ro_, cf_, rocksdb::Slice(e.data(), e.size()), &v).ok() && v.size() == 8) {
        int64_t x;
        std::memcpy(&x, v.data(), 8);
        sum += x;
      }
    }
    return sum;
  }

 private:
  std::string dir_;
  std::shared_ptr<const rocksdb_memory::SharedResources> memory_;  // outlives db_ (declared first)
  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
  rocksdb::ReadOptions ro_;
  rocksdb::WriteOptions wo_;
  rocksdb::PinnableSlice value_;
  std::vector<std::array<char, 10>> encoded_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// updates accesses: 99 % on the first 1,000 keys (hot), 1 % on any key.
std::vector<int64_t> hot_key_sequence(const std::vector<int64_t>& keys, size_t updates) {
  std::mt19937_64 rng(7);
  const size_t hot = std::min<size_t>(1000, keys.size());
  std::vector<int64_t> seq(updates);
  for (auto& k : seq) k = (rng() % 100 != 0) ? keys[rng() % hot] : keys[rng() % keys.size()];
  return seq;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  size_t keys = 100'000;
  int rounds = 7;
  size_t hot_updates = 2'000'000;
  int64_t cache_bytes = 64ll << 20;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--keys" && i + 1 < argc) {
      keys = std::stoull(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::stoi(argv[++i]);
    } else if (a == "--hot-updates" && i + 1 < argc) {
      hot_updates = std::stoull(argv[++i]);
    } else if (a == "--cache-bytes" && i + 1 < argc) {
      cache_bytes = std::stoll(argv[++i]);
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--keys N] [--rounds R] [--hot-updates U] [--cache-bytes B] [--json FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  const std::vector<int64_t> key_list = sluice::shuffled_keys(keys);
  sluice::StateVariant state(key_list);
  sluice::RawVariant raw(key_list);
  std::vector<double> state_wall, state_cpu, raw_wall, raw_cpu;
  for (int r = 0; r < rounds; ++r) {
    auto run_state = [&] {
      auto t = sluice::timed([&] { state.pass(); });
      state_wall.push_back(t.wall_ns / static_cast<double>(keys));
      state_cpu.push_back(t.cpu_ns / static_cast<double>(keys));
    };
    auto run_raw = [&] {
      auto t = sluice::timed([&] { raw.pass(); });
      raw_wall.push_back(t.wall_ns / static_cast<double>(keys));
      raw_cpu.push_back(t.cpu_ns / static_cast<double>(keys));
    };
    if (r % 2 == 0) {
      run_state();
      run_raw();
    } else {
      run_raw();
      run_state();
    }
  }
  const int64_t expected = static_cast<int64_t>(keys) * rounds;
  if (state.checksum() != expected || raw.checksum() != expected) {
    std::fprintf(stderr, "checksum mismatch: state %lld, raw %lld, expected %lld\n",
                 static_cast<long long>(state.checksum()), static_cast<long long>(raw.checksum()),
                 static_cast<long long>(expected));
    return 1;
  }
  const double sw = sluice::median(state_wall), sc = sluice::median(state_cpu);
  const double rw = sluice::median(raw_wall), rc = sluice::median(raw_cpu);

  // The hot-key workload, uncached and cached, alternating rounds.
  const std::vector<int64_t> hot_seq = sluice::hot_key_sequence(key_list, hot_updates);
  sluice::StateVariant uncached(key_list), cached(key_list, cache_bytes);
  std::vector<double> hot_plain_cpu, hot_cached_cpu;
  for (int r = 0; r < rounds; ++r) {
    auto run = [&](sluice::StateVariant& v, std::vector<double>& cpu) {
      auto t = sluice::timed([&] {
        v.pass(hot_seq);
        v.snapshot();
      });
      cpu.push_back(t.cpu_ns / static_cast<double>(hot_updates));
    };
    if (r % 2 == 0) {
      run(uncached, hot_plain_cpu);
      run(cached, hot_cached_cpu);
    } else {
      run(cached, hot_cached_cpu);
      run(uncached, hot_plain_cpu);
    }
  }
  if (cached.checksum() != uncached.checksum()) {
    std::fprintf(stderr, "hot-key checksum mismatch: cached %lld, uncached %lld\n",
                 static_cast<long long>(cached.checksum()), static_cast<long long>(uncached.checksum()));
    return 1;
  }
  const sluice::RocksDBStore::CacheStats cs = cached.store().cache_stats();
  const double hp = sluice::median(hot_plain_cpu), hc = sluice::median(hot_cached_cpu);

  char json[2048];
  std::snprintf(json, sizeof(json),
                "{\n  \"benchmark\": \"rocksdb_value_state_rmw\",\n  \"keys\": %zu,\n  \"rounds\": %d,\n"
                "  \"state_ns_per_op\": %.1f,\n  \"state_cpu_ns_per_op\": %.1f,\n"
                "  \"raw_ns_per_op\": %.1f,\n  \"raw_cpu_ns_per_op\": %.1f,\n"
                "  \"state_ops_per_s\": %.0f,\n  \"raw_ops_per_s\": %.0f,\n"
                "  \"ratio_wall\": %.3f,\n  \"ratio_cpu\": %.3f,\n  \"target_ratio\": 0.75,\n"
                "  \"hot_key\": {\"updates_per_pass\": %zu, \"cache_bytes\": %lld,\n"
                "    \"uncached_updates_per_cpu_s\": %.0f, \"cached_updates_per_cpu_s\": %.0f,\n"
                "    \"speedup_cpu\": %.2f, \"target_cached_updates_per_cpu_s\": 2000000,\n"
                "    \"cache_hits\": %lld, \"cache_misses\": %lld, \"cache_evictions\": %lld}\n}\n",
                keys, rounds, sw, sc, rw, rc, 1e9 / sw, 1e9 / rw, rw / sw, rc / sc, hot_updates,
                static_cast<long long>(cache_bytes), 1e9 / hp, 1e9 / hc, hp / hc, static_cast<long long>(cs.hits),
                static_cast<long long>(cs.misses), static_cast<long long>(cs.evictions));
  std::fputs(json, stdout);
  if (!json_path.empty()) std::ofstream(json_path) << json;
  return 0;
}
