#include "sluice/core/serializer.h"

namespace sluice {

std::string TypeSerializerSnapshot::to_string() const {
  std::string s = type_name;
  if (!nested.empty()) {
    s += '<';
    for (size_t i = 0; i < nested.size(); ++i) {
      if (i) s += ',';
      s += nested[i].to_string();
    }
    s += '>';
  }
  if (version != 1) s += "@" + std::to_string(version);
  return s;
}

namespace {
// Set in the written version varint when field names follow (a uint32 version never has it).
constexpr uint64_t kFieldNamesFlag = uint64_t{1} << 32;
// Deeper than any type a program declares, shallow enough for any thread's stack: each level is one recursive call
// (here and in what walks a snapshot: same_schema, skip_serialized, to_string), and damaged bytes can claim a level
// per 3 bytes: 800 KB of them overflowed an 8 MB stack.
constexpr int kMaxSnapshotDepth = 64;

TypeSerializerSnapshot read_snapshot(DataInputView& in, int depth) {
  TypeSerializerSnapshot s;
  if (depth > kMaxSnapshotDepth) {
    in.fail();
    return s;
  }
  s.type_name = in.read_string();
  const uint64_t version = in.read_varint();
  if ((version & ~(kFieldNamesFlag | 0xffffffffULL)) != 0) in.fail();
  s.version = static_cast<uint32_t>(version);
  uint64_t n = in.read_varint();
  if (n > in.remaining()) {
    in.fail();
    return s;
  }
  for (uint64_t i = 0; i < n && in.ok(); ++i) s.nested.push_back(read_snapshot(in, depth + 1));
  if (in.ok() && (version & kFieldNamesFlag) != 0) {
    const uint64_t names = in.read_varint();
    if (names != n) {  // one name per field
      in.fail();
      return s;
    }
    s.field_names.emplace();
    for (uint64_t i = 0; i < names && in.ok(); ++i) s.field_names->push_back(in.read_string());
  }
  return s;
}
}  // namespace

void TypeSerializerSnapshot::write(DataOutputView& out) const {
  out.write_string(type_name);
  out.write_varint(field_names ? (version | kFieldNamesFlag) : version);
  out.write_varint(nested.size());
  for (const auto& n : nested) n.write(out);
  if (field_names) {
    out.write_varint(field_names->size());
    for (const auto& name : *field_names) out.write_string(name);
  }
}

TypeSerializerSnapshot TypeSerializerSnapshot::read(DataInputView& in) { return read_snapshot(in, 1); }

namespace detail {
std::vector<std::string> split_field_names(const char* stringified_fields) {
  std::vector<std::string> names;
  std::string current;
  for (const char* p = stringified_fields; ; ++p) {
    if (*p == ',' || *p == '\0') {
      names.push_back(current);
      current.clear();
      if (*p == '\0') break;
    } else if (*p != ' ' && *p != '\t' && *p != '\n') {
      current += *p;
    }
  }
  return names;
}
}  // namespace detail

}  // namespace sluice
