// The heap snapshot's entry encoding (state_table.h: encode_entries, FixedEncoding, append_framed) writes
// exactly the bytes of the canonical format: TypeSerializer bytes framed by KeyGroupSnapshotWriter::append_entry.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sluice/state/heap/state_table.h"

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

struct Window {
  int64_t start = 0;
  bool operator==(const Window&) const = default;
  SLUICE_FIELDS(Window, start)
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
  expect_same_bytes<int32_t, Window, Nested>(
      300, [](int i) { return i; }, [](int i) { return Window{i % 5}; },
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

}  // namespace
}  // namespace sluice
