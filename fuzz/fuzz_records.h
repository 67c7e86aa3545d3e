// The record types serializer_fuzzer decodes, shared with fuzz/make_corpus.cc, which writes their seeds with the
// serializers' own writers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"

namespace sluice::fuzz {

enum class Color : int16_t { kRed = 1, kBlue = 2 };

struct Item {
  int32_t id = 0;
  std::string label;
  SLUICE_FIELDS(Item, id, label)
};

// Larger than most records, so that a claimed element count times sizeof(Order) is far more than an input holds.
struct Order {
  std::string customer;
  std::string address;
  std::string note;
  std::vector<Item> items;
  std::optional<Item> gift;
  std::map<std::string, int64_t> counters;
  std::array<double, 4> prices{};
  Color color = Color::kRed;
  bool paid = false;
  SLUICE_FIELDS(Order, customer, address, note, items, gift, counters, prices, color, paid)
};

struct Empty {
  SLUICE_FIELDS(Empty)
};

}  // namespace sluice::fuzz
