#include "sluice/state/key_group_snapshot.h"

#include <cstring>

#include "sluice/state/key_group.h"
#include "sluice/state/state_schema.h"

namespace sluice {
namespace {

constexpr char kMagic[4] = {'S', 'L', 'K', 'G'};
constexpr size_t kChecksumBytes = 8;

std::string join_snapshots(const std::vector<TypeSerializerSnapshot>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += v[i].to_string();
  }
  return s;
}

// Whether `size` bytes are exactly `count` entries of three length-prefixed strings (what SnapshotEntryReader
// reads), checked without decoding them. One pass over every entry of a restore: lengths below 128 (one
// varint byte, nearly all of them) take the short path.
bool frames_exactly(const uint8_t* p, size_t size, uint64_t count) {
  const uint8_t* const end = p + size;
  for (uint64_t i = 0; i < count; ++i) {
    for (int part = 0; part < 3; ++part) {
      if (p == end) return false;
      uint64_t len;
      if (*p < 0x80) [[likely]] {
        len = *p++;
      } else {
        DataInputView in(p, static_cast<size_t>(end - p));
        len = in.read_varint();
        if (!in.ok()) return false;
        p = in.current();
      }
      if (len > static_cast<uint64_t>(end - p)) return false;
      p += len;
    }
  }
  return p == end;
}

}  // namespace

std::string StateMetaInfo::type_description() const {
  std::string s(state_kind_name(kind));
  s += "<" + join_snapshots(value_serializers) + ">";
  if (namespace_serializer != TypeSerializer<VoidNamespace>::snapshot()) {
    s += " in namespace " + namespace_serializer.to_string();
  }
  return s;
}

Status check_state_compatible(const StateMetaInfo& restored, const StateMetaInfo& registered) {
  bool same = restored.kind == registered.kind && same_schema(restored.namespace_serializer, registered.namespace_serializer) &&
              restored.value_serializers.size() == registered.value_serializers.size();
  for (size_t i = 0; same && i < restored.value_serializers.size(); ++i) {
    same = same_schema(restored.value_serializers[i], registered.value_serializers[i]);
  }
  if (same) return Status::ok();
  SLUICE_RETURN_IF_ERROR(check_state_migratable(restored, registered));
  return Status::invalid_argument("state '" + registered.name + "': restored as " + restored.type_description() +
                                  " but registered as " + registered.type_description() +
                                  " (this restore path needs the serializers compatible as is)");
}

KeyGroupSnapshotWriter::KeyGroupSnapshotWriter(std::vector<uint8_t>* out, int32_t max_parallelism,
                                               KeyGroup key_group, const TypeSerializerSnapshot& key_serializer,
                                               uint64_t state_count)
    : out_(out), begin_(out->size()), expected_states_(state_count) {
  DataOutputView o(out_);
  o.write_bytes(kMagic, sizeof(kMagic));
  o.write_varint(kKeyGroupSnapshotFormatVersion);
  o.write_varint(static_cast<uint64_t>(max_parallelism));
  o.write_varint(static_cast<uint64_t>(key_group.value()));
  key_serializer.write(o);
  o.write_varint(state_count);
}

void KeyGroupSnapshotWriter::add_state(const StateMetaInfo& meta, uint64_t entry_count, const uint8_t* entries,
                                       size_t entries_size_bytes) {
  assert(added_states_ < expected_states_);
  ++added_states_;
  DataOutputView o(out_);
  o.write_string(meta.name);
  o.write_u8(static_cast<uint8_t>(meta.kind));
  meta.namespace_serializer.write(o);
  o.write_varint(meta.value_serializers.size());
  for (const auto& s : meta.value_serializers) s.write(o);
  o.write_varint(entry_count);
  o.write_varint(entries_size_bytes);
  o.write_bytes(entries, entries_size_bytes);
}

void KeyGroupSnapshotWriter::finish() {
  assert(added_states_ == expected_states_);
  uint64_t sum = hash_key_bytes(out_->data() + begin_, out_->size() - begin_);
  DataOutputView(out_).write_fixed<uint64_t>(sum);
}

void KeyGroupSnapshotWriter::append_entry(std::vector<uint8_t>& entries, std::string_view key_bytes,
                                          std::string_view ns_bytes, std::string_view value_bytes) {
  DataOutputView o(&entries);
  o.write_string(key_bytes);
  o.write_string(ns_bytes);
  o.write_string(value_bytes);
}

bool SnapshotEntryReader::next(std::string_view* key_bytes, std::string_view* ns_bytes,
                               std::string_view* value_bytes) {
  if (left_ == 0 || !in_.ok()) return false;
  --left_;
  *key_bytes = in_.read_bytes(in_.read_varint());
  *ns_bytes = in_.read_bytes(in_.read_varint());
  *value_bytes = in_.read_bytes(in_.read_varint());
  return in_.ok();
}

