// TypeSerializer<T>: how a value of type T becomes bytes, for network exchanges, state and snapshots.
//
// Provided for: bool, all integer and floating-point types, enums, std::string, std::vector, std::map,
// std::unordered_map, std::optional, std::pair, std::tuple, std::array, VoidNamespace, and user structs.
// Variable-length values are length-prefixed (self-delimiting), so concatenated serialized keys never
// collide ("ab"+"c" vs "a"+"bc").
//
// A user struct becomes serializable by listing its fields:
//
//   struct Trade { std::string symbol; int64_t qty; double price;
//                  SLUICE_FIELDS(Trade, symbol, qty, price) };
//
// The fields are written in the listed order; the serializer snapshot records their names, so restored state
// migrates when fields are added (they get their default member initializer), removed or reordered
// (serializer_compatibility.h says what is compatible). `static constexpr uint32_t sluice_version = 2;` inside
// the struct is recorded too (informational for SLUICE_FIELDS structs: the fields decide). A struct may instead
// define `void serialize(DataOutputView&) const`, `static T deserialize(DataInputView&)`, and the static
// constexpr members `sluice_type_name` (a const char*) and `sluice_version` for full control; a change of its
// sluice_version is then incompatible unless it also defines
// `static T deserialize_version(DataInputView&, uint32_t old_version)` (serializer_compatibility.h).
//
// Every serializer has a TypeSerializerSnapshot (type name + version + nested snapshots, + field names for
// SLUICE_FIELDS structs) written next to state in snapshots, so a later version can detect and migrate a changed
// schema (Flink's TypeSerializerSnapshot idea). Serializers are stateless: all functions are static and
// thread-safe. Deserializing malformed bytes does not throw: the DataInputView's ok() turns false.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sluice/core/data_view.h"
#include "sluice/core/status.h"

namespace sluice {

struct TypeSerializerSnapshot {
  std::string type_name;  // "i64", "string", "vector", or the user struct's name
  uint32_t version = 1;
  std::vector<TypeSerializerSnapshot> nested;  // element / field serializers
  // SLUICE_FIELDS structs: the field names, one per nested snapshot. Absent for other types and in snapshots
  // written before names were recorded (those match fields by position: serializer_compatibility.h).
  std::optional<std::vector<std::string>> field_names = std::nullopt;

