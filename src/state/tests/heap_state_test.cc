// Semantics of every state kind, key identity and key-group placement, on every backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_test_util.h"

namespace sluice {
namespace {

class KeyedStateSemantics : public testing_backends::BackendTest {};

struct SumCount {
  int64_t sum = 0;
  int64_t count = 0;
  SLUICE_FIELDS(SumCount, sum, count)
};

struct Average final : AggregateFunction<int64_t, SumCount, double> {
  SumCount create_accumulator() const override { return {}; }
  void add(const int64_t& v, SumCount& acc) const override {
    acc.sum += v;
    acc.count += 1;
  }
  double get_result(const SumCount& acc) const override {
    return acc.count == 0 ? 0.0 : static_cast<double>(acc.sum) / static_cast<double>(acc.count);
  }
  void merge(SumCount& target, const SumCount& other) const override {
    target.sum += other.sum;
    target.count += other.count;
  }
};

TEST_P(KeyedStateSemantics, ValueStateUpdateReadClearPerKey) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  ValueState<int64_t>& s = b.get_state(ValueStateDescriptor<int64_t>("count"));
  b.set_current_key(1);
  EXPECT_FALSE(s.value().has_value());
  s.update(10);
  b.set_current_key(2);
  EXPECT_FALSE(s.value().has_value());
  s.update(20);
  b.set_current_key(1);
  EXPECT_EQ(s.value(), 10);
  s.update(11);
  EXPECT_EQ(s.value(), 11);
  s.clear();
  EXPECT_FALSE(s.value().has_value());
  b.set_current_key(2);
  EXPECT_EQ(s.value(), 20);
  expect_entries(b, 1);
}

TEST_P(KeyedStateSemantics, ValueStateReadsAreCopies) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_state(ValueStateDescriptor<std::vector<std::string>>("v"));
  b.set_current_key(5);
  s.update({"a", "b"});
  std::optional<std::vector<std::string>> copy = s.value();
  copy->push_back("mutated");
  (*copy)[0] = "x";
  EXPECT_EQ(s.value(), (std::vector<std::string>{"a", "b"}));
}

TEST_P(KeyedStateSemantics, ListStateAddGetUpdateClear) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  ListState<std::string>& s = b.get_list_state(ListStateDescriptor<std::string>("events"));
  b.set_current_key(7);
  EXPECT_TRUE(s.get().empty());
  s.add("a");
  s.add("b");
  s.add_all({"c", "d"});
  s.add_all({});
  EXPECT_EQ(s.get(), (std::vector<std::string>{"a", "b", "c", "d"}));
  std::vector<std::string> copy = s.get();
  copy.clear();
  EXPECT_EQ(s.get().size(), 4u);
  s.update({"z"});
  EXPECT_EQ(s.get(), (std::vector<std::string>{"z"}));
  s.update({});
  EXPECT_TRUE(s.get().empty());
  expect_entries(b, 0);  // an empty update clears
  s.add_all({"p", "q"});
  b.set_current_key(8);
  EXPECT_TRUE(s.get().empty());
  b.set_current_key(7);
  s.clear();
  EXPECT_TRUE(s.get().empty());
  expect_entries(b, 0);
}

