// The heap snapshot's entry encoding (state_table.h: encode_entries, FixedEncoding, append_framed) writes
// exactly the bytes of the canonical format: TypeSerializer bytes framed by KeyGroupSnapshotWriter::append_entry.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sluice/detail/state/heap/state_table.h"
#include "sluice/state/hashmap_state_backend.h"

namespace sluice {
namespace {

enum class Side : int16_t { kBuy = 1, kSell = -2 };

struct Fixed {
  int64_t a = 0;
  double b = 0;
  int32_t c = 0;
  Side side = Side::kBuy;
  std::array<uint16_t, 3> arr{};
  SLUICE_FIELDS(Fixed, a, b, c, side, arr)
};

struct Nested {
  Fixed inner;
  std::pair<int8_t, float> p;
  std::tuple<uint64_t, char> t;
  SLUICE_FIELDS(Nested, inner, p, t)
};

struct WithBool {  // bool is written as 0/1 by its own serializer: not a fixed copy
  int64_t x = 0;
  bool flag = false;
  SLUICE_FIELDS(WithBool, x, flag)
};

struct EncodingWindow {
  int64_t start = 0;
  bool operator==(const EncodingWindow&) const = default;
  SLUICE_FIELDS(EncodingWindow, start)
};

static_assert(detail::FixedEncoding<int64_t>::kFixed && detail::FixedEncoding<int64_t>::kSize == 8);
static_assert(detail::FixedEncoding<Side>::kSize == 2);
static_assert(detail::FixedEncoding<Fixed>::kFixed && detail::FixedEncoding<Fixed>::kSize == 8 + 8 + 4 + 2 + 6);
static_assert(detail::FixedEncoding<Nested>::kSize == detail::FixedEncoding<Fixed>::kSize + 1 + 4 + 8 + 1);
static_assert(!detail::FixedEncoding<bool>::kFixed);
static_assert(!detail::FixedEncoding<WithBool>::kFixed);
static_assert(!detail::FixedEncoding<std::string>::kFixed);
static_assert(!detail::FixedEncoding<std::vector<int64_t>>::kFixed);
static_assert(detail::kFixedSizeEntries<int64_t, VoidNamespace, Fixed>);
static_assert(!detail::kFixedSizeEntries<int64_t, VoidNamespace, std::array<int64_t, 20>>);  // 160 bytes

// The canonical bytes of the map's entries, in for_each order, built the straightforward way.
template <class K, class N, class V>
std::vector<uint8_t> reference_encoding(const StateMap<K, N, V>& m) {
  std::vector<uint8_t> out;
  m.for_each([&](const K& k, const N& ns, const V& v) {
    std::vector<uint8_t> kb = serialize_bytes(k), nb = serialize_bytes(ns), vb = serialize_bytes(v);
    KeyGroupSnapshotWriter::append_entry(out, detail::as_string_view(kb), detail::as_string_view(nb),
                                         detail::as_string_view(vb));
  });
  return out;
}

template <class K, class N, class V, class MakeK, class MakeN, class MakeV>
void expect_same_bytes(int n, MakeK make_k, MakeN make_n, MakeV make_v) {
  StateMap<K, N, V> m;
  for (int i = 0; i < n; ++i) {
    K k = make_k(i);
    N ns = make_n(i);
    m.put(k, ns, detail::combine_key_namespace_hash(hash_key(k), detail::namespace_hash(ns)), make_v(i));
  }
  std::vector<uint8_t> got = {0xAB};  // appends after what is there
  detail::encode_entries<K, N, V>(m.view(), m.size(), got);
  std::vector<uint8_t> want = {0xAB};
  const std::vector<uint8_t> ref = reference_encoding(m);
  want.insert(want.end(), ref.begin(), ref.end());
  EXPECT_EQ(got, want);
}

TEST(StateEncodingTest, FixedStructValueMatchesTheSerializer) {
  expect_same_bytes<int64_t, VoidNamespace, Fixed>(
      500, [](int i) { return int64_t{i} * 7919 - 3; }, [](int) { return VoidNamespace{}; },
      [](int i) {
        return Fixed{i, i * 0.5, -i, i % 2 ? Side::kSell : Side::kBuy,
                     {static_cast<uint16_t>(i), 7, static_cast<uint16_t>(65535 - i)}};
      });
}

TEST(StateEncodingTest, NestedFixedTypesAndNamespacesMatchTheSerializer) {
  expect_same_bytes<int32_t, EncodingWindow, Nested>(
      300, [](int i) { return i; }, [](int i) { return EncodingWindow{i % 5}; },
      [](int i) {
        Nested v;
        v.inner.a = -i;
        v.p = {static_cast<int8_t>(i), 1.5f * static_cast<float>(i)};
        v.t = {static_cast<uint64_t>(i) << 40, static_cast<char>('a' + i % 26)};
        return v;
      });
  expect_same_bytes<uint8_t, VoidNamespace, std::tuple<int64_t, float>>(
      200, [](int i) { return static_cast<uint8_t>(i); }, [](int) { return VoidNamespace{}; },
      [](int i) { return std::tuple<int64_t, float>{i, 0.25f}; });
}

TEST(StateEncodingTest, VariableAndLargeValuesMatchTheSerializer) {
  // Strings (short and >= 128 bytes, so the length needs a second varint byte), bool fields, big arrays.
  expect_same_bytes<std::string, VoidNamespace, std::string>(
      300, [](int i) { return "key-" + std::to_string(i); }, [](int) { return VoidNamespace{}; },
      [](int i) { return std::string(static_cast<size_t>(i % 3 == 0 ? 130 + i : i % 40), 'v'); });
  expect_same_bytes<int64_t, VoidNamespace, WithBool>(
      100, [](int i) { return i; }, [](int) { return VoidNamespace{}; },
      [](int i) { return WithBool{i, i % 2 == 0}; });
  expect_same_bytes<int64_t, VoidNamespace, std::array<int64_t, 20>>(
      50, [](int i) { return i; }, [](int) { return VoidNamespace{}; },
      [](int i) {
        std::array<int64_t, 20> a{};
        a.fill(i);
        return a;
      });
  expect_same_bytes<int64_t, VoidNamespace, std::vector<int64_t>>(
      100, [](int i) { return i; }, [](int) { return VoidNamespace{}; },
      [](int i) { return std::vector<int64_t>(static_cast<size_t>(i % 25), i); });
}

TEST(StateEncodingTest, EmptyMapAppendsNothing) {
  StateMap<int64_t, VoidNamespace, Fixed> m;
  std::vector<uint8_t> out = {1, 2};
  detail::encode_entries<int64_t, VoidNamespace, Fixed>(m.view(), 0, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 2}));
}

