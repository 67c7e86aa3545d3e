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
  throw StatusError(Status::invalid_argument(msg));
}

void throw_empty_state_name() {
  throw StatusError(Status::invalid_argument("a state descriptor needs a non-empty name"));
}

}  // namespace sluice::detail

namespace sluice {

// The explicit instantiations declared at the end of keyed_state_backend.h.
template class KeyedStateBackend<int64_t>;
template class HeapKeyedStateBackend<int64_t>;
template class RocksDBKeyedStateBackend<int64_t>;
template Result<std::unique_ptr<KeyedStateBackend<int64_t>>> make_keyed_state_backend<int64_t>(
    StateBackendKind, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
template std::unique_ptr<KeyedStateBackend<int64_t>> create_keyed_state_backend<int64_t>(
    std::string_view, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
template class KeyedStateBackend<std::string>;
template class HeapKeyedStateBackend<std::string>;
template class RocksDBKeyedStateBackend<std::string>;
template Result<std::unique_ptr<KeyedStateBackend<std::string>>> make_keyed_state_backend<std::string>(
    StateBackendKind, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);
template std::unique_ptr<KeyedStateBackend<std::string>> create_keyed_state_backend<std::string>(
    std::string_view, KeyGroupRange, int32_t, const RocksDBStateBackendOptions&);

}  // namespace sluice
