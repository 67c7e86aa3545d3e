// The RocksDB layout (rocksdb_key_layout.h): key = [key group, 2 bytes big-endian][key][namespace](user key),
// self-delimiting parts, so keys sharing a prefix never collide and a key group is one contiguous range.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sluice/state/rocksdb_state_backend.h"

namespace sluice {
namespace {

constexpr int32_t kMaxP = 128;

template <class K>
std::unique_ptr<RocksDBKeyedStateBackend<K>> make(KeyGroupRange range = KeyGroupRange(0, kMaxP - 1)) {
  auto b = RocksDBKeyedStateBackend<K>::create(
      range, kMaxP, RocksDBStateBackendOptions{::testing::TempDir() + "sluice-rocksdb-layout-test", "t"});
  EXPECT_TRUE(b.is_ok()) << b.status().to_string();
  return std::move(b).value();
}

std::vector<std::pair<std::string, std::string>> all_entries(const RocksDBStore& store, int32_t cf) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = store.new_iterator(cf, "", ""); it->valid(); it->next()) out.emplace_back(it->key(), it->value());
  return out;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

struct Window {
  int64_t start = 0;
  bool operator==(const Window&) const = default;
  SLUICE_FIELDS(Window, start)
};

TEST(RocksDBLayout, StoredKeyIsKeyGroupThenKeyThenNamespace) {
  auto b = make<std::string>();
  auto& v = b->get_state(ValueStateDescriptor<int64_t>("v"));                           // column family 0
  auto& w = b->get_internal_state<Window>(ValueStateDescriptor<int32_t>("windowed"));  // column family 1
  auto& m = b->get_map_state(MapStateDescriptor<std::string, int64_t>("m"));           // column family 2
  b->set_current_key("key");
  const int32_t kg = b->current_key_group().value();
  v.update(0x0102030405060708);
  w.set_current_namespace(Window{7});
  w.update(9);
  m.put("uk", 5);

  const std::string prefix = bytes({kg >> 8, kg & 0xff, 3}) + "key";
  auto stored = all_entries(b->store(), 0);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].first, prefix);  // VoidNamespace serializes to nothing
  EXPECT_EQ(stored[0].second, bytes({8, 7, 6, 5, 4, 3, 2, 1}));
  stored = all_entries(b->store(), 1);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].first, prefix + bytes({7, 0, 0, 0, 0, 0, 0, 0}));
  stored = all_entries(b->store(), 2);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].first, prefix + bytes({2}) + "uk");
  EXPECT_EQ(stored[0].second, bytes({5, 0, 0, 0, 0, 0, 0, 0}));
}

// "a", "ab", "abc" and "" are byte prefixes of each other; serialized they are not (length first).
TEST(RocksDBLayout, StringKeysSharingPrefixesNeverCollide) {
  auto b = make<std::string>();
  auto& v = b->get_state(ValueStateDescriptor<std::string>("v"));
  auto& l = b->get_list_state(ListStateDescriptor<std::string>("l"));
  auto& m = b->get_map_state(MapStateDescriptor<std::string, std::string>("m"));
  auto& ns = b->get_internal_state<std::string>(ValueStateDescriptor<std::string>("ns"));
  const std::vector<std::string> keys = {"", "a", "ab", "abc", std::string("a\0", 2), "b"};
  for (const auto& k : keys) {
    b->set_current_key(k);
    v.update("v:" + k);
    l.add("l:" + k);
    m.put("x", "m:" + k);
    m.put(k, "self");
  }
  // Key and namespace split differently over the same bytes: ("a", "bc") vs ("ab", "c") vs ("abc", "").
  const std::vector<std::pair<std::string, std::string>> key_ns = {{"a", "bc"}, {"ab", "c"}, {"abc", ""}};
  for (const auto& [k, n] : key_ns) {
    b->set_current_key(k);
    ns.set_current_namespace(n);
    ns.update(k + "|" + n);
  }
  for (const auto& k : keys) {
    b->set_current_key(k);
    EXPECT_EQ(v.value(), "v:" + k);
    EXPECT_EQ(l.get(), (std::vector<std::string>{"l:" + k}));
    auto entries = m.entries();
    std::sort(entries.begin(), entries.end());
    std::vector<std::pair<std::string, std::string>> expected = {{"x", "m:" + k}, {k, "self"}};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(entries, expected) << "key '" << k << "'";
  }
  for (const auto& [k, n] : key_ns) {
    b->set_current_key(k);
    ns.set_current_namespace(n);
    EXPECT_EQ(ns.value(), k + "|" + n);
  }
  // Clearing the map of "a" leaves "ab"'s; an absent key's map is empty even when longer keys have entries.
  b->set_current_key("a");
  m.clear();
  EXPECT_TRUE(m.is_empty());
  b->set_current_key("ab");
  EXPECT_EQ(m.keys().size(), 2u);
  b->set_current_key("abcd");
  EXPECT_TRUE(m.is_empty());
  EXPECT_FALSE(v.value().has_value());
}

