#include "sluice/core/serializer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

namespace sluice {
namespace {

struct Trade {
  std::string symbol;
  int64_t qty = 0;
  double price = 0;
  std::optional<std::vector<int32_t>> tags;
  bool operator==(const Trade&) const = default;
  SLUICE_FIELDS(Trade, symbol, qty, price, tags)
};

struct Versioned {
  int32_t a = 0;
  static constexpr uint32_t sluice_version = 3;
  SLUICE_FIELDS(Versioned, a)
};

struct Custom {
  uint32_t x = 0;
  static constexpr const char* sluice_type_name = "Custom";
  static constexpr uint32_t sluice_version = 2;
  void serialize(DataOutputView& out) const { out.write_varint(x); }
  static Custom deserialize(DataInputView& in) { return Custom{static_cast<uint32_t>(in.read_varint())}; }
  bool operator==(const Custom&) const = default;
};

template <class T>
T round_trip(const T& v) {
  auto bytes = serialize_bytes(v);
  auto r = deserialize_bytes<T>(bytes.data(), bytes.size());
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : T{};
}

TEST(Serializer, PrimitivesRoundTrip) {
  EXPECT_EQ(round_trip<int64_t>(-42), -42);
  EXPECT_EQ(round_trip<uint64_t>(~0ull), ~0ull);
  EXPECT_EQ(round_trip<int8_t>(-3), -3);
  EXPECT_DOUBLE_EQ(round_trip<double>(3.25), 3.25);
  EXPECT_EQ(round_trip<bool>(true), true);
  EXPECT_EQ(round_trip<char>('z'), 'z');
  EXPECT_EQ(round_trip<long long>(-7LL), -7LL);
}

TEST(Serializer, ContainersRoundTrip) {
  std::map<std::string, std::vector<int32_t>> m{{"a", {1, 2}}, {"", {}}, {"long key", {7}}};
  EXPECT_EQ(round_trip(m), m);
  std::unordered_map<int32_t, std::string> um{{1, "x"}, {2, "yy"}};
  EXPECT_EQ(round_trip(um), um);
  std::tuple<int32_t, std::string, double> t{5, "five", 5.5};
  EXPECT_EQ(round_trip(t), t);
  std::pair<std::string, int64_t> p{"k", 9};
  EXPECT_EQ(round_trip(p), p);
  std::optional<std::string> none;
  EXPECT_EQ(round_trip(none), none);
  std::array<uint16_t, 3> arr{1, 2, 3};
  EXPECT_EQ(round_trip(arr), arr);
}

TEST(Serializer, UserStructsRoundTrip) {
  Trade t{"ACME", 100, 12.5, std::vector<int32_t>{1, 2}};
  EXPECT_EQ(round_trip(t), t);
  EXPECT_EQ(round_trip(Custom{300}), Custom{300});
}

TEST(Serializer, VariableLengthIsSelfDelimiting) {
  // Concatenated keys must not collide: ("ab","c") vs ("a","bc").
  auto a = serialize_bytes(std::pair<std::string, std::string>{"ab", "c"});
  auto b = serialize_bytes(std::pair<std::string, std::string>{"a", "bc"});
  EXPECT_NE(a, b);
  auto v1 = serialize_bytes(std::vector<std::string>{"a", "b"});
  auto v2 = serialize_bytes(std::vector<std::string>{"ab"});
  EXPECT_NE(v1, v2);
}

TEST(Serializer, SnapshotsNameTypesAndVersions) {
  EXPECT_EQ((TypeSerializer<std::vector<std::pair<std::string, int64_t>>>::snapshot().to_string()),
            "vector<pair<string,i64>>");
  auto s = TypeSerializer<Trade>::snapshot();
  EXPECT_EQ(s.type_name, "Trade");
  EXPECT_EQ(s.version, 1u);
  ASSERT_EQ(s.nested.size(), 4u);
  EXPECT_EQ(s.nested[0].type_name, "string");
  EXPECT_EQ(TypeSerializer<Versioned>::snapshot().version, 3u);
  EXPECT_EQ(TypeSerializer<Custom>::snapshot().to_string(), "Custom@2");

  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  s.write(out);
  DataInputView in(buf.data(), buf.size());
  EXPECT_EQ(TypeSerializerSnapshot::read(in), s);
  EXPECT_TRUE(in.ok() && in.at_end());
}

TEST(Serializer, TruncatedInputIsCorruptionNotCrash) {
  auto bytes = serialize_bytes(Trade{"ACME", 1, 2.0, std::vector<int32_t>{1, 2, 3}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = deserialize_bytes<Trade>(bytes.data(), n, "trade record");
    ASSERT_FALSE(r.is_ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("trade record"), std::string::npos);
  }
  bytes.push_back(0);
  auto r = deserialize_bytes<Trade>(bytes.data(), bytes.size());
  EXPECT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("trailing"), std::string::npos);
}

TEST(Serializer, HugeLengthPrefixDoesNotAllocate) {
  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  out.write_varint(uint64_t{1} << 40);  // a vector claiming 2^40 elements, with no bytes behind it
  auto r = deserialize_bytes<std::vector<int64_t>>(buf.data(), buf.size());
  EXPECT_FALSE(r.is_ok());
}

// Remembers the largest single allocation any vector using it asked for.
template <class T>
struct RecordingAllocator {
  using value_type = T;
  static inline size_t largest_bytes = 0;
  RecordingAllocator() = default;
  template <class U>
  RecordingAllocator(const RecordingAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) {
    largest_bytes = std::max(largest_bytes, n * sizeof(T));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const RecordingAllocator<U>&) const { return true; }
};

// A count of up to 2^24 elements passes plausible_count whatever the bytes behind it (zero-size elements exist);
// reserving that many elements of a large record type took gigabytes for a few damaged bytes (found by
// fuzz/serializer_fuzzer: 19 bytes asked for 3 GB). The reservation is now bounded by the bytes left.
TEST(Serializer, DamagedCountReservesNoMoreThanTheBytesLeft) {
  using Strings = std::vector<std::string, RecordingAllocator<std::string>>;
  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  out.write_varint(uint64_t{1} << 24);  // 2^24 strings claimed
  out.write_string("only one");
  RecordingAllocator<std::string>::largest_bytes = 0;
  auto r = deserialize_bytes<Strings>(buf.data(), buf.size(), "list state value");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_LE(RecordingAllocator<std::string>::largest_bytes, buf.size() * sizeof(std::string));

  // A valid vector still decodes whole.
  Strings three{"a", "bb", "ccc"};
  auto bytes = serialize_bytes(three);
  auto back = deserialize_bytes<Strings>(bytes.data(), bytes.size());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, three);
}

TEST(Serializer, BadBoolAndOptionalTagsFail) {
  uint8_t two = 2;
  EXPECT_FALSE(deserialize_bytes<bool>(&two, 1).is_ok());
  EXPECT_FALSE(deserialize_bytes<std::optional<int8_t>>(&two, 1).is_ok());
}

}  // namespace
}  // namespace sluice
