// Random operations on ValueState, ListState and MapState with TTL, on every backend, against a reference
// model of Flink's TTL semantics driven by the same ManualClock. Background cleanup (heap incremental cleanup
// per record, RocksDB compaction filter with manual compactions) and cleanup in full snapshot run along, and the
// backend is snapshotted and restored into a fresh one now and then: none of it may change what reads return.
// Seeded; the seed is printed (set SLUICE_TEST_SEED to replay).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend_test_util.h"

namespace sluice {
namespace {

constexpr int64_t kRandomTtl = 100;
const KeyGroupRange kRandomRange(0, 31);
constexpr int32_t kRandomMaxP = 32;

struct Variant {
  const char* name;
  StateTtlConfig::UpdateType update;
  StateTtlConfig::StateVisibility visibility;
  bool cleanup;  // background cleanup and cleanup in full snapshot on (only with NeverReturnExpired)
};

// Flink's semantics, written plainly: every value keeps (value, last access).
class Model {
 public:
  Model(const Variant& v, const ManualClock& clock)
      : uor_(v.update == StateTtlConfig::UpdateType::kOnReadAndWrite),
        re_(v.visibility == StateTtlConfig::StateVisibility::kReturnExpiredIfNotCleanedUp),
        clock_(clock) {}

  std::optional<int64_t> value(int64_t k) { return read_entry(values_, k); }
  void update(int64_t k, int64_t v) { values_[k] = {v, now()}; }
  void clear(int64_t k) { values_.erase(k); }

  std::vector<int64_t> list_get(int64_t k) {
    std::vector<int64_t> out;
    auto it = lists_.find(k);
    if (it == lists_.end()) return out;
    std::vector<Stamped> kept;
    for (const Stamped& e : it->second) {
      const bool exp = expired(e.ts);
      if (!exp) kept.push_back({e.v, uor_ ? now() : e.ts});
      if (!exp || re_) out.push_back(e.v);
    }
    if (kept.empty()) {
      lists_.erase(it);
    } else {
      it->second = std::move(kept);
    }
    return out;
  }
  void list_add(int64_t k, int64_t v) { lists_[k].push_back({v, now()}); }
  void list_update(int64_t k, const std::vector<int64_t>& vs) {
    if (vs.empty()) {
      lists_.erase(k);
      return;
    }
    auto& l = lists_[k];
    l.clear();
    for (int64_t v : vs) l.push_back({v, now()});
  }

  std::optional<int64_t> map_get(int64_t k, int64_t uk) {
    auto it = maps_.find(k);
    if (it == maps_.end()) return std::nullopt;
    std::optional<int64_t> r = read_entry(it->second, uk);
    if (it->second.empty()) maps_.erase(it);
    return r;
  }
  void map_put(int64_t k, int64_t uk, int64_t v) { maps_[k][uk] = {v, now()}; }
  void map_remove(int64_t k, int64_t uk) {
    auto it = maps_.find(k);
    if (it == maps_.end()) return;
    it->second.erase(uk);
    if (it->second.empty()) maps_.erase(it);
  }
  std::vector<std::pair<int64_t, int64_t>> map_entries(int64_t k) {
    std::vector<std::pair<int64_t, int64_t>> out;
    auto it = maps_.find(k);
    if (it == maps_.end()) return out;
    for (auto e = it->second.begin(); e != it->second.end();) {
      const bool exp = expired(e->second.ts);
      if (!exp || re_) out.emplace_back(e->first, e->second.v);
      if (exp) {
        e = it->second.erase(e);
      } else {
        if (uor_) e->second.ts = now();
        ++e;
      }
    }
    if (it->second.empty()) maps_.erase(it);
    return out;
  }

 private:
  struct Stamped {
    int64_t v;
    int64_t ts;
  };
  int64_t now() const { return clock_.now_ms(); }
  bool expired(int64_t ts) const { return ts + kRandomTtl <= now(); }
  std::optional<int64_t> read_entry(std::map<int64_t, Stamped>& m, int64_t k) {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    if (expired(it->second.ts)) {
      const int64_t v = it->second.v;
      m.erase(it);
      return re_ ? std::optional<int64_t>(v) : std::nullopt;
    }
    if (uor_) it->second.ts = now();
    return it->second.v;
  }