TEST(RocksDBLayout, AKeyGroupIsOneContiguousByteRange) {
  auto b = make<std::string>();
  auto& v = b->get_state(ValueStateDescriptor<int64_t>("v"));
  std::map<int32_t, int64_t> per_group;
  for (int i = 0; i < 3000; ++i) {
    const std::string k = "user-" + std::to_string(i * 7919);
    b->set_current_key(k);
    v.update(i);
    ++per_group[b->current_key_group().value()];
  }
  int32_t last = -1;
  int64_t total = 0;
  for (const auto& [stored_key, value] : all_entries(b->store(), 0)) {
    const int32_t kg = rocksdb_layout::key_group_of(stored_key);
    EXPECT_GE(kg, last);  // byte order = key-group order
    last = kg;
    auto key = deserialize_bytes<std::string>(reinterpret_cast<const uint8_t*>(stored_key.data()) + 2,
                                              stored_key.size() - 2);
    ASSERT_TRUE(key.is_ok());
    EXPECT_EQ(key_group_for_key(*key, kMaxP).value(), kg);
    ++total;
  }
  EXPECT_EQ(total, 3000);
  for (const auto& [kg, n] : per_group) {
    int64_t in_range = 0;
    for (auto it = b->store().new_iterator(0, rocksdb_layout::key_group_prefix(kg),
                                           rocksdb_layout::key_group_prefix(kg + 1));
         it->valid(); it->next()) {
      ++in_range;
    }
    EXPECT_EQ(in_range, n) << "key group " << kg;
  }
}

TEST(RocksDBLayout, LastKeyGroupOfTheLargestMaxParallelism) {
  auto b = RocksDBKeyedStateBackend<int64_t>::create(
      KeyGroupRange(32760, 32767), 32768, RocksDBStateBackendOptions{::testing::TempDir() + "sluice-rocksdb-layout-test", "t"});
  ASSERT_TRUE(b.is_ok());
  auto& v = (*b)->get_state(ValueStateDescriptor<int64_t>("v"));
  int64_t k = 0;
  while (key_group_for_key(k, 32768).value() != 32767) ++k;
  (*b)->set_current_key(k);
  v.update(42);
  EXPECT_EQ(v.value(), 42);
  std::vector<uint8_t> snap;
  ASSERT_TRUE((*b)->snapshot_key_group(KeyGroup(32767), &snap).is_ok());
  auto view = parse_key_group_snapshot(snap.data(), snap.size());
  ASSERT_TRUE(view.is_ok());
  ASSERT_EQ(view->states.size(), 1u);
  EXPECT_EQ(view->states[0].entry_count, 1u);
}

TEST(RocksDBLayout, ListElementsMustTakeAtLeastOneByte) {
  auto b = make<int64_t>();
  try {
    (void)b->get_list_state(ListStateDescriptor<VoidNamespace>("empties"));
    FAIL() << "expected a StatusError";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("state 'empties'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(b->registered_state_names().empty());
}

}  // namespace
}  // namespace sluice