TEST_P(KeyedStateSemantics, MapStateOperationsAndIteration) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  MapState<std::string, int64_t>& m = b.get_map_state(MapStateDescriptor<std::string, int64_t>("m"));
  b.set_current_key(3);
  EXPECT_TRUE(m.is_empty());
  EXPECT_FALSE(m.get("a").has_value());
  m.put("a", 1);
  m.put("b", 2);
  m.put("a", 10);
  m.put_all({{"c", 3}, {"d", 4}});
  EXPECT_FALSE(m.is_empty());
  EXPECT_EQ(m.get("a"), 10);
  EXPECT_TRUE(m.contains("c"));
  EXPECT_FALSE(m.contains("zz"));

  auto entries = m.entries();
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::pair<std::string, int64_t>>{{"a", 10}, {"b", 2}, {"c", 3}, {"d", 4}}));
  auto keys = m.keys();
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c", "d"}));
  auto values = m.values();
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<int64_t>{2, 3, 4, 10}));
  std::map<std::string, int64_t> visited;
  m.for_each([&](const std::string& k, const int64_t& v) { visited[k] = v; });
  EXPECT_EQ(visited, (std::map<std::string, int64_t>{{"a", 10}, {"b", 2}, {"c", 3}, {"d", 4}}));

  entries[0].second = 999;  // a copy
  EXPECT_EQ(m.get("a"), 10);

  b.set_current_key(4);
  EXPECT_TRUE(m.is_empty());
  EXPECT_TRUE(m.entries().empty());
  b.set_current_key(3);
  m.remove("a");
  m.remove("missing");
  EXPECT_FALSE(m.contains("a"));
  m.remove("b");
  m.remove("c");
  m.remove("d");
  EXPECT_TRUE(m.is_empty());
  expect_entries(b, 0);  // the last remove drops the (key, namespace) entry
  m.put("x", 1);
  m.clear();
  EXPECT_TRUE(m.is_empty());
}

// Maps larger than one read chunk of the RocksDB backend (128 entries) iterate every entry exactly once, and
// the callback may write other state meanwhile (RocksDB: no iterator is open while user code runs).
TEST_P(KeyedStateSemantics, MapStateIteratesLargeMapsWhileTheCallbackWrites) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  MapState<int64_t, int64_t>& m = b.get_map_state(MapStateDescriptor<int64_t, int64_t>("m"));
  ValueState<int64_t>& total = b.get_state(ValueStateDescriptor<int64_t>("total"));
  b.set_current_key(5);
  for (int64_t i = 0; i < 1000; ++i) m.put(i * 7, i);
  total.update(0);
  std::map<int64_t, int64_t> seen;
  m.for_each([&](const int64_t& k, const int64_t& v) {
    EXPECT_TRUE(seen.emplace(k, v).second) << "visited twice: " << k;
    total.update(total.value().value_or(0) + v);
  });
  ASSERT_EQ(seen.size(), 1000u);
  for (const auto& [k, v] : seen) EXPECT_EQ(k, v * 7);
  EXPECT_EQ(total.value(), 999 * 1000 / 2);
  EXPECT_EQ(m.keys().size(), 1000u);
  EXPECT_EQ(m.entries().size(), 1000u);
}

struct NoStdHash {
  int32_t a = 0;
  std::string b;
  SLUICE_FIELDS(NoStdHash, a, b)
};

TEST_P(KeyedStateSemantics, MapStateUserKeysWithoutStdHashOrEquality) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  auto& m = b.get_map_state(MapStateDescriptor<NoStdHash, int64_t>("m"));
  b.set_current_key(1);
  m.put(NoStdHash{1, "x"}, 5);
  m.put(NoStdHash{1, "y"}, 6);
  m.put(NoStdHash{1, "x"}, 7);
  EXPECT_EQ(m.get(NoStdHash{1, "x"}), 7);
  EXPECT_EQ(m.get(NoStdHash{1, "y"}), 6);
  EXPECT_FALSE(m.contains(NoStdHash{2, "x"}));
  EXPECT_EQ(m.keys().size(), 2u);
}

TEST_P(KeyedStateSemantics, ReducingStateReducesAdds) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  ReducingState<int64_t>& s = b.get_reducing_state(
      ReducingStateDescriptor<int64_t>("max", [](const int64_t& a, const int64_t& c) { return std::max(a, c); }));
  b.set_current_key(1);
  EXPECT_FALSE(s.get().has_value());
  s.add(3);
  EXPECT_EQ(s.get(), 3);
  s.add(9);
  s.add(4);
  EXPECT_EQ(s.get(), 9);
  b.set_current_key(2);
  s.add(-5);
  EXPECT_EQ(s.get(), -5);
  b.set_current_key(1);
  s.clear();
  EXPECT_FALSE(s.get().has_value());
  s.add(1);
  EXPECT_EQ(s.get(), 1);
}

