// State schema evolution: is a value written under an old TypeSerializerSnapshot readable by the current
// TypeSerializer<T>, and how (the idea of Flink's TypeSerializerSnapshot#resolveSchemaCompatibility and of its
// PojoSerializer's field evolution; docs/savepoints.md, "State schema evolution").
//
// SchemaMigration<T>::resolve(old, plan) answers one of
//   compatible as is           the old bytes decode with TypeSerializer<T> unchanged;
//   compatible after migration the old bytes decode through SchemaMigration<T>::read(plan, in), and are written
//                              again with TypeSerializer<T> (the restore rewrites them);
//   incompatible               with the reason, naming the field ("field 'price': restored as i64, registered as
//                              f64").
// What is compatible:
// - SLUICE_FIELDS structs (same struct name): fields are matched by name. A field added gets the value of `T{}`
//   (its default member initializer); a field removed is skipped (its old type must be one this header can skip:
//   built-in types, containers of them and SLUICE_FIELDS structs, not a hand-written serializer); reordered fields
//   migrate; a field whose type changed is incompatible (no widening). Nested structs, and structs in vectors,
//   arrays, maps, optionals, pairs and tuples, migrate the same way. sluice_version is informational: the fields
//   decide. Snapshots written before field names were recorded (tests/data/savepoints/v1-*) match by position:
//   as is when the fields are the same, after migration when fields were only appended, incompatible otherwise.
// - Structs with a hand-written serializer: as is at the same sluice_version. Another version migrates only if
//   the struct defines `static T deserialize_version(DataInputView& in, uint32_t old_version)` (reads bytes
//   its serializer wrote at old_version); otherwise incompatible.
// - std::map and std::unordered_map have the same bytes: either restores as the other, as is.
// - Everything else (primitives, strings, enums, other serializers): as is when the snapshots are equal,
//   otherwise incompatible.
// Keys of keyed state, namespaces and MapState user keys must be compatible as is (their bytes are hashed into
// key groups and, in RocksDB, ordered and looked up): state/state_schema.h checks that.
//
// Thread-safety: pure functions; a plan is immutable after resolve and may be shared across threads.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"

namespace sluice {

enum class SchemaCompatibilityKind : uint8_t { kCompatibleAsIs, kCompatibleAfterMigration, kIncompatible };

// "compatible as is", "compatible after migration", "incompatible".
std::string_view schema_compatibility_name(SchemaCompatibilityKind kind);

struct SchemaCompatibility {
  SchemaCompatibilityKind kind = SchemaCompatibilityKind::kCompatibleAsIs;
  // After migration: what changes ("field 'note' added, field 'qty' removed"); incompatible: why.
  std::string reason;

  static SchemaCompatibility as_is() { return {}; }
  static SchemaCompatibility after_migration(std::string why) {
    return {SchemaCompatibilityKind::kCompatibleAfterMigration, std::move(why)};
  }
  static SchemaCompatibility incompatible(std::string why) {
    return {SchemaCompatibilityKind::kIncompatible, std::move(why)};
  }
  bool is_as_is() const { return kind == SchemaCompatibilityKind::kCompatibleAsIs; }
  bool is_incompatible() const { return kind == SchemaCompatibilityKind::kIncompatible; }
};

// How bytes written under `old` decode into the current type: built by SchemaMigration<T>::resolve, read by
// SchemaMigration<T>::read. A tree shaped like `old`.
struct SchemaMigrationPlan {
  TypeSerializerSnapshot old;                // what the bytes were written with
  bool as_is = true;                         // TypeSerializer<T>::deserialize reads them
  std::vector<int32_t> field_of_old;         // structs: per old field, the current field's index, -1 = skip it
  std::vector<SchemaMigrationPlan> nested;   // per old nested serializer (struct fields, container elements)
};

// Whether `restored` and `current` describe the same bytes: equal type names, nested snapshots and versions
// (versions of SLUICE_FIELDS structs are informational), and equal field names where both record them (a
// restored snapshot without names matches by position).
bool same_schema(const TypeSerializerSnapshot& restored, const TypeSerializerSnapshot& current);

// Whether skip_serialized can step over a value written under `s` (built-in types, containers, TTL values and
// SLUICE_FIELDS structs with recorded field names; not hand-written serializers).
bool can_skip(const TypeSerializerSnapshot& s);
// Steps over one value written under `s`; fails `in` when it cannot (can_skip false) or the bytes are malformed.
void skip_serialized(const TypeSerializerSnapshot& s, DataInputView& in);

namespace detail {
// Incompatible: "restored as X, registered as Y".
SchemaCompatibility schema_mismatch(const TypeSerializerSnapshot& restored, const TypeSerializerSnapshot& current);
}  // namespace detail

// The default: as is when the snapshots describe the same bytes, else incompatible.
template <class T, class Enable = void>
struct SchemaMigration {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    plan = SchemaMigrationPlan{old, true, {}, {}};
    const TypeSerializerSnapshot current = TypeSerializer<T>::snapshot();
    if (same_schema(old, current)) return SchemaCompatibility::as_is();
    return detail::schema_mismatch(old, current);
  }
  static T read(const SchemaMigrationPlan&, DataInputView& in) { return TypeSerializer<T>::deserialize(in); }
};

