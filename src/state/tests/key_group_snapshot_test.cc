#include "sluice/state/key_group_snapshot.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

StateMetaInfo meta(std::string name, StateKind kind = StateKind::kValue) {
  return StateMetaInfo{std::move(name), kind, TypeSerializer<VoidNamespace>::snapshot(),
                       {TypeSerializer<int64_t>::snapshot()}};
}

std::vector<uint8_t> sample_snapshot() {
  std::vector<uint8_t> out;
  KeyGroupSnapshotWriter w(&out, 128, KeyGroup(7), TypeSerializer<std::string>::snapshot(), 2);
  std::vector<uint8_t> e1, e2;
  KeyGroupSnapshotWriter::append_entry(e1, "k1", "", "v1");
  KeyGroupSnapshotWriter::append_entry(e1, "k2", "", "v22");
  w.add_state(meta("a"), 2, e1);
  w.add_state(meta("b", StateKind::kList), 0, e2);
  w.finish();
  return out;
}

TEST(KeyGroupSnapshot, RoundTrip) {
  std::vector<uint8_t> bytes = sample_snapshot();
  auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
  ASSERT_TRUE(view.is_ok()) << view.status().to_string();
  EXPECT_EQ(view->max_parallelism, 128);
  EXPECT_EQ(view->key_group, KeyGroup(7));
  EXPECT_EQ(view->key_serializer, TypeSerializer<std::string>::snapshot());
  ASSERT_EQ(view->states.size(), 2u);
  EXPECT_EQ(view->states[0].meta, meta("a"));
  EXPECT_EQ(view->states[1].meta, meta("b", StateKind::kList));
  EXPECT_EQ(view->states[0].entry_count, 2u);

  SnapshotEntryReader r(view->states[0]);
  std::string_view k, n, v;
  ASSERT_TRUE(r.next(&k, &n, &v));
  EXPECT_EQ(k, "k1");
  EXPECT_EQ(n, "");
  EXPECT_EQ(v, "v1");
  ASSERT_TRUE(r.next(&k, &n, &v));
  EXPECT_EQ(v, "v22");
  EXPECT_FALSE(r.next(&k, &n, &v));
  EXPECT_TRUE(r.ok());

  auto header = peek_key_group_snapshot(bytes.data(), bytes.size());
  ASSERT_TRUE(header.is_ok());
  EXPECT_EQ(header->key_group, KeyGroup(7));
  EXPECT_EQ(header->max_parallelism, 128);
}

TEST(KeyGroupSnapshot, EveryTruncationFails) {
  std::vector<uint8_t> bytes = sample_snapshot();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto view = parse_key_group_snapshot(bytes.data(), n);
    ASSERT_FALSE(view.is_ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(view.status().code(), StatusCode::kCorruption);
  }
}

TEST(KeyGroupSnapshot, EveryBitFlipFails) {
  const std::vector<uint8_t> good = sample_snapshot();
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= static_cast<uint8_t>(1u << bit);
      auto view = parse_key_group_snapshot(bad.data(), bad.size());
      ASSERT_FALSE(view.is_ok()) << "flip of bit " << bit << " of byte " << i << " went unnoticed";
      EXPECT_EQ(view.status().code(), StatusCode::kCorruption);
    }
  }
}

TEST(KeyGroupSnapshot, BadMagicNamesTheProblem) {
  std::vector<uint8_t> bytes = sample_snapshot();
  bytes[0] = 'X';
  auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
  ASSERT_FALSE(view.is_ok());
  EXPECT_NE(view.status().message().find("magic"), std::string::npos);
}

TEST(KeyGroupSnapshot, StatesMustBeSorted) {
  std::vector<uint8_t> out;
  KeyGroupSnapshotWriter w(&out, 128, KeyGroup(1), TypeSerializer<int64_t>::snapshot(), 2);
  w.add_state(meta("b"), 0, {});
  w.add_state(meta("a"), 0, {});
  w.finish();
  auto view = parse_key_group_snapshot(out.data(), out.size());
  ASSERT_FALSE(view.is_ok());
  EXPECT_EQ(view.status().code(), StatusCode::kCorruption);
}