TEST_P(KeyedStateSemantics, ReducingStateReduceSeesStoredThenAdded) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_reducing_state(ReducingStateDescriptor<std::string>(
      "concat", [](const std::string& stored, const std::string& added) { return stored + "," + added; }));
  b.set_current_key(1);
  s.add("a");
  s.add("b");
  s.add("c");
  EXPECT_EQ(s.get(), "a,b,c");
}

TEST_P(KeyedStateSemantics, AggregatingStateAggregatesWithAccumulator) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  AggregatingState<int64_t, double>& s = b.get_aggregating_state(
      AggregatingStateDescriptor<int64_t, SumCount, double>("avg", std::make_shared<Average>()));
  b.set_current_key(1);
  EXPECT_FALSE(s.get().has_value());
  s.add(2);
  s.add(4);
  EXPECT_DOUBLE_EQ(*s.get(), 3.0);
  b.set_current_key(2);
  EXPECT_FALSE(s.get().has_value());
  s.add(10);
  EXPECT_DOUBLE_EQ(*s.get(), 10.0);
  b.set_current_key(1);
  s.add(9);
  EXPECT_DOUBLE_EQ(*s.get(), 5.0);
  s.clear();
  EXPECT_FALSE(s.get().has_value());
}

TEST_P(KeyedStateSemantics, KeysLandInTheirKeyGroup) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  ValueStateDescriptor<int64_t> d("v");
  auto& s = b.get_state(d);
  for (int64_t k = 0; k < 5000; ++k) {
    b.set_current_key(k);
    EXPECT_EQ(b.current_key_group(), key_group_for_key(k, 128));
    EXPECT_EQ(b.current_key(), k);
    s.update(k * 2);
  }
  int64_t seen = 0;
  for (KeyGroup kg : b.key_group_range()) {
    testing_backends::for_each_snapshot_entry<int64_t>(
        b, kg, "v", [&](const int64_t& key, std::string_view ns, std::string_view value) {
          EXPECT_EQ(key_group_for_key(key, 128), kg) << key;
          EXPECT_TRUE(ns.empty());
          EXPECT_EQ(deserialize_bytes<int64_t>(reinterpret_cast<const uint8_t*>(value.data()), value.size()).value(),
                    key * 2);
          ++seen;
        });
  }
  EXPECT_EQ(seen, 5000);
  expect_entries(b, 5000);
  // Heap: objects in memory; RocksDB: the memtable holding the 5000 writes.
  EXPECT_GT(b.state_size_bytes_estimate(), is_heap() ? 5000 * 24 : 5000 * 16);
}

TEST(HeapBackend, ForEachEntryVisitsTheKeyGroupTable) {
  HeapKeyedStateBackend<int64_t> b(KeyGroupRange(0, 127), 128);
  ValueStateDescriptor<int64_t> d("v");
  auto& s = b.get_state(d);
  for (int64_t k = 0; k < 1000; ++k) {
    b.set_current_key(k);
    s.update(k * 2);
  }
  int64_t seen = 0;
  for (KeyGroup kg : b.key_group_range()) {
    b.for_each_entry(d, kg, [&](const int64_t& key, const VoidNamespace&, const int64_t& value) {
      EXPECT_EQ(key_group_for_key(key, 128), kg) << key;
      EXPECT_EQ(value, key * 2);
      ++seen;
    });
  }
  EXPECT_EQ(seen, 1000);
}