// Resolves `old` against T; decodes with the plan. The entry points the state backends use.
template <class T>
SchemaCompatibility resolve_schema(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
  return SchemaMigration<T>::resolve(old, plan);
}
template <class T>
T read_migrated(const SchemaMigrationPlan& plan, DataInputView& in) {
  return plan.as_is ? TypeSerializer<T>::deserialize(in) : SchemaMigration<T>::read(plan, in);
}

namespace detail {
// A container whose snapshot is {name, 1, {E...}}: resolves each element type; as is when all are.
template <class... Es>
SchemaCompatibility resolve_container(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan,
                                      bool name_matches, const TypeSerializerSnapshot& current) {
  using ResolveFn = SchemaCompatibility (*)(const TypeSerializerSnapshot&, SchemaMigrationPlan&);
  static constexpr std::array<ResolveFn, sizeof...(Es)> kResolve = {&SchemaMigration<Es>::resolve...};
  plan = SchemaMigrationPlan{old, true, {}, {}};
  if (!name_matches || old.nested.size() != sizeof...(Es)) return schema_mismatch(old, current);
  plan.nested.resize(sizeof...(Es));
  bool as_is = true;
  std::string changes;
  for (size_t i = 0; i < sizeof...(Es); ++i) {
    SchemaCompatibility c = kResolve[i](old.nested[i], plan.nested[i]);
    if (c.is_incompatible()) return c;
    if (!c.is_as_is()) {
      as_is = false;
      changes += (changes.empty() ? "" : ", ") + c.reason;
    }
  }
  plan.as_is = as_is;
  return as_is ? SchemaCompatibility::as_is() : SchemaCompatibility::after_migration(std::move(changes));
}
}  // namespace detail

template <class T, class A>
struct SchemaMigration<std::vector<T, A>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<T>(old, plan, old.type_name == "vector", TypeSerializer<std::vector<T, A>>::snapshot());
  }
  static std::vector<T, A> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    const uint64_t n = in.read_varint();
    std::vector<T, A> v;
    if (!detail::plausible_count(in, n)) return v;
    v.reserve(detail::reservable_count(in, n));
    detail::decode_elements(in, n, sizeof(T), [&] { v.push_back(read_migrated<T>(plan.nested[0], in)); });
    return v;
  }
};

template <class T, size_t N>
struct SchemaMigration<std::array<T, N>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    const TypeSerializerSnapshot current = TypeSerializer<std::array<T, N>>::snapshot();
    return detail::resolve_container<T>(old, plan, old.type_name == current.type_name, current);
  }
  static std::array<T, N> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    std::array<T, N> v{};
    for (auto& e : v) e = read_migrated<T>(plan.nested[0], in);
    return v;
  }
};

// std::map and std::unordered_map: the same bytes, so either name restores as either container.
template <class M>
struct MapSchemaMigration {
  using K = typename M::key_type;
  using V = typename M::mapped_type;
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<K, V>(old, plan, old.type_name == kMapName || old.type_name == kHashMapName,
                                           TypeSerializer<M>::snapshot());
  }
  static M read(const SchemaMigrationPlan& plan, DataInputView& in) {
    const uint64_t n = in.read_varint();
    M m;
    if (!detail::plausible_count(in, n)) return m;
    detail::decode_elements(in, n, sizeof(typename M::value_type) + detail::kMapNodeOverheadBytes, [&] {
      K k = read_migrated<K>(plan.nested[0], in);
      V v = read_migrated<V>(plan.nested[1], in);
      m.emplace(std::move(k), std::move(v));
    });
    return m;
  }
};
template <class K, class V, class C, class A>
struct SchemaMigration<std::map<K, V, C, A>> : MapSchemaMigration<std::map<K, V, C, A>> {};
template <class K, class V, class H, class E, class A>
struct SchemaMigration<std::unordered_map<K, V, H, E, A>> : MapSchemaMigration<std::unordered_map<K, V, H, E, A>> {};