// ---- restore: the fixed-size decoder (StateTable::stage_fixed_size) and its fallback ----

constexpr int32_t kEncodingMaxP = 128;

StateMetaInfo value_meta(const std::string& name) {
  return StateMetaInfo{name, StateKind::kValue, TypeSerializer<VoidNamespace>::snapshot(),
                       {TypeSerializer<int64_t>::snapshot()}};
}

KeyGroup group_of(int64_t key) { return key_group_for_hash(hash_key(key), kEncodingMaxP); }

// A key-group snapshot of state "v" (ValueState<int64_t>) holding exactly `entries` (already encoded).
std::vector<uint8_t> snapshot_with(KeyGroup kg, uint64_t count, const std::vector<uint8_t>& entries) {
  std::vector<uint8_t> out;
  KeyGroupSnapshotWriter w(&out, kEncodingMaxP, kg, TypeSerializer<int64_t>::snapshot(), 1);
  w.add_state(value_meta("v"), count, entries);
  w.finish();
  return out;
}

void add_entry(std::vector<uint8_t>& entries, int64_t key, const std::vector<uint8_t>& value_bytes) {
  std::vector<uint8_t> kb = serialize_bytes(key);
  KeyGroupSnapshotWriter::append_entry(entries, detail::as_string_view(kb), "", detail::as_string_view(value_bytes));
}

