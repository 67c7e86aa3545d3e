#include "sluice/state/state_descriptor.h"

namespace sluice {

std::string_view state_kind_name(StateKind kind) {
  switch (kind) {
    case StateKind::kValue:
      return "ValueState";
    case StateKind::kList:
      return "ListState";
    case StateKind::kMap:
      return "MapState";
    case StateKind::kReducing:
      return "ReducingState";
    case StateKind::kAggregating:
      return "AggregatingState";
    case StateKind::kPriorityQueue:
      return "PriorityQueueState";
  }
  return "UnknownState";
}

bool is_valid_state_kind(uint8_t raw) {
  return raw >= static_cast<uint8_t>(StateKind::kValue) && raw <= static_cast<uint8_t>(StateKind::kPriorityQueue);
}

}  // namespace sluice
