#include "sluice/state/keyed_state_backend.h"

#include <stdexcept>
#include <string>

namespace sluice::detail {

void throw_key_group_out_of_range(int32_t key_group, const KeyGroupRange& range, int32_t max_parallelism) {
  throw std::logic_error("set_current_key: the key belongs to key group " + std::to_string(key_group) +
                         ", outside this subtask's key-group range " + range.to_string() + " (max parallelism " +
                         std::to_string(max_parallelism) +
                         "): the record was routed to the wrong subtask (the partitioner and the state backend "
                         "disagree on max parallelism, parallelism or the key)");
}

void throw_no_current_key() {
  throw std::logic_error("keyed state accessed with no current key: state is only available while processing a "
                         "record (or timer) of a keyed stream");
}

void throw_state_conflict(const StateMetaInfo& registered, const StateMetaInfo& requested) {
  std::string msg = "state '" + registered.name + "' is already registered as " + registered.type_description() +
                    "; cannot register it again as " + requested.type_description();
  if (registered.type_description() == requested.type_description()) {
    msg += " with a different C++ type";
  }
  throw std::invalid_argument(msg);
}

void throw_empty_state_name() { throw std::invalid_argument("a state descriptor needs a non-empty name"); }

}  // namespace sluice::detail