  bool operator==(const TypeSerializerSnapshot&) const = default;
  std::string to_string() const;  // "vector<pair<string,i64>>@1" (field names left out)
  // Format: string type_name, varint version (bit 32 set: field names follow the nested snapshots), varint
  // nested count, nested snapshots, [varint name count, names]. Snapshots without names keep the old bytes.
  void write(DataOutputView& out) const;
  // Fails `in` for malformed bytes and for snapshots nested more than 64 levels deep.
  static TypeSerializerSnapshot read(DataInputView& in);
};

// The namespace of keyed state that is not scoped (windows use their window as namespace).
struct VoidNamespace {
  bool operator==(const VoidNamespace&) const = default;
};

namespace detail {
template <class T>
inline constexpr bool kNoSerializer = false;  // dependent, so the assertion below fires only when instantiated
}  // namespace detail

// The types below have serializers; any other type fails to compile here, with this message at the top of the
// compiler's errors.
template <class T, class Enable = void>
struct TypeSerializer {
  static_assert(detail::kNoSerializer<T>,
                "Sluice has no TypeSerializer for this type. A struct used as a record, key or state value lists its "
                "fields with SLUICE_FIELDS(Type, field1, field2, ...) inside its body, or has "
                "'void serialize(DataOutputView&) const' and 'static T deserialize(DataInputView&)' and a "
                "'static constexpr const char* sluice_type_name'; any other type needs a specialization of "
                "sluice::TypeSerializer<T> (docs/datastream.md, \"Types and serializers\")");
};

namespace detail {
template <class T>
concept HasSluiceFields = requires(T& t) { t.sluice_fields(); };
template <class T>
concept HasCustomSerialize = requires(const T& t, DataOutputView& out, DataInputView& in) {
  t.serialize(out);
  { T::deserialize(in) } -> std::same_as<T>;
};
// "a, b,c" (a SLUICE_FIELDS argument list) -> {"a", "b", "c"}.
std::vector<std::string> split_field_names(const char* stringified_fields);
template <class T>
constexpr uint32_t struct_version() {
  if constexpr (requires { T::sluice_version; }) {
    return T::sluice_version;
  } else {
    return 1;
  }
}
}  // namespace detail

#define SLUICE_PRIMITIVE_SERIALIZER(Type, Name)                                               \
  template <>                                                                                 \
  struct TypeSerializer<Type> {                                                               \
    static void serialize(const Type& v, DataOutputView& out) { out.write_fixed<Type>(v); }   \
    static Type deserialize(DataInputView& in) { return in.read_fixed<Type>(); }              \
    static TypeSerializerSnapshot snapshot() { return {Name, 1, {}}; }                        \
  };

SLUICE_PRIMITIVE_SERIALIZER(int8_t, "i8")
SLUICE_PRIMITIVE_SERIALIZER(uint8_t, "u8")
SLUICE_PRIMITIVE_SERIALIZER(int16_t, "i16")
SLUICE_PRIMITIVE_SERIALIZER(uint16_t, "u16")
SLUICE_PRIMITIVE_SERIALIZER(int32_t, "i32")
SLUICE_PRIMITIVE_SERIALIZER(uint32_t, "u32")
SLUICE_PRIMITIVE_SERIALIZER(int64_t, "i64")
SLUICE_PRIMITIVE_SERIALIZER(uint64_t, "u64")
SLUICE_PRIMITIVE_SERIALIZER(float, "f32")
SLUICE_PRIMITIVE_SERIALIZER(double, "f64")
SLUICE_PRIMITIVE_SERIALIZER(char, "char")
#undef SLUICE_PRIMITIVE_SERIALIZER

// long long / unsigned long long are distinct types from int64_t/uint64_t on LP64 Linux.
template <class T>
struct TypeSerializer<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                          !std::is_same_v<T, char> && sizeof(T) == 8 &&
                                          !std::is_same_v<T, int64_t> && !std::is_same_v<T, uint64_t>>> {
  static void serialize(const T& v, DataOutputView& out) { out.write_fixed<T>(v); }
  static T deserialize(DataInputView& in) { return in.read_fixed<T>(); }
  static TypeSerializerSnapshot snapshot() { return {std::is_signed_v<T> ? "i64" : "u64", 1, {}}; }
};

template <>
struct TypeSerializer<bool> {
  static void serialize(const bool& v, DataOutputView& out) { out.write_u8(v ? 1 : 0); }
  static bool deserialize(DataInputView& in) {
    uint8_t b = in.read_u8();
    if (b > 1) in.fail();
    return b == 1;
  }
  static TypeSerializerSnapshot snapshot() { return {"bool", 1, {}}; }
};

template <class E>
struct TypeSerializer<E, std::enable_if_t<std::is_enum_v<E>>> {
  using U = std::underlying_type_t<E>;
  static void serialize(const E& v, DataOutputView& out) { out.write_fixed<U>(static_cast<U>(v)); }
  static E deserialize(DataInputView& in) { return static_cast<E>(in.read_fixed<U>()); }
  static TypeSerializerSnapshot snapshot() { return {"enum", 1, {TypeSerializer<U>::snapshot()}}; }
};

template <>
struct TypeSerializer<std::string> {
  static void serialize(const std::string& v, DataOutputView& out) { out.write_string(v); }
  static std::string deserialize(DataInputView& in) { return in.read_string(); }
  static TypeSerializerSnapshot snapshot() { return {"string", 1, {}}; }
};

template <>
struct TypeSerializer<VoidNamespace> {
  static void serialize(const VoidNamespace&, DataOutputView&) {}
  static VoidNamespace deserialize(DataInputView&) { return {}; }
  static TypeSerializerSnapshot snapshot() { return {"void-namespace", 1, {}}; }
};

namespace detail {
// Rejects a length that cannot fit in the remaining bytes (each element takes at least 1 byte, except
// zero-size elements), so corrupt input cannot make us allocate gigabytes. Elements of no bytes are bounded by
// what they take in memory instead (DataInputView::charge_empty_element, through decode_elements).
inline bool plausible_count(DataInputView& in, uint64_t n) {
  if (n > in.remaining() && n > (uint64_t{1} << 24)) {
    in.fail();
    return false;
  }
  return in.ok();
}
// How many of n claimed elements to reserve room for: no more than the bytes left could hold. A plausible count
// of up to 2^24 zero-size elements still passes, and 2^24 times a large element type was gigabytes reserved for
// a few damaged bytes; elements beyond the reservation grow the vector as they actually decode.
inline size_t reservable_count(const DataInputView& in, uint64_t n) {
  return static_cast<size_t>(n < in.remaining() ? n : in.remaining());
}
// Calls decode_one() n times while the input is ok, charging each element that took no bytes with
// `element_memory_bytes` (2^24 records migrated from a version without fields took 3 GB from a 40-byte value).
template <class DecodeOne>
void decode_elements(DataInputView& in, uint64_t n, size_t element_memory_bytes, DecodeOne&& decode_one) {
  for (uint64_t i = 0; i < n && in.ok(); ++i) {
    const size_t before = in.position();
    decode_one();
    if (in.position() == before && !in.charge_empty_element(element_memory_bytes)) return;
  }
}
// What a map node takes beyond its value: the tree's or the hash table's pointers and bookkeeping.
inline constexpr size_t kMapNodeOverheadBytes = 4 * sizeof(void*);
}  // namespace detail

template <class T, class A>
struct TypeSerializer<std::vector<T, A>> {
  static void serialize(const std::vector<T, A>& v, DataOutputView& out) {
    out.write_varint(v.size());
    for (const auto& e : v) TypeSerializer<T>::serialize(e, out);
  }
  static std::vector<T, A> deserialize(DataInputView& in) {
    uint64_t n = in.read_varint();
    std::vector<T, A> v;
    if (!detail::plausible_count(in, n)) return v;
    v.reserve(detail::reservable_count(in, n));
    detail::decode_elements(in, n, sizeof(T), [&] { v.push_back(TypeSerializer<T>::deserialize(in)); });
    return v;
  }
  static TypeSerializerSnapshot snapshot() { return {"vector", 1, {TypeSerializer<T>::snapshot()}}; }
};

template <class T, size_t N>
struct TypeSerializer<std::array<T, N>> {
  static void serialize(const std::array<T, N>& v, DataOutputView& out) {
    for (const auto& e : v) TypeSerializer<T>::serialize(e, out);
  }
  static std::array<T, N> deserialize(DataInputView& in) {
    std::array<T, N> v{};
    for (auto& e : v) e = TypeSerializer<T>::deserialize(in);
    return v;
  }
  static TypeSerializerSnapshot snapshot() {
    return {"array" + std::to_string(N), 1, {TypeSerializer<T>::snapshot()}};
  }
};

template <class M, const char* kName>
struct MapSerializerImpl {
  using K = typename M::key_type;
  using V = typename M::mapped_type;
  static void serialize(const M& m, DataOutputView& out) {
    out.write_varint(m.size());
    for (const auto& [k, v] : m) {
      TypeSerializer<K>::serialize(k, out);
      TypeSerializer<V>::serialize(v, out);
    }
  }
  static M deserialize(DataInputView& in) {
    uint64_t n = in.read_varint();
    M m;
    if (!detail::plausible_count(in, n)) return m;
    detail::decode_elements(in, n, sizeof(typename M::value_type) + detail::kMapNodeOverheadBytes, [&] {
      K k = TypeSerializer<K>::deserialize(in);
      V v = TypeSerializer<V>::deserialize(in);
      m.emplace(std::move(k), std::move(v));
    });
    return m;
  }
  static TypeSerializerSnapshot snapshot() {
    return {kName, 1, {TypeSerializer<K>::snapshot(), TypeSerializer<V>::snapshot()}};
  }
};
inline constexpr char kMapName[] = "map";
inline constexpr char kHashMapName[] = "hash-map";
template <class K, class V, class C, class A>
struct TypeSerializer<std::map<K, V, C, A>> : MapSerializerImpl<std::map<K, V, C, A>, kMapName> {};
template <class K, class V, class H, class E, class A>
struct TypeSerializer<std::unordered_map<K, V, H, E, A>>
    : MapSerializerImpl<std::unordered_map<K, V, H, E, A>, kHashMapName> {};

template <class T>
struct TypeSerializer<std::optional<T>> {
  static void serialize(const std::optional<T>& v, DataOutputView& out) {
    out.write_u8(v.has_value() ? 1 : 0);
    if (v) TypeSerializer<T>::serialize(*v, out);
  }
  static std::optional<T> deserialize(DataInputView& in) {
    uint8_t tag = in.read_u8();
    if (tag == 0) return std::nullopt;
    if (tag != 1) {
      in.fail();
      return std::nullopt;
    }
    return TypeSerializer<T>::deserialize(in);
  }
  static TypeSerializerSnapshot snapshot() { return {"optional", 1, {TypeSerializer<T>::snapshot()}}; }
};

template <class A, class B>
struct TypeSerializer<std::pair<A, B>> {
  static void serialize(const std::pair<A, B>& v, DataOutputView& out) {
    TypeSerializer<A>::serialize(v.first, out);
    TypeSerializer<B>::serialize(v.second, out);
  }
  static std::pair<A, B> deserialize(DataInputView& in) {
    A a = TypeSerializer<A>::deserialize(in);  // sequenced: argument evaluation order is unspecified
    B b = TypeSerializer<B>::deserialize(in);
    return {std::move(a), std::move(b)};
  }
  static TypeSerializerSnapshot snapshot() {
    return {"pair", 1, {TypeSerializer<A>::snapshot(), TypeSerializer<B>::snapshot()}};
  }
};

template <class... Ts>
struct TypeSerializer<std::tuple<Ts...>> {
  static void serialize(const std::tuple<Ts...>& v, DataOutputView& out) {
    std::apply([&](const auto&... e) { (TypeSerializer<std::decay_t<decltype(e)>>::serialize(e, out), ...); }, v);
  }
  static std::tuple<Ts...> deserialize(DataInputView& in) {
    std::tuple<Ts...> v;
    // Braced fold: left-to-right evaluation is guaranteed.
    std::apply([&](auto&... e) { ((e = TypeSerializer<std::decay_t<decltype(e)>>::deserialize(in)), ...); }, v);
    return v;
  }
  static TypeSerializerSnapshot snapshot() { return {"tuple", 1, {TypeSerializer<Ts>::snapshot()...}}; }
};

// User structs that list their fields with SLUICE_FIELDS.
template <class T>
struct TypeSerializer<T, std::enable_if_t<detail::HasSluiceFields<T>>> {
  static void serialize(const T& v, DataOutputView& out) {
    std::apply([&](const auto&... f) { (TypeSerializer<std::decay_t<decltype(f)>>::serialize(f, out), ...); },
               v.sluice_fields());
  }
  static T deserialize(DataInputView& in) {
    T v{};
    std::apply([&](auto&... f) { ((f = TypeSerializer<std::decay_t<decltype(f)>>::deserialize(in)), ...); },
               v.sluice_fields());
    return v;
  }
  static TypeSerializerSnapshot snapshot() {
    TypeSerializerSnapshot s{T::sluice_type_name, detail::struct_version<T>(), {}, {}};
    using Tie = decltype(std::declval<T&>().sluice_fields());
    append_fields(s, std::make_index_sequence<std::tuple_size_v<Tie>>{});
    if constexpr (requires { T::sluice_field_names; }) {
      s.field_names = detail::split_field_names(T::sluice_field_names);
      if (s.field_names->size() != s.nested.size()) s.field_names.reset();  // not plain member names
    }
    return s;
  }