TEST_P(KeyedStateSemantics, KeyOutsideRangeIsALogicError) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 42), 128);
  int64_t foreign = 0;
  while (key_group_for_key(foreign, 128).value() <= 42) ++foreign;
  int64_t inside = 0;
  while (key_group_for_key(inside, 128).value() > 42) ++inside;
  b.set_current_key(inside);
  try {
    b.set_current_key(foreign);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("key group " + std::to_string(key_group_for_key(foreign, 128).value())), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("[0, 42]"), std::string::npos) << msg;
  }
  EXPECT_EQ(b.current_key(), inside);  // unchanged
}

TEST_P(KeyedStateSemantics, AccessWithoutCurrentKeyIsALogicError) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  EXPECT_FALSE(b.has_current_key());
  EXPECT_THROW((void)s.value(), std::logic_error);
  EXPECT_THROW(s.update(1), std::logic_error);
  EXPECT_THROW((void)b.current_key(), std::logic_error);
}

TEST_P(KeyedStateSemantics, StringKeysAreSelfDelimited) {
  using Key = std::pair<std::string, std::string>;
  auto& b = backend<Key>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  b.set_current_key({"ab", "c"});
  s.update(1);
  b.set_current_key({"a", "bc"});
  EXPECT_FALSE(s.value().has_value());
  s.update(2);
  b.set_current_key({"ab", "c"});
  EXPECT_EQ(s.value(), 1);
  expect_entries(b, 2);
}

struct StructKey {
  std::string user;
  int32_t region = 0;
  SLUICE_FIELDS(StructKey, user, region)
};
struct StructKeyEq {
  std::string user;
  int32_t region = 0;
  bool operator==(const StructKeyEq&) const = default;
  SLUICE_FIELDS(StructKeyEq, user, region)
};

template <class Key>
int64_t exercise_struct_key(KeyedStateBackend<Key>& b) {
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  for (int i = 0; i < 300; ++i) {
    b.set_current_key(Key{"u" + std::to_string(i % 100), i / 100});
    s.update(i);
  }
  for (int i = 0; i < 300; ++i) {
    b.set_current_key(Key{"u" + std::to_string(i % 100), i / 100});
    EXPECT_EQ(s.value(), i);
  }
  return testing_backends::snapshot_entries(b);
}

TEST_P(KeyedStateSemantics, StructKeysWithAndWithoutEquality) {
  auto& a = backend<StructKey>(KeyGroupRange(0, 127), 128);
  EXPECT_EQ(exercise_struct_key(a), 300);
  expect_entries(a, 300);
  auto& c = backend<StructKeyEq>(KeyGroupRange(0, 127), 128);
  EXPECT_EQ(exercise_struct_key(c), 300);
  expect_entries(c, 300);
}

TEST_P(KeyedStateSemantics, FloatingKeysAreBitwise) {
  auto& b = backend<double>(KeyGroupRange(0, 127), 128);
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  b.set_current_key(nan);
  s.update(1);
  b.set_current_key(nan);
  EXPECT_EQ(s.value(), 1);  // a NaN key finds its own state
}

// Random operations on many keys against a std::map oracle (exercises rehashing and removal).
TEST_P(KeyedStateSemantics, MatchesOracleUnderRandomOperations) {
  auto& b = backend<std::string>(KeyGroupRange(0, 255), 256);
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  std::map<std::string, int64_t> oracle;
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 100000; ++i) {
    std::string key = "k" + std::to_string(rng() % 20000);
    b.set_current_key(key);
    switch (rng() % 4) {
      case 0:
      case 1: {
        int64_t v = static_cast<int64_t>(rng() % 1000);
        s.update(s.value().value_or(0) + v);
        oracle[key] += v;
        break;
      }
      case 2:
        s.clear();
        oracle.erase(key);
        break;
      default: {
        auto it = oracle.find(key);
        ASSERT_EQ(s.value(), it == oracle.end() ? std::nullopt : std::optional<int64_t>(it->second)) << key;
      }
    }
  }
  expect_entries(b, static_cast<int64_t>(oracle.size()));
  for (const auto& [k, v] : oracle) {
    b.set_current_key(k);
    ASSERT_EQ(s.value(), v);
  }
}