Result<KeyGroupSnapshotHeader> peek_key_group_snapshot(const uint8_t* data, size_t size) {
  if (size < sizeof(kMagic) + kChecksumBytes || std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
    return Status::corruption("key-group snapshot (" + std::to_string(size) + " bytes): bad magic or too short");
  }
  DataInputView in(data + sizeof(kMagic), size - sizeof(kMagic) - kChecksumBytes);
  uint64_t version = in.read_varint();
  uint64_t max_p = in.read_varint();
  uint64_t kg = in.read_varint();
  if (!in.ok() || version != kKeyGroupSnapshotFormatVersion || max_p < 1 ||
      max_p > static_cast<uint64_t>(kUpperBoundMaxParallelism) || kg >= max_p) {
    return Status::corruption("key-group snapshot (" + std::to_string(size) + " bytes): malformed header");
  }
  return KeyGroupSnapshotHeader{static_cast<int32_t>(max_p), KeyGroup(static_cast<int32_t>(kg))};
}

Result<KeyGroupSnapshotView> parse_key_group_snapshot(const uint8_t* data, size_t size) {
  const std::string what = "key-group snapshot (" + std::to_string(size) + " bytes)";
  if (size < sizeof(kMagic) + kChecksumBytes) return Status::corruption(what + ": too short");
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0) {
    return Status::corruption(what + ": bad magic, expected 'SLKG' (not a key-group snapshot)");
  }
  const size_t body = size - kChecksumBytes;
  uint64_t stored_sum;
  std::memcpy(&stored_sum, data + body, kChecksumBytes);
  if (stored_sum != hash_key_bytes(data, body)) {
    return Status::corruption(what + ": checksum mismatch (truncated or damaged bytes)");
  }

  DataInputView in(data + sizeof(kMagic), body - sizeof(kMagic));
  KeyGroupSnapshotView view;
  uint64_t version = in.read_varint();
  if (in.ok() && version != kKeyGroupSnapshotFormatVersion) {
    return Status::corruption(what + ": format version " + std::to_string(version) + ", this build reads " +
                              std::to_string(kKeyGroupSnapshotFormatVersion));
  }
  uint64_t max_p = in.read_varint();
  uint64_t kg = in.read_varint();
  if (in.ok() && (max_p < 1 || max_p > static_cast<uint64_t>(kUpperBoundMaxParallelism) || kg >= max_p)) {
    return Status::corruption(what + ": key group " + std::to_string(kg) + " with max parallelism " +
                              std::to_string(max_p) + " is out of bounds");
  }
  view.max_parallelism = static_cast<int32_t>(max_p);
  view.key_group = KeyGroup(static_cast<int32_t>(kg));
  view.key_serializer = TypeSerializerSnapshot::read(in);
  uint64_t state_count = in.read_varint();
  if (!in.ok() || state_count > in.remaining()) return Status::corruption(what + ": malformed header");

  for (uint64_t i = 0; i < state_count; ++i) {
    StateSnapshotView st;
    st.meta.name = in.read_string();
    uint8_t kind = in.read_u8();
    const std::string where = what + ", state '" + st.meta.name + "'";
    if (in.ok() && !is_valid_state_kind(kind)) {
      return Status::corruption(where + ": unknown state kind " + std::to_string(kind));
    }
    st.meta.kind = static_cast<StateKind>(kind);
    st.meta.namespace_serializer = TypeSerializerSnapshot::read(in);
    uint64_t n = in.read_varint();
    if (n > in.remaining()) in.fail();
    for (uint64_t j = 0; j < n && in.ok(); ++j) st.meta.value_serializers.push_back(TypeSerializerSnapshot::read(in));
    st.entry_count = in.read_varint();
    uint64_t len = in.read_varint();
    if (!in.ok() || len > in.remaining()) return Status::corruption(where + ": truncated state header");
    st.entries = in.current();
    st.entries_size_bytes = static_cast<size_t>(len);
    (void)in.read_bytes(st.entries_size_bytes);

    // Validate the framing now, so later typed decoding only has to check the values themselves.
    if (!frames_exactly(st.entries, st.entries_size_bytes, st.entry_count)) {
      return Status::corruption(where + ": entries do not frame as " + std::to_string(st.entry_count) +
                                " (key, namespace, value) triples");
    }
    view.states.push_back(std::move(st));
  }
  if (!in.ok()) return Status::corruption(what + ": truncated");
  if (!in.at_end()) return Status::corruption(what + ": " + std::to_string(in.remaining()) + " trailing bytes");
  for (size_t i = 1; i < view.states.size(); ++i) {
    if (!(view.states[i - 1].meta.name < view.states[i].meta.name)) {
      return Status::corruption(what + ": states not in strictly increasing name order at '" +
                                view.states[i].meta.name + "'");
    }
  }
  return view;
}

}  // namespace sluice
