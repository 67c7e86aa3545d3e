// State schema evolution: resolution of old serializer snapshots against the current types and decoding of the
// old bytes (core/serializer_compatibility.h). Versions of one struct live in namespaces v1, v2, ... so they
// share the struct name, as one program's struct does across releases.
#include "sluice/core/serializer_compatibility.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <new>
#include <unordered_map>

namespace sluice {
namespace {

namespace v1 {
struct Inner {
  int32_t a = 0;
  SLUICE_FIELDS(Inner, a)
};
struct Trade {
  std::string symbol;
  int64_t qty = 0;
  double price = 0;
  std::vector<Inner> legs;
  SLUICE_FIELDS(Trade, symbol, qty, price, legs)
};
struct Custom {
  uint32_t x = 0;
  static constexpr const char* sluice_type_name = "Custom";
  static constexpr uint32_t sluice_version = 1;
  void serialize(DataOutputView& out) const { out.write_fixed<uint32_t>(x); }
  static Custom deserialize(DataInputView& in) { return Custom{in.read_fixed<uint32_t>()}; }
};
}  // namespace v1

namespace v2 {  // a field added with a default, nested struct gains a field too
struct Inner {
  int32_t a = 0;
  std::string b = "b-default";
  SLUICE_FIELDS(Inner, a, b)
};
struct Trade {
  std::string symbol;
  int64_t qty = 0;
  double price = 0;
  std::vector<Inner> legs;
  std::string note = "none";
  static constexpr uint32_t sluice_version = 2;
  SLUICE_FIELDS(Trade, symbol, qty, price, legs, note)
};
// Hand-written serializer at version 2 with a migration hook; CustomNoHook without one.
struct Custom {
  uint64_t x = 0;
  static constexpr const char* sluice_type_name = "Custom";
  static constexpr uint32_t sluice_version = 2;
  void serialize(DataOutputView& out) const { out.write_fixed<uint64_t>(x); }
  static Custom deserialize(DataInputView& in) { return Custom{in.read_fixed<uint64_t>()}; }
  static Custom deserialize_version(DataInputView& in, uint32_t old_version) {
    if (old_version == 1) return Custom{in.read_fixed<uint32_t>() + 1000u};
    in.fail();
    return {};
  }
};
}  // namespace v2

namespace v3 {  // reordered, `qty` removed, `legs` of another element type kept
struct Trade {
  double price = 0;
  std::vector<v1::Inner> legs;
  std::string symbol;
  SLUICE_FIELDS(Trade, price, legs, symbol)
};
struct Custom {  // version 2, no hook
  uint64_t x = 0;
  static constexpr const char* sluice_type_name = "Custom";
  static constexpr uint32_t sluice_version = 2;
  void serialize(DataOutputView& out) const { out.write_fixed<uint64_t>(x); }
  static Custom deserialize(DataInputView& in) { return Custom{in.read_fixed<uint64_t>()}; }
};
}  // namespace v3

namespace v4 {  // qty changed type
struct Trade {
  std::string symbol;
  double qty = 0;
  double price = 0;
  std::vector<v1::Inner> legs;
  SLUICE_FIELDS(Trade, symbol, qty, price, legs)
};
}  // namespace v4

v1::Trade sample() { return v1::Trade{"ACME", 42, 9.5, {v1::Inner{1}, v1::Inner{2}}}; }

template <class T>
T migrate(const TypeSerializerSnapshot& old, const std::vector<uint8_t>& bytes, SchemaCompatibility* c = nullptr) {
  SchemaMigrationPlan plan;
  SchemaCompatibility r = resolve_schema<T>(old, plan);
  if (c != nullptr) *c = r;
  EXPECT_FALSE(r.is_incompatible()) << r.reason;
  DataInputView in(bytes.data(), bytes.size());
  T v = read_migrated<T>(plan, in);
  EXPECT_TRUE(in.ok() && in.at_end());
  return v;
}

TypeSerializerSnapshot without_names(TypeSerializerSnapshot s) {
  s.field_names.reset();
  for (auto& n : s.nested) n = without_names(std::move(n));
  return s;
}

TEST(SerializerCompatibility, StructSnapshotsRecordFieldNamesAndRoundTrip) {
  const TypeSerializerSnapshot s = TypeSerializer<v2::Trade>::snapshot();
  ASSERT_TRUE(s.field_names.has_value());
  EXPECT_EQ(*s.field_names, (std::vector<std::string>{"symbol", "qty", "price", "legs", "note"}));
  EXPECT_EQ(*s.nested[3].nested[0].field_names, (std::vector<std::string>{"a", "b"}));
  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  s.write(out);
  DataInputView in(buf.data(), buf.size());
  EXPECT_EQ(TypeSerializerSnapshot::read(in), s);
  EXPECT_TRUE(in.ok() && in.at_end());
}

TEST(SerializerCompatibility, SnapshotsWithoutNamesKeepTheirOldBytes) {
  // string "i64", version 1, no nested: what every build wrote and must keep reading.
  const std::vector<uint8_t> old_bytes = {3, 'i', '6', '4', 1, 0};
  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  TypeSerializer<int64_t>::snapshot().write(out);
  EXPECT_EQ(buf, old_bytes);
  const TypeSerializerSnapshot named = TypeSerializer<v1::Trade>::snapshot();
  buf.clear();
  without_names(named).write(out);
  DataInputView in(buf.data(), buf.size());
  const TypeSerializerSnapshot read = TypeSerializerSnapshot::read(in);
  EXPECT_FALSE(read.field_names.has_value());
  EXPECT_TRUE(same_schema(read, named));  // a nameless old snapshot is the same schema
}

TEST(SerializerCompatibility, IdenticalSchemasAreCompatibleAsIs) {
  SchemaMigrationPlan plan;
  EXPECT_TRUE(resolve_schema<v1::Trade>(TypeSerializer<v1::Trade>::snapshot(), plan).is_as_is());
  EXPECT_TRUE(plan.as_is);
  EXPECT_TRUE(resolve_schema<v1::Trade>(without_names(TypeSerializer<v1::Trade>::snapshot()), plan).is_as_is());
  EXPECT_TRUE(resolve_schema<std::vector<int64_t>>(TypeSerializer<std::vector<int64_t>>::snapshot(), plan).is_as_is());
  // std::map and std::unordered_map write the same bytes.
  EXPECT_TRUE((resolve_schema<std::unordered_map<int64_t, std::string>>(
                   TypeSerializer<std::map<int64_t, std::string>>::snapshot(), plan)
                   .is_as_is()));
}

TEST(SerializerCompatibility, AddedFieldsMigrateWithTheirDefaults) {
  SchemaCompatibility c;
  const v2::Trade t = migrate<v2::Trade>(TypeSerializer<v1::Trade>::snapshot(), serialize_bytes(sample()), &c);
  EXPECT_EQ(c.kind, SchemaCompatibilityKind::kCompatibleAfterMigration);
  EXPECT_NE(c.reason.find("field 'note' added"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("field 'b' added"), std::string::npos) << c.reason;
  EXPECT_EQ(t.symbol, "ACME");
  EXPECT_EQ(t.qty, 42);
  EXPECT_EQ(t.price, 9.5);
  ASSERT_EQ(t.legs.size(), 2u);
  EXPECT_EQ(t.legs[1].a, 2);
  EXPECT_EQ(t.legs[1].b, "b-default");
  EXPECT_EQ(t.note, "none");
}

TEST(SerializerCompatibility, RemovedAndReorderedFieldsMigrate) {
  SchemaCompatibility c;
  const v3::Trade t = migrate<v3::Trade>(TypeSerializer<v1::Trade>::snapshot(), serialize_bytes(sample()), &c);
  EXPECT_EQ(c.kind, SchemaCompatibilityKind::kCompatibleAfterMigration);
  EXPECT_NE(c.reason.find("field 'qty' removed"), std::string::npos) << c.reason;
  EXPECT_EQ(t.symbol, "ACME");
  EXPECT_EQ(t.price, 9.5);
  ASSERT_EQ(t.legs.size(), 2u);
  EXPECT_EQ(t.legs[0].a, 1);
  // And back: v3 -> v1 adds qty (default 0), reorders the rest.
  const v1::Trade back = migrate<v1::Trade>(TypeSerializer<v3::Trade>::snapshot(), serialize_bytes(t));
  EXPECT_EQ(back.symbol, "ACME");
  EXPECT_EQ(back.qty, 0);
  EXPECT_EQ(back.price, 9.5);
}

TEST(SerializerCompatibility, AChangedFieldTypeIsIncompatibleNamingTheField) {
  SchemaMigrationPlan plan;
  SchemaCompatibility c = resolve_schema<v4::Trade>(TypeSerializer<v1::Trade>::snapshot(), plan);
  EXPECT_TRUE(c.is_incompatible());
  EXPECT_NE(c.reason.find("field 'qty': restored as i64, registered as f64"), std::string::npos) << c.reason;
  // Nested: the path names both fields.
  c = resolve_schema<std::vector<v4::Trade>>(TypeSerializer<std::vector<v1::Trade>>::snapshot(), plan);
  EXPECT_TRUE(c.is_incompatible());
  c = resolve_schema<int32_t>(TypeSerializer<int64_t>::snapshot(), plan);
  EXPECT_EQ(c.reason, "restored as i64, registered as i32");
}

TEST(SerializerCompatibility, NamelessSnapshotsMigrateOnlyAppendedFields) {
  // v1 written before names were recorded: v2 appended `note` (and Inner appended `b`): positional migration.
  const v2::Trade t = migrate<v2::Trade>(without_names(TypeSerializer<v1::Trade>::snapshot()), serialize_bytes(sample()));
  EXPECT_EQ(t.qty, 42);
  EXPECT_EQ(t.note, "none");
  EXPECT_EQ(t.legs[0].b, "b-default");
  // v3 dropped and reordered fields: without names that cannot be matched.
  SchemaMigrationPlan plan;
  SchemaCompatibility c = resolve_schema<v3::Trade>(without_names(TypeSerializer<v1::Trade>::snapshot()), plan);
  EXPECT_TRUE(c.is_incompatible()) << c.reason;
}

TEST(SerializerCompatibility, HandWrittenSerializersMigrateOnlyThroughTheirHook) {
  const std::vector<uint8_t> bytes = serialize_bytes(v1::Custom{5});
  SchemaCompatibility c;
  const v2::Custom m = migrate<v2::Custom>(TypeSerializer<v1::Custom>::snapshot(), bytes, &c);
  EXPECT_EQ(c.kind, SchemaCompatibilityKind::kCompatibleAfterMigration);
  EXPECT_EQ(m.x, 1005u);
  SchemaMigrationPlan plan;
  c = resolve_schema<v3::Custom>(TypeSerializer<v1::Custom>::snapshot(), plan);
  EXPECT_TRUE(c.is_incompatible());
  EXPECT_NE(c.reason.find("deserialize_version"), std::string::npos) << c.reason;
}

struct WithCustom {
  int32_t a = 0;
  v1::Custom c;
  SLUICE_FIELDS(WithCustom, a, c)
};
struct OnlyA {
  int32_t a = 0;
  SLUICE_FIELDS(OnlyA, a)
};

TEST(SerializerCompatibility, ARemovedFieldOfAHandWrittenTypeCannotBeSkipped) {
  TypeSerializerSnapshot old = TypeSerializer<WithCustom>::snapshot();
  old.type_name = "OnlyA";
  SchemaMigrationPlan plan;
  SchemaCompatibility c = resolve_schema<OnlyA>(old, plan);
  EXPECT_TRUE(c.is_incompatible());
  EXPECT_NE(c.reason.find("field 'c'"), std::string::npos) << c.reason;
}

TEST(SerializerCompatibility, SkipStepsOverEveryBuiltInLayout) {
  using Big = std::tuple<std::map<std::string, std::vector<int16_t>>, std::optional<std::pair<bool, double>>,
                         std::array<uint8_t, 3>, v2::Trade>;
  Big v{{{"a", {1, 2}}, {"b", {}}}, std::pair<bool, double>{true, 2.5}, {1, 2, 3}, v2::Trade{}};
  std::vector<uint8_t> bytes = serialize_bytes(v);
  bytes.push_back(0x7f);  // one byte after the value
  const TypeSerializerSnapshot s = TypeSerializer<Big>::snapshot();
  ASSERT_TRUE(can_skip(s));
  DataInputView in(bytes.data(), bytes.size());
  skip_serialized(s, in);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in.remaining(), 1u);
  EXPECT_FALSE(can_skip(TypeSerializer<v1::Custom>::snapshot()));
}

// Counts the bytes every vector using it allocated, and refuses past 512 MiB.
template <class T>
struct BoundedAllocator {
  using value_type = T;
  static inline size_t allocated_bytes = 0;
  BoundedAllocator() = default;
  template <class U>
  BoundedAllocator(const BoundedAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) {
    allocated_bytes += n * sizeof(T);
    if (allocated_bytes > (size_t{512} << 20)) throw std::bad_alloc();
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const BoundedAllocator<U>&) const { return true; }
};

// An old snapshot that says Trade had no fields makes every element take no bytes, so a count of 2^24 passed as
// zero-size elements, and 2^24 migrated Trades were built from a few bytes: gigabytes (found by
// fuzz/serializer_fuzzer: 2.3 GB from 40 bytes). Elements of no bytes are now bounded by their memory (64 MiB
// per input).
TEST(SerializerCompatibility, MigratedElementsOfNoBytesCannotTakeGigabytes) {
  using Trades = std::vector<v2::Trade, BoundedAllocator<v2::Trade>>;
  const TypeSerializerSnapshot fieldless{"Trade", 1, {}, std::vector<std::string>{}};
  const TypeSerializerSnapshot old{"vector", 1, {fieldless}};
  SchemaMigrationPlan plan;
  ASSERT_FALSE(resolve_schema<Trades>(old, plan).is_incompatible());
  std::vector<uint8_t> bytes;
  DataOutputView out(&bytes);
  out.write_varint(uint64_t{1} << 24);
  BoundedAllocator<v2::Trade>::allocated_bytes = 0;
  DataInputView in(bytes.data(), bytes.size());
  (void)read_migrated<Trades>(plan, in);
  EXPECT_FALSE(in.ok());

  // A few such elements are fine: each is a default Trade.
  std::vector<uint8_t> three;
  DataOutputView(&three).write_varint(3);
  DataInputView small(three.data(), three.size());
  Trades defaults = read_migrated<Trades>(plan, small);
  EXPECT_TRUE(small.ok() && small.at_end());
  EXPECT_EQ(defaults.size(), 3u);
}

// Each count of zero-size elements fits its container's bound, but nested containers multiply them: 4096 vectors of
// 2^24 void namespaces are 64 GiB from 16 KB. Elements of no bytes are bounded per input, however they nest, and
// counted at 64 bytes at least: a million of them at most (each also costs time to decode).
TEST(SerializerCompatibility, NestedElementsOfNoBytesAreBoundedInAll) {
  using Inner = std::vector<VoidNamespace, BoundedAllocator<VoidNamespace>>;
  std::vector<uint8_t> bytes;
  DataOutputView out(&bytes);
  out.write_varint(4096);
  for (int i = 0; i < 4096; ++i) out.write_varint(uint64_t{1} << 24);
  BoundedAllocator<VoidNamespace>::allocated_bytes = 0;
  auto r = deserialize_bytes<std::vector<Inner>>(bytes.data(), bytes.size(), "list state value");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);