TEST(StateEncodingTest, FixedSizeRestoreRoundTripsEveryKeyGroup) {
  HeapKeyedStateBackend<int64_t> src(KeyGroupRange(0, kEncodingMaxP - 1), kEncodingMaxP);
  auto& v = src.get_state(ValueStateDescriptor<Fixed>("fixed"));
  for (int64_t k = 0; k < 3000; ++k) {
    src.set_current_key(k);
    v.update(Fixed{k, 0.5 * static_cast<double>(k), static_cast<int32_t>(-k), Side::kSell, {1, 2, 3}});
  }
  HeapKeyedStateBackend<int64_t> dst(KeyGroupRange(0, kEncodingMaxP - 1), kEncodingMaxP);
  auto& w = dst.get_state(ValueStateDescriptor<Fixed>("fixed"));  // registered first: decoded at restore
  for (int32_t g = 0; g < kEncodingMaxP; ++g) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(src.snapshot_key_group(KeyGroup(g), &bytes).is_ok());
    ASSERT_TRUE(dst.restore_key_group(bytes.data(), bytes.size()).is_ok());
  }
  EXPECT_EQ(dst.num_entries(), 3000);
  for (int64_t k = 0; k < 3000; k += 7) {
    dst.set_current_key(k);
    auto got = w.value();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->a, k);
    EXPECT_EQ(got->b, 0.5 * static_cast<double>(k));
    EXPECT_EQ(got->c, -k);
    EXPECT_EQ(got->side, Side::kSell);
    EXPECT_EQ(got->arr, (std::array<uint16_t, 3>{1, 2, 3}));
  }
}

TEST(StateEncodingTest, FixedSizeRestoreRejectsWrongSizesAndForeignKeys) {
  const int64_t key = 42;
  const KeyGroup kg = group_of(key);
  int64_t foreign = key + 1;
  while (group_of(foreign) == kg) ++foreign;

  std::vector<uint8_t> short_value;  // a 5-byte value where an int64 takes 8
  add_entry(short_value, key, {1, 2, 3, 4, 5});
  std::vector<uint8_t> foreign_key;  // a key of another key group
  add_entry(foreign_key, key, serialize_bytes(int64_t{7}));
  add_entry(foreign_key, foreign, serialize_bytes(int64_t{8}));

  for (bool register_first : {true, false}) {  // decoded at restore, or at registration
    HeapKeyedStateBackend<int64_t> dst(KeyGroupRange(0, kEncodingMaxP - 1), kEncodingMaxP);
    ValueState<int64_t>* v = register_first ? &dst.get_state(ValueStateDescriptor<int64_t>("v")) : nullptr;
    if (register_first) {
      dst.set_current_key(key);
      v->update(-1);
      const std::vector<uint8_t> a = snapshot_with(kg, 1, short_value);
      Status st = dst.restore_key_group(a.data(), a.size());
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
      EXPECT_NE(st.message().find("value that does not decode"), std::string::npos) << st.to_string();
      const std::vector<uint8_t> b = snapshot_with(kg, 2, foreign_key);
      st = dst.restore_key_group(b.data(), b.size());
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.to_string();
      EXPECT_NE(st.message().find("has a key of key group " + std::to_string(group_of(foreign).value())),
                std::string::npos)
          << st.to_string();
      dst.set_current_key(key);
      EXPECT_EQ(v->value(), -1);  // nothing changed
    } else {
      const std::vector<uint8_t> b = snapshot_with(kg, 2, foreign_key);
      ASSERT_TRUE(dst.restore_key_group(b.data(), b.size()).is_ok());  // kept as bytes until registered
      EXPECT_THROW(dst.get_state(ValueStateDescriptor<int64_t>("v")), StatusError);
    }
  }
}

}  // namespace
}  // namespace sluice
