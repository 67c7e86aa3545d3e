#include "sluice/core/serializer_compatibility.h"

#include <cstdlib>

namespace sluice {
namespace {

// Fixed sizes of the primitive serializers (serializer.h); 0 = not a fixed-size primitive.
size_t fixed_size_of(std::string_view name) {
  if (name == "i8" || name == "u8" || name == "char" || name == "bool") return 1;
  if (name == "i16" || name == "u16") return 2;
  if (name == "i32" || name == "u32" || name == "f32") return 4;
  if (name == "i64" || name == "u64" || name == "f64") return 8;
  return 0;
}

// N of an "array<N>" snapshot name, or -1.
int64_t array_size_of(std::string_view name) {
  if (name.size() <= 5 || name.substr(0, 5) != "array") return -1;
  int64_t n = 0;
  for (char c : name.substr(5)) {
    if (c < '0' || c > '9' || n > (int64_t{1} << 40)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// Element count of a container snapshot that skip_serialized understands, or -1 for any other name.
int64_t element_snapshots_of(const TypeSerializerSnapshot& s) {
  const std::string_view n = s.type_name;
  if (n == "vector" || n == "optional" || n == "enum" || n == "ttl" || array_size_of(n) >= 0) return 1;
  if (n == "map" || n == "hash-map" || n == "pair") return 2;
  if (n == "tuple") return static_cast<int64_t>(s.nested.size());
  return -1;
}

// Steps over one element; false when it took no bytes. A type serializes to no bytes only when every value of it
// does (void namespaces, empty tuples and structs, arrays of them), so the remaining elements need no stepping
// over - and a damaged snapshot can claim 2^40 of them ("array1099511627776"), which took hours one by one.
bool skip_advances(const TypeSerializerSnapshot& element, DataInputView& in) {
  const size_t before = in.position();
  skip_serialized(element, in);
  return in.position() != before;
}

}  // namespace

std::string_view schema_compatibility_name(SchemaCompatibilityKind kind) {
  switch (kind) {
    case SchemaCompatibilityKind::kCompatibleAsIs: return "compatible as is";
    case SchemaCompatibilityKind::kCompatibleAfterMigration: return "compatible after migration";
    case SchemaCompatibilityKind::kIncompatible: return "incompatible";
  }
  return "unknown";
}

bool same_schema(const TypeSerializerSnapshot& restored, const TypeSerializerSnapshot& current) {
  if (restored.type_name != current.type_name || restored.nested.size() != current.nested.size()) return false;
  const bool named = restored.field_names.has_value() || current.field_names.has_value();
  if (!named && restored.version != current.version) return false;
  if (restored.field_names && current.field_names && *restored.field_names != *current.field_names) return false;
  for (size_t i = 0; i < restored.nested.size(); ++i) {
    if (!same_schema(restored.nested[i], current.nested[i])) return false;
  }
  return true;
}

bool can_skip(const TypeSerializerSnapshot& s) {
  if (fixed_size_of(s.type_name) > 0 || s.type_name == "string" || s.type_name == "void-namespace") {
    return s.nested.empty();
  }
  const int64_t elements = element_snapshots_of(s);
  if (elements < 0 && !s.field_names) return false;  // a hand-written serializer: its layout is unknown
  if (elements >= 0 && static_cast<int64_t>(s.nested.size()) != elements) return false;
  for (const auto& n : s.nested) {
    if (!can_skip(n)) return false;
  }
  return true;
}

void skip_serialized(const TypeSerializerSnapshot& s, DataInputView& in) {
  if (!in.ok()) return;
  if (!can_skip(s)) {
    in.fail();
    return;
  }
  const std::string_view name = s.type_name;
  if (const size_t fixed = fixed_size_of(name); fixed > 0) {
    (void)in.read_bytes(fixed);
  } else if (name == "string") {
    (void)in.read_bytes(in.read_varint());
  } else if (name == "void-namespace") {
  } else if (name == "vector") {
    const uint64_t n = in.read_varint();
    if (!detail::plausible_count(in, n)) return;
    for (uint64_t i = 0; i < n && in.ok(); ++i) {
      if (!skip_advances(s.nested[0], in)) break;
    }
  } else if (const int64_t length = array_size_of(name); length >= 0) {
    for (int64_t i = 0; i < length && in.ok(); ++i) {
      if (!skip_advances(s.nested[0], in)) break;
    }
  } else if (name == "map" || name == "hash-map") {
    const uint64_t n = in.read_varint();
    if (!detail::plausible_count(in, n)) return;
    for (uint64_t i = 0; i < n && in.ok(); ++i) {
      const size_t before = in.position();
      skip_serialized(s.nested[0], in);
      skip_serialized(s.nested[1], in);
      if (in.position() == before) break;  // zero-size entries: see skip_advances
    }
  } else if (name == "optional") {
    const uint8_t tag = in.read_u8();
    if (tag == 1) {
      skip_serialized(s.nested[0], in);
    } else if (tag != 0) {
      in.fail();
    }
  } else if (name == "ttl") {
    (void)in.read_fixed<int64_t>();
    skip_serialized(s.nested[0], in);
  } else {  // enum, pair, tuple, SLUICE_FIELDS structs: the nested values in order
    for (const auto& field : s.nested) skip_serialized(field, in);
  }
}

namespace detail {
SchemaCompatibility schema_mismatch(const TypeSerializerSnapshot& restored, const TypeSerializerSnapshot& current) {
  return SchemaCompatibility::incompatible("restored as " + restored.to_string() + ", registered as " +
                                           current.to_string());
}
}  // namespace detail

}  // namespace sluice