template <class T>
struct SchemaMigration<std::optional<T>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<T>(old, plan, old.type_name == "optional", TypeSerializer<std::optional<T>>::snapshot());
  }
  static std::optional<T> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    const uint8_t tag = in.read_u8();
    if (tag == 0) return std::nullopt;
    if (tag != 1) {
      in.fail();
      return std::nullopt;
    }
    return read_migrated<T>(plan.nested[0], in);
  }
};

template <class A, class B>
struct SchemaMigration<std::pair<A, B>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<A, B>(old, plan, old.type_name == "pair", TypeSerializer<std::pair<A, B>>::snapshot());
  }
  static std::pair<A, B> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    A a = read_migrated<A>(plan.nested[0], in);
    B b = read_migrated<B>(plan.nested[1], in);
    return {std::move(a), std::move(b)};
  }
};

template <class... Ts>
struct SchemaMigration<std::tuple<Ts...>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    return detail::resolve_container<Ts...>(old, plan, old.type_name == "tuple", TypeSerializer<std::tuple<Ts...>>::snapshot());
  }
  static std::tuple<Ts...> read(const SchemaMigrationPlan& plan, DataInputView& in) {
    return read_elements(plan, in, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... I>
  static std::tuple<Ts...> read_elements(const SchemaMigrationPlan& plan, DataInputView& in, std::index_sequence<I...>) {
    std::tuple<Ts...> v;
    // Braced fold: left to right.
    ((std::get<I>(v) = read_migrated<Ts>(plan.nested[I], in)), ...);
    return v;
  }
};

// SLUICE_FIELDS structs: fields matched by name (by position in snapshots without names).
template <class T>
struct SchemaMigration<T, std::enable_if_t<detail::HasSluiceFields<T>>> {
  using Tie = decltype(std::declval<T&>().sluice_fields());
  static constexpr size_t kFields = std::tuple_size_v<Tie>;
  template <size_t I>
  using Field = std::decay_t<std::tuple_element_t<I, Tie>>;

  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    const TypeSerializerSnapshot current = TypeSerializer<T>::snapshot();
    plan = SchemaMigrationPlan{old, false, std::vector<int32_t>(old.nested.size(), -1), {}};
    plan.nested.resize(old.nested.size());
    if (old.type_name != current.type_name) return detail::schema_mismatch(old, current);
    const bool by_name = old.field_names.has_value() && current.field_names.has_value();
    if (!by_name && old.nested.size() > kFields) {
      return SchemaCompatibility::incompatible(
          old.to_string() + " has " + std::to_string(old.nested.size()) + " fields and no field names (written before "
          "they were recorded), " + current.to_string() + " has " + std::to_string(kFields) +
          ": such snapshots migrate only when fields were appended");
    }
    std::vector<bool> matched(kFields, false);
    for (size_t j = 0; j < old.nested.size(); ++j) {
      for (size_t i = 0; i < kFields; ++i) {
        if (by_name ? (*old.field_names)[j] == (*current.field_names)[i] : i == j) {
          plan.field_of_old[j] = static_cast<int32_t>(i);
          matched[i] = true;
          break;
        }
      }
    }
    static constexpr auto kResolve = resolvers(std::make_index_sequence<kFields>{});
    bool as_is = old.nested.size() == kFields;
    std::string changes;
    auto note = [&](const std::string& s) { changes += (changes.empty() ? "" : ", ") + s; };
    for (size_t j = 0; j < old.nested.size(); ++j) {
      const std::string name = field_name(old, current, j);
      const int32_t i = plan.field_of_old[j];
      if (i < 0) {
        plan.nested[j] = SchemaMigrationPlan{old.nested[j], true, {}, {}};
        if (!can_skip(old.nested[j])) {
          return SchemaCompatibility::incompatible("field '" + name + "' (" + old.nested[j].to_string() +
                                                   ") was removed, but its bytes cannot be skipped (a hand-written "
                                                   "serializer)");
        }
        as_is = false;
        note("field '" + name + "' removed");
        continue;
      }
      if (static_cast<size_t>(i) != j) {
        as_is = false;
        note("field '" + name + "' moved");
      }
      SchemaCompatibility c = kResolve[static_cast<size_t>(i)](old.nested[j], plan.nested[j]);
      if (c.is_incompatible()) return SchemaCompatibility::incompatible("field '" + name + "': " + c.reason);
      if (!c.is_as_is()) {
        as_is = false;
        note("field '" + name + "': " + c.reason);
      }
    }
    for (size_t i = 0; i < kFields; ++i) {
      if (matched[i]) continue;
      as_is = false;
      note("field '" + (current.field_names ? (*current.field_names)[i] : "#" + std::to_string(i)) +
           "' added (default value)");
    }
    plan.as_is = as_is;
    return as_is ? SchemaCompatibility::as_is() : SchemaCompatibility::after_migration(std::move(changes));
  }

  static T read(const SchemaMigrationPlan& plan, DataInputView& in) {
    static constexpr auto kRead = readers(std::make_index_sequence<kFields>{});
    T v{};  // added fields keep their default member initializers
    Tie fields = v.sluice_fields();
    for (size_t j = 0; j < plan.field_of_old.size() && in.ok(); ++j) {
      const int32_t i = plan.field_of_old[j];
      if (i < 0) {
        skip_serialized(plan.nested[j].old, in);
      } else {
        kRead[static_cast<size_t>(i)](fields, plan.nested[j], in);
      }
    }
    return v;
  }

 private:
  using ResolveFn = SchemaCompatibility (*)(const TypeSerializerSnapshot&, SchemaMigrationPlan&);
  using ReadFn = void (*)(Tie&, const SchemaMigrationPlan&, DataInputView&);
  template <size_t... I>
  static constexpr std::array<ResolveFn, kFields> resolvers(std::index_sequence<I...>) {
    return {&SchemaMigration<Field<I>>::resolve...};
  }
  template <size_t I>
  static void read_field(Tie& fields, const SchemaMigrationPlan& plan, DataInputView& in) {
    std::get<I>(fields) = read_migrated<Field<I>>(plan, in);
  }
  template <size_t... I>
  static constexpr std::array<ReadFn, kFields> readers(std::index_sequence<I...>) {
    return {&read_field<I>...};
  }
  static std::string field_name(const TypeSerializerSnapshot& old, const TypeSerializerSnapshot& current, size_t j) {
    if (old.field_names) return (*old.field_names)[j];
    if (current.field_names && j < current.field_names->size()) return (*current.field_names)[j];
    return "#" + std::to_string(j);
  }
};