TEST(KeyGroupSnapshot, EntryCountMustMatchFraming) {
  std::vector<uint8_t> out;
  KeyGroupSnapshotWriter w(&out, 128, KeyGroup(1), TypeSerializer<int64_t>::snapshot(), 1);
  std::vector<uint8_t> e;
  KeyGroupSnapshotWriter::append_entry(e, "k", "", "v");
  w.add_state(meta("a"), 2, e);  // claims 2, holds 1
  w.finish();
  auto view = parse_key_group_snapshot(out.data(), out.size());
  ASSERT_FALSE(view.is_ok());
  EXPECT_NE(view.status().message().find("state 'a'"), std::string::npos) << view.status().message();
}

TEST(KeyGroupSnapshot, FramingCheckHandlesLongLengthsAndEveryMismatch) {
  // Parts of 0, 127, 128 and 20000 bytes (1-, 2- and 3-byte varint lengths).
  std::vector<uint8_t> e;
  const std::string sizes[] = {"", std::string(127, 'a'), std::string(128, 'b'), std::string(20000, 'c')};
  uint64_t n = 0;
  for (const auto& k : sizes) {
    for (const auto& v : sizes) {
      KeyGroupSnapshotWriter::append_entry(e, k, "", v);
      ++n;
    }
  }
  auto snapshot_of = [&](uint64_t count, const std::vector<uint8_t>& entries) {
    std::vector<uint8_t> out;
    KeyGroupSnapshotWriter w(&out, 128, KeyGroup(1), TypeSerializer<std::string>::snapshot(), 1);
    w.add_state(meta("a"), count, entries);
    w.finish();
    return out;
  };
  std::vector<uint8_t> good = snapshot_of(n, e);
  auto view = parse_key_group_snapshot(good.data(), good.size());
  ASSERT_TRUE(view.is_ok()) << view.status().to_string();
  SnapshotEntryReader reader(view->states.at(0));
  std::string_view k, ns, v;
  uint64_t seen = 0;
  while (reader.next(&k, &ns, &v)) {
    EXPECT_EQ(k.size(), sizes[seen / 4].size());
    EXPECT_EQ(v.size(), sizes[seen % 4].size());
    ++seen;
  }
  EXPECT_EQ(seen, n);
  // One entry too few or too many claimed, a byte missing or extra: never parses.
  for (uint64_t count : {n - 1, n + 1}) {
    std::vector<uint8_t> bad = snapshot_of(count, e);
    EXPECT_FALSE(parse_key_group_snapshot(bad.data(), bad.size()).is_ok()) << count;
  }
  std::vector<uint8_t> shorter(e.begin(), e.end() - 1), longer = e;
  longer.push_back(0);
  for (const auto* entries : {&shorter, &longer}) {
    std::vector<uint8_t> bad = snapshot_of(n, *entries);
    EXPECT_FALSE(parse_key_group_snapshot(bad.data(), bad.size()).is_ok());
  }
}

TEST(StateCompatibility, MismatchNamesStateAndTypes) {
  EXPECT_TRUE(check_state_compatible(meta("s"), meta("s")).is_ok());
  Status s = check_state_compatible(meta("s"), meta("s", StateKind::kList));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("state 's'"), std::string::npos);
  EXPECT_NE(s.message().find("ValueState<i64>"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ListState<i64>"), std::string::npos) << s.message();

  StateMetaInfo other_value = meta("s");
  other_value.value_serializers = {TypeSerializer<std::string>::snapshot()};
  EXPECT_FALSE(check_state_compatible(meta("s"), other_value).is_ok());
  StateMetaInfo other_ns = meta("s");
  other_ns.namespace_serializer = TypeSerializer<int64_t>::snapshot();
  Status ns = check_state_compatible(meta("s"), other_ns);
  ASSERT_FALSE(ns.is_ok());
  EXPECT_NE(ns.message().find("in namespace i64"), std::string::npos) << ns.message();
}

}  // namespace
}  // namespace sluice