 private:
  template <size_t... I>
  static void append_fields(TypeSerializerSnapshot& s, std::index_sequence<I...>) {
    using Tie = decltype(std::declval<T&>().sluice_fields());
    (s.nested.push_back(TypeSerializer<std::decay_t<std::tuple_element_t<I, Tie>>>::snapshot()), ...);
  }
};

// User structs with hand-written serialize/deserialize.
template <class T>
struct TypeSerializer<T, std::enable_if_t<detail::HasCustomSerialize<T> && !detail::HasSluiceFields<T>>> {
  static void serialize(const T& v, DataOutputView& out) { v.serialize(out); }
  static T deserialize(DataInputView& in) { return T::deserialize(in); }
  static TypeSerializerSnapshot snapshot() { return {T::sluice_type_name, detail::struct_version<T>(), {}, {}}; }
};

// Lists a struct's serialized fields, in order. Use inside the struct's body.
#define SLUICE_FIELDS(Type, ...)                                                 \
  static constexpr const char* sluice_type_name = #Type;                         \
  static constexpr const char* sluice_field_names = #__VA_ARGS__;                \
  auto sluice_fields() { return std::tie(__VA_ARGS__); }                         \
  auto sluice_fields() const { return std::tie(__VA_ARGS__); }

// Convenience round trips. deserialize_bytes fails with kCorruption naming `what` if the bytes are
// malformed or not consumed exactly.
template <class T>
void serialize_append(const T& v, std::vector<uint8_t>& buf) {
  DataOutputView out(&buf);
  TypeSerializer<T>::serialize(v, out);
}
template <class T>
std::vector<uint8_t> serialize_bytes(const T& v) {
  std::vector<uint8_t> buf;
  serialize_append(v, buf);
  return buf;
}
template <class T>
Result<T> deserialize_bytes(const uint8_t* data, size_t size, std::string_view what = "value") {
  DataInputView in(data, size);
  T v = TypeSerializer<T>::deserialize(in);
  if (!in.ok() || !in.at_end()) {
    return Status::corruption(std::string(what) + ": " + std::to_string(size) + " bytes do not decode as " +
                              TypeSerializer<T>::snapshot().to_string() +
                              (in.ok() ? " (trailing bytes)" : " (truncated or malformed)"));
  }
  return v;
}

}  // namespace sluice