namespace detail {
template <class T>
concept HasDeserializeVersion = requires(DataInputView& in, uint32_t v) {
  { T::deserialize_version(in, v) } -> std::same_as<T>;
};
}  // namespace detail

// Hand-written serializers: another sluice_version migrates through T::deserialize_version if T has it.
template <class T>
struct SchemaMigration<T, std::enable_if_t<detail::HasCustomSerialize<T> && !detail::HasSluiceFields<T>>> {
  static SchemaCompatibility resolve(const TypeSerializerSnapshot& old, SchemaMigrationPlan& plan) {
    const TypeSerializerSnapshot current = TypeSerializer<T>::snapshot();
    plan = SchemaMigrationPlan{old, true, {}, {}};
    if (same_schema(old, current)) return SchemaCompatibility::as_is();
    if (old.type_name != current.type_name || !old.nested.empty()) return detail::schema_mismatch(old, current);
    if constexpr (detail::HasDeserializeVersion<T>) {
      plan.as_is = false;
      return SchemaCompatibility::after_migration(current.type_name + " version " + std::to_string(old.version) +
                                                  " -> " + std::to_string(current.version) +
                                                  " (deserialize_version)");
    } else {
      return SchemaCompatibility::incompatible(
          current.type_name + " has a hand-written serializer at version " + std::to_string(current.version) +
          ", the snapshot's is version " + std::to_string(old.version) +
          "; define static deserialize_version(DataInputView&, uint32_t old_version) to migrate");
    }
  }
  static T read(const SchemaMigrationPlan& plan, DataInputView& in) {
    if constexpr (detail::HasDeserializeVersion<T>) {
      return T::deserialize_version(in, plan.old.version);
    } else {
      return T::deserialize(in);
    }
  }
};

}  // namespace sluice