  bool uor_, re_;
  const ManualClock& clock_;
  std::map<int64_t, Stamped> values_;
  std::map<int64_t, std::vector<Stamped>> lists_;
  std::map<int64_t, std::map<int64_t, Stamped>> maps_;
};

class TtlRandomTest : public testing_backends::BackendTest {};

uint64_t test_seed() {
  if (const char* s = std::getenv("SLUICE_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

TEST_P(TtlRandomTest, MatchesReferenceModel) {
  const uint64_t seed = test_seed();
  std::cout << "TtlRandomTest seed: " << seed << " (SLUICE_TEST_SEED=" << seed << " replays it)" << std::endl;
  RecordProperty("seed", std::to_string(seed));
  const Variant variants[] = {
      {"OnCreateAndWrite/NeverReturnExpired", StateTtlConfig::UpdateType::kOnCreateAndWrite,
       StateTtlConfig::StateVisibility::kNeverReturnExpired, true},
      {"OnReadAndWrite/NeverReturnExpired", StateTtlConfig::UpdateType::kOnReadAndWrite,
       StateTtlConfig::StateVisibility::kNeverReturnExpired, true},
      {"OnCreateAndWrite/ReturnExpiredIfNotCleanedUp", StateTtlConfig::UpdateType::kOnCreateAndWrite,
       StateTtlConfig::StateVisibility::kReturnExpiredIfNotCleanedUp, false},
      {"OnReadAndWrite/ReturnExpiredIfNotCleanedUp", StateTtlConfig::UpdateType::kOnReadAndWrite,
       StateTtlConfig::StateVisibility::kReturnExpiredIfNotCleanedUp, false},
  };
  const int ops = is_heap() ? 6000 : 2500;
  for (const Variant& var : variants) {
    SCOPED_TRACE(std::string(var.name) + ", seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto clock = std::make_shared<ManualClock>(10'000);
    const StateTtlConfig config =
        var.cleanup ? StateTtlConfig::new_builder(kRandomTtl)
                          .set_update_type(var.update)
                          .set_state_visibility(var.visibility)
                          .cleanup_full_snapshot()
                          .cleanup_incrementally(3, true)
                          .cleanup_in_rocksdb_compact_filter(2)
                          .build()
                    : StateTtlConfig::new_builder(kRandomTtl)
                          .set_update_type(var.update)
                          .set_state_visibility(var.visibility)
                          .disable_cleanup_in_background()
                          .build();
    ValueStateDescriptor<int64_t> vd("v");
    ListStateDescriptor<int64_t> ld("l");
    MapStateDescriptor<int64_t, int64_t> md("m");
    vd.enable_time_to_live(config);
    ld.enable_time_to_live(config);
    md.enable_time_to_live(config);

    KeyedStateBackend<int64_t>* b = &backend<int64_t>(kRandomRange, kRandomMaxP);
    b->set_ttl_clock(clock);
    ValueState<int64_t>* v = &b->get_state(vd);
    ListState<int64_t>* l = &b->get_list_state(ld);
    MapState<int64_t, int64_t>* m = &b->get_map_state(md);
    Model model(var, *clock);

    auto rand = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
    for (int i = 0; i < ops; ++i) {
      clock->advance_ms(rand(4) == 0 ? rand(60) : rand(5));
      const int64_t k = rand(12);
      const int64_t x = rand(1000);
      b->set_current_key(k);
      const int op = static_cast<int>(rand(100));
      SCOPED_TRACE("op " + std::to_string(i) + " kind " + std::to_string(op) + " key " + std::to_string(k));
      if (op < 12) {
        ASSERT_EQ(v->value(), model.value(k));
      } else if (op < 24) {
        v->update(x);
        model.update(k, x);
      } else if (op < 26) {
        v->clear();
        model.clear(k);
      } else if (op < 38) {
        ASSERT_EQ(l->get(), model.list_get(k));
      } else if (op < 50) {
        l->add(x);
        model.list_add(k, x);
      } else if (op < 53) {
        std::vector<int64_t> vs(static_cast<size_t>(rand(3)), x);
        l->update(vs);
        model.list_update(k, vs);
      } else if (op < 65) {
        const int64_t uk = rand(5);
        ASSERT_EQ(m->get(uk), model.map_get(k, uk));
      } else if (op < 80) {
        const int64_t uk = rand(5);
        m->put(uk, x);
        model.map_put(k, uk, x);
      } else if (op < 83) {
        const int64_t uk = rand(5);
        m->remove(uk);
        model.map_remove(k, uk);
      } else if (op < 95) {
        auto got = m->entries();
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, model.map_entries(k));
      } else if (op < 97) {
        if (!is_heap() && rand(4) == 0) {  // a full compaction runs the TTL compaction filter over everything
          ASSERT_TRUE(dynamic_cast<RocksDBKeyedStateBackend<int64_t>&>(*b).compact_all().is_ok());
        }
      } else if (op < 98) {
        // Snapshot (synchronous) and restore into a fresh backend; continue there.
        std::vector<std::vector<uint8_t>> groups;
        for (KeyGroup kg : kRandomRange) {
          std::vector<uint8_t> bytes;
          ASSERT_TRUE(b->snapshot_key_group(kg, &bytes).is_ok());
          groups.push_back(std::move(bytes));
        }
        b = &backend<int64_t>(kRandomRange, kRandomMaxP);
        b->set_ttl_clock(clock);
        ASSERT_TRUE(b->restore_intersecting_key_groups(groups).is_ok());
        v = &b->get_state(vd);
        l = &b->get_list_state(ld);
        m = &b->get_map_state(md);
      }
    }
  }
}

SLUICE_INSTANTIATE_FOR_BACKENDS(TtlRandomTest);

}  // namespace
}  // namespace sluice