TEST_P(KeyedStateSemantics, FactoryValidatesArguments) {
  const auto opts = testing_backends::test_rocksdb_options();
  auto ok = make_keyed_state_backend<int64_t>(kind(), KeyGroupRange(0, 63), 128, opts);
  ASSERT_TRUE(ok.is_ok());
  EXPECT_EQ((*ok)->kind(), kind());
  EXPECT_EQ((*ok)->key_group_range(), KeyGroupRange(0, 63));

  auto bad_range = make_keyed_state_backend<int64_t>(kind(), KeyGroupRange(0, 128), 128, opts);
  ASSERT_FALSE(bad_range.is_ok());
  EXPECT_EQ(bad_range.status().code(), StatusCode::kInvalidArgument);
  auto bad_max = make_keyed_state_backend<int64_t>(kind(), KeyGroupRange(0, 1), 40000, opts);
  EXPECT_FALSE(bad_max.is_ok());

  const std::string type(state_backend_kind_name(kind()));
  auto by_name = create_keyed_state_backend<int64_t>(type, KeyGroupRange(0, 9), 10, opts);
  ASSERT_NE(by_name, nullptr);
  EXPECT_EQ(by_name->kind(), kind());
  EXPECT_THROW(create_keyed_state_backend<int64_t>("memory", KeyGroupRange(0, 9), 10), StatusError);
}

TEST(StateBackendType, ParsesFlinkNamesAndTheSeedsLegacyNames) {
  EXPECT_EQ(parse_state_backend_type("hashmap").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("HASHMAP").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("heap").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("rocksdb").value(), StateBackendKind::kRocksDB);
  EXPECT_EQ(parse_state_backend_type("RocksDB").value(), StateBackendKind::kRocksDB);
  // Legacy: MemoryStateBackend / FsStateBackend keep state on the heap, RocksDBStateBackend in RocksDB.
  EXPECT_EQ(parse_state_backend_type("jobmanager").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("MemoryStateBackend").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("filesystem").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("FsStateBackend").value(), StateBackendKind::kHashMap);
  EXPECT_EQ(parse_state_backend_type("RocksDBStateBackend").value(), StateBackendKind::kRocksDB);
  auto bad = parse_state_backend_type("memory");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'memory'"), std::string::npos) << bad.status().to_string();

  HashMapStateBackend heap;
  EXPECT_EQ(heap.name(), "hashmap");
  auto from_heap = heap.create_keyed_state_backend<std::string>(KeyGroupRange(5, 9), 10);
  ASSERT_TRUE(from_heap.is_ok());
  EXPECT_EQ((*from_heap)->kind(), StateBackendKind::kHashMap);
  EmbeddedRocksDBStateBackend rocks(testing_backends::test_rocksdb_options());
  EXPECT_EQ(rocks.name(), "rocksdb");
  auto from_rocks = rocks.create_keyed_state_backend<std::string>(KeyGroupRange(5, 9), 10);
  ASSERT_TRUE(from_rocks.is_ok()) << from_rocks.status().to_string();
  EXPECT_EQ((*from_rocks)->kind(), StateBackendKind::kRocksDB);
}

TEST_P(KeyedStateSemantics, NonPowerOfTwoMaxParallelism) {
  auto& b = backend<int64_t>(KeyGroupRange(0, 99), 100);
  auto& s = b.get_state(ValueStateDescriptor<int64_t>("v"));
  for (int64_t k = 0; k < 1000; ++k) {
    b.set_current_key(k);
    ASSERT_EQ(b.current_key_group(), key_group_for_key(k, 100));
    s.update(k);
  }
  expect_entries(b, 1000);
}

SLUICE_INSTANTIATE_FOR_BACKENDS(KeyedStateSemantics);

}  // namespace
}  // namespace sluice
