#include "sluice/state/operator_state_store.h"

#include <algorithm>
#include <cstring>

#include "sluice/core/serializer_compatibility.h"
#include "sluice/state/key_group.h"

namespace sluice {
namespace {
constexpr char kMagic[4] = {'S', 'L', 'O', 'S'};
constexpr uint64_t kFormatVersion = 1;
}  // namespace

const char* operator_state_mode_name(OperatorStateMode m) {
  switch (m) {
    case OperatorStateMode::kSplitDistribute: return "list";
    case OperatorStateMode::kUnion: return "union list";
    case OperatorStateMode::kBroadcast: return "broadcast";
  }
  return "?";
}

std::vector<uint8_t> encode_operator_state(const std::vector<SerializedOperatorState>& states) {
  std::vector<const SerializedOperatorState*> sorted;
  for (const auto& s : states) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::vector<uint8_t> buf;
  DataOutputView out(&buf);
  out.write_bytes(kMagic, 4);
  out.write_varint(kFormatVersion);
  out.write_varint(sorted.size());
  for (const auto* s : sorted) {
    out.write_string(s->name);
    out.write_u8(static_cast<uint8_t>(s->mode));
    s->element_serializer.write(out);
    out.write_varint(s->elements.size());
    for (const auto& e : s->elements) out.write_string(e);
  }
  out.write_fixed<uint64_t>(hash_key_bytes(buf.data(), buf.size()));
  return buf;
}

Result<std::vector<SerializedOperatorState>> decode_operator_state(const uint8_t* data, size_t size,
                                                                   std::string_view what) {
  auto corrupt = [&](const std::string& why) {
    return Status::corruption(std::string(what) + ": operator state snapshot " + why);
  };
  if (size < 4 + 1 + 1 + 8 || std::memcmp(data, kMagic, 4) != 0) return corrupt("has no SLOS header");
  uint64_t stored = 0;
  std::memcpy(&stored, data + size - 8, 8);
  if (hash_key_bytes(data, size - 8) != stored) return corrupt("fails its checksum (truncated or modified)");
  DataInputView in(data + 4, size - 12);
  uint64_t version = in.read_varint();
  if (version != kFormatVersion) {
    return corrupt("has format version " + std::to_string(version) + ", this build reads " + std::to_string(kFormatVersion));
  }
  uint64_t n = in.read_varint();
  std::vector<SerializedOperatorState> states;
  for (uint64_t i = 0; i < n && in.ok(); ++i) {
    SerializedOperatorState s;
    s.name = in.read_string();
    uint8_t mode = in.read_u8();
    if (mode > 2) return corrupt("has unknown mode " + std::to_string(mode) + " for state '" + s.name + "'");
    s.mode = static_cast<OperatorStateMode>(mode);
    s.element_serializer = TypeSerializerSnapshot::read(in);
    uint64_t count = in.read_varint();
    if (count > in.remaining()) return corrupt("claims " + std::to_string(count) + " elements in '" + s.name + "'");
    for (uint64_t j = 0; j < count && in.ok(); ++j) s.elements.push_back(in.read_string());
    states.push_back(std::move(s));
  }
  if (!in.ok() || !in.at_end()) return corrupt("is malformed");
  return states;
}

Result<std::vector<uint8_t>> redistribute_operator_state(const std::vector<std::vector<uint8_t>>& old_subtasks,
                                                         int32_t new_index, int32_t new_parallelism) {
  std::map<std::string, SerializedOperatorState> merged;
  std::map<std::string, std::vector<std::string>> split;  // all elements of split-distribute states
  for (size_t i = 0; i < old_subtasks.size(); ++i) {
    if (old_subtasks[i].empty()) continue;
    SLUICE_ASSIGN_OR_RETURN(auto states, decode_operator_state(old_subtasks[i].data(), old_subtasks[i].size(),
                                                               "subtask " + std::to_string(i)));
    for (auto& s : states) {
      auto [it, inserted] = merged.try_emplace(s.name, SerializedOperatorState{s.name, s.mode, s.element_serializer, {}});
      if (it->second.mode != s.mode || it->second.element_serializer != s.element_serializer) {
        return Status::corruption("operator state '" + s.name + "' has different modes or types in different subtasks");
      }
      switch (s.mode) {
        case OperatorStateMode::kSplitDistribute:
          for (auto& e : s.elements) split[s.name].push_back(std::move(e));
          break;
        case OperatorStateMode::kUnion:
          for (auto& e : s.elements) it->second.elements.push_back(std::move(e));
          break;
        case OperatorStateMode::kBroadcast:
          if (inserted) it->second.elements = std::move(s.elements);  // every subtask holds the same copy
          break;
      }
    }
  }
  // At an unchanged parallelism every subtask keeps its own elements, as Flink's round-robin repartitioner does:
  // a subtask restarted alone (region failover) must get back exactly what it snapshotted - a source reader its
  // own splits, a sink its own committables - while the others run on with theirs.
  if (static_cast<int32_t>(old_subtasks.size()) == new_parallelism) {
    if (!old_subtasks[static_cast<size_t>(new_index)].empty()) {
      SLUICE_ASSIGN_OR_RETURN(auto own, decode_operator_state(old_subtasks[static_cast<size_t>(new_index)].data(),
                                                              old_subtasks[static_cast<size_t>(new_index)].size(),
                                                              "subtask " + std::to_string(new_index)));
      for (auto& st : own) {
        if (st.mode == OperatorStateMode::kSplitDistribute) merged[st.name].elements = std::move(st.elements);
      }
    }
    split.clear();
  }
  // Otherwise an even split, as Flink's round-robin repartitioner: contiguous shares, the first ones one larger.
  for (auto& [name, elements] : split) {
    auto n = static_cast<int64_t>(elements.size());
    int64_t begin = n * new_index / new_parallelism, end = n * (new_index + 1) / new_parallelism;
    for (int64_t j = begin; j < end; ++j) merged[name].elements.push_back(std::move(elements[static_cast<size_t>(j)]));
  }
  std::vector<SerializedOperatorState> out;
  for (auto& [name, s] : merged) out.push_back(std::move(s));
  return encode_operator_state(out);
}

Status OperatorStateStore::restore(const std::vector<uint8_t>& bytes, std::string_view what) {
  restored_ = true;
  if (bytes.empty()) return Status::ok();
  SLUICE_ASSIGN_OR_RETURN(auto states, decode_operator_state(bytes.data(), bytes.size(), what));
  for (auto& s : states) pending_[s.name] = std::move(s);
  return Status::ok();
}

detail::OperatorStateBase* OperatorStateStore::find_registered(const std::string& name, OperatorStateMode mode,
                                                               const TypeSerializerSnapshot& serializer) {
  auto it = states_.find(name);
  if (it == states_.end()) return nullptr;
  if (it->second.mode != mode || it->second.serializer != serializer) {
    throw StatusError(Status::invalid_argument(
        "operator state '" + name + "' is registered as " + operator_state_mode_name(it->second.mode) + " state of " +
        it->second.serializer.to_string() + ", requested as " + operator_state_mode_name(mode) + " state of " +
        serializer.to_string()));
  }
  return it->second.state.get();
}

std::vector<std::string> OperatorStateStore::take_restored(const std::string& name, OperatorStateMode mode,
                                                           const TypeSerializerSnapshot& serializer) {
  auto it = pending_.find(name);
  if (it == pending_.end()) return {};
  // same_schema: a snapshot written before field names were recorded restores (operator state does not migrate).
  if (it->second.mode != mode || !same_schema(it->second.element_serializer, serializer)) {
    throw StatusError(Status::invalid_argument(
        "restored operator state '" + name + "' is " + operator_state_mode_name(it->second.mode) + " state of " +
        it->second.element_serializer.to_string() + ", but the program asks for " + operator_state_mode_name(mode) +
        " state of " + serializer.to_string()));
  }
  std::vector<std::string> elements = std::move(it->second.elements);
  pending_.erase(it);
  return elements;
}

void OperatorStateStore::register_state(const std::string& name, OperatorStateMode mode,
                                        TypeSerializerSnapshot serializer,
                                        std::unique_ptr<detail::OperatorStateBase> state) {
  states_[name] = Registered{mode, std::move(serializer), std::move(state)};
}

std::vector<uint8_t> OperatorStateStore::snapshot() const {
  std::vector<SerializedOperatorState> all;
  for (const auto& [name, r] : states_) all.push_back(r.state->serialize());
  for (const auto& [name, s] : pending_) all.push_back(s);
  return encode_operator_state(all);
}

}  // namespace sluice

namespace sluice {
// Declared at the end of operator_state_store.h.
template class detail::OperatorListState<std::vector<uint8_t>>;
template ListState<std::vector<uint8_t>>& OperatorStateStore::get_list<std::vector<uint8_t>>(const std::string&,
                                                                                           OperatorStateMode);
}  // namespace sluice
