// Comparing an engine's query output with a reference answer: as multisets (order does not matter, duplicates
// do), with a message that names the first difference in canonical order; and, for outputs too large to keep
// (q0 - q2 over millions of bids), an order-independent digest.
//
// Row types are those of rows.h or any struct with `<=>`, SLUICE_FIELDS and kColumns.
// Thread-safety: pure functions; a MultisetDigest is a plain value (one writer at a time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/core/status.h"

namespace sluice::nexmark::reference {

namespace detail {
// One value for a message: integers as numbers, strings quoted and cut after 40 bytes.
void append_value(std::string& out, int64_t v);
void append_value(std::string& out, const std::string& v);
uint64_t fnv1a64(const std::vector<uint8_t>& bytes);
uint64_t mix64(uint64_t z);
}  // namespace detail

// "(auction, price) = (1230, 4711)".
template <class Row>
std::string describe_row(const Row& row) {
  std::string out = "(";
  out += Row::kColumns;
  out += ") = (";
  bool first = true;
  std::apply(
      [&](const auto&... f) {
        ((out += first ? "" : ", ", first = false, detail::append_value(out, f)), ...);
      },
      row.sluice_fields());
  out += ")";
  return out;
}

// Ok if `actual` holds exactly the rows of `expected`, each as often, in any order. Otherwise
// FailedPrecondition: "<query>: engine output differs from the reference (E expected rows, A actual); first
// difference in canonical order: missing|unexpected <row> (expected x times, got y)".
template <class Row>
Status compare_multiset(std::string_view query, std::vector<Row> expected, std::vector<Row> actual) {
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  size_t i = 0;
  size_t j = 0;
  while (i < expected.size() || j < actual.size()) {
    if (i < expected.size() && j < actual.size() && expected[i] == actual[j]) {
      ++i;
      ++j;
      continue;
    }
    // The smaller of the two heads is the first row whose multiplicity differs.
    const bool take_expected = j == actual.size() || (i < expected.size() && expected[i] < actual[j]);
    const Row& row = take_expected ? expected[i] : actual[j];
    const auto [e_lo, e_hi] = std::equal_range(expected.begin(), expected.end(), row);
    const auto [a_lo, a_hi] = std::equal_range(actual.begin(), actual.end(), row);
    const auto e_count = e_hi - e_lo;
    const auto a_count = a_hi - a_lo;
    std::string msg(query);
    msg += ": engine output differs from the reference (" + std::to_string(expected.size()) +
           " expected rows, " + std::to_string(actual.size()) + " actual); first difference in canonical order: ";
    msg += e_count > a_count ? "missing " : "unexpected ";
    msg += describe_row(row);
    msg += " (expected " + std::to_string(e_count) + " times, got " + std::to_string(a_count) + ")";
    return Status::failed_precondition(std::move(msg));
  }
  return Status::ok();
}

// An order-independent digest of a multiset of rows: the count and the sum (mod 2^64) of a 64-bit hash of
// each row's serialized form. Equal multisets give equal digests; different ones collide with probability
// about 2^-64 (not a cryptographic guarantee).
struct MultisetDigest {
  int64_t count = 0;
  uint64_t hash_sum = 0;

  template <class Row>
  void add(const Row& row) {
    buffer_.clear();
    serialize_append(row, buffer_);
    ++count;
    hash_sum += detail::mix64(detail::fnv1a64(buffer_));
  }
  bool operator==(const MultisetDigest& o) const { return count == o.count && hash_sum == o.hash_sum; }
  std::string to_string() const;

 private:
  std::vector<uint8_t> buffer_;  // reused across add() calls
};

template <class Row>
MultisetDigest digest_of(const std::vector<Row>& rows) {
  MultisetDigest d;
  for (const Row& r : rows) d.add(r);
  return d;
}

// Ok if equal, else FailedPrecondition "<query>: engine output digest <...> differs from the reference's <...>".
Status compare_digests(std::string_view query, const MultisetDigest& expected, const MultisetDigest& actual);

}  // namespace sluice::nexmark::reference