  // Within the bound a value may hold a million of them.
  std::vector<uint8_t> one;
  DataOutputView(&one).write_varint(uint64_t{1} << 20);
  auto whole = deserialize_bytes<Inner>(one.data(), one.size());
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  EXPECT_EQ(whole->size(), size_t{1} << 20);
  std::vector<uint8_t> more;
  DataOutputView(&more).write_varint((uint64_t{1} << 20) + 1);
  EXPECT_FALSE(deserialize_bytes<Inner>(more.data(), more.size()).is_ok());
}

// A damaged snapshot may claim 2^40 elements of a type that takes no bytes (here void namespaces): stepping over
// them one by one took hours. They are known to take no bytes after the first.
TEST(SerializerCompatibility, SkipIsQuickOverAnyCountOfZeroSizeElements) {
  const TypeSerializerSnapshot void_ns = TypeSerializer<VoidNamespace>::snapshot();
  const TypeSerializerSnapshot array{"array1099511627776", 1, {void_ns}};
  const TypeSerializerSnapshot empty_tuple{"tuple", 1, {}};
  const TypeSerializerSnapshot map{"map", 1, {empty_tuple, void_ns}};
  ASSERT_TRUE(can_skip(array));
  ASSERT_TRUE(can_skip(map));
  const std::vector<uint8_t> none;
  DataInputView nothing(none.data(), 0);
  skip_serialized(array, nothing);
  EXPECT_TRUE(nothing.ok() && nothing.at_end());

  std::vector<uint8_t> bytes;
  DataOutputView out(&bytes);
  out.write_varint(uint64_t{1} << 24);  // 2^24 entries of nothing, then one byte that follows the value
  out.write_u8(0x7f);
  DataInputView in(bytes.data(), bytes.size());
  skip_serialized(map, in);
  EXPECT_TRUE(in.ok());
  EXPECT_EQ(in.remaining(), 1u);
}

// Each level of a snapshot is a recursive call: 200,000 levels of "vector<vector<...>>" (800 KB) overflowed the stack.
// Past 64 levels the bytes are refused as malformed.
TEST(SerializerCompatibility, DeeplyNestedSnapshotsAreMalformedNotAStackOverflow) {
  auto nested = [](int levels) {
    std::vector<uint8_t> bytes;
    DataOutputView out(&bytes);
    for (int i = 0; i < levels; ++i) {
      out.write_string("vector");
      out.write_varint(1);                       // version
      out.write_varint(i + 1 < levels ? 1 : 0);  // one nested snapshot, but the last
    }
    return bytes;
  };
  const std::vector<uint8_t> deep = nested(200'000);
  DataInputView in(deep.data(), deep.size());
  (void)TypeSerializerSnapshot::read(in);
  EXPECT_FALSE(in.ok());

  const std::vector<uint8_t> fine = nested(64);
  DataInputView ok(fine.data(), fine.size());
  const TypeSerializerSnapshot s = TypeSerializerSnapshot::read(ok);
  EXPECT_TRUE(ok.ok() && ok.at_end());
  EXPECT_EQ(s.nested.size(), 1u);
}

}  // namespace
}  // namespace sluice
