// Shared by the asynchronous snapshot tests (run on every backend): a backend with all state kinds, random
// operations applied to the backend and to a plain model, and a canonical dump of either for comparison.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "backend_test_util.h"

namespace sluice::cow_test {

using Backend = KeyedStateBackend<std::string>;
using HeapBackend = HeapKeyedStateBackend<std::string>;
using RocksBackend = RocksDBKeyedStateBackend<std::string>;
using Dump = std::map<std::string, std::string>;  // "state|key[|namespace]" -> canonical value

struct Window {
  int64_t start = 0;
  bool operator==(const Window&) const = default;
  SLUICE_FIELDS(Window, start)
};

struct Count final : AggregateFunction<std::string, int64_t, int64_t> {
  int64_t create_accumulator() const override { return 0; }
  void add(const std::string&, int64_t& acc) const override { ++acc; }
  int64_t get_result(const int64_t& acc) const override { return acc; }
  void merge(int64_t& t, const int64_t& o) const override { t += o; }
};

struct Descriptors {
  ValueStateDescriptor<int64_t> value{"value"};
  ListStateDescriptor<std::string> list{"list"};
  MapStateDescriptor<std::string, int64_t> map{"map"};
  ReducingStateDescriptor<int64_t> reducing{"reducing", [](const int64_t& x, const int64_t& y) { return x + y; }};
  AggregatingStateDescriptor<std::string, int64_t, int64_t> aggregating{"aggregating", std::make_shared<Count>()};
  ListStateDescriptor<std::string> windowed{"windowed"};
};
inline const Descriptors& descriptors() {
  static const Descriptors d;
  return d;
}

// All five kinds plus a namespaced merging list, registered on a backend.
struct States {
  explicit States(KeyedStateBackend<std::string>& b)
      : value(b.get_state(descriptors().value)),
        list(b.get_list_state(descriptors().list)),
        map(b.get_map_state(descriptors().map)),
        reducing(b.get_reducing_state(descriptors().reducing)),
        aggregating(b.get_aggregating_state(descriptors().aggregating)),
        windowed(b.get_internal_state<Window>(descriptors().windowed)) {}
  ValueState<int64_t>& value;
  ListState<std::string>& list;
  MapState<std::string, int64_t>& map;
  ReducingState<int64_t>& reducing;
  AggregatingState<std::string, int64_t>& aggregating;
  InternalListState<Window, std::string>& windowed;
};

inline std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + ",";
  return s;
}
template <class M>
std::string map_repr(const M& m) {
  std::map<std::string, int64_t> sorted(m.begin(), m.end());
  std::string s;
  for (const auto& [k, v] : sorted) s += k + "=" + std::to_string(v) + ";";
  return s;
}

// Every entry of every state of a heap backend (all must be registered), read through its tables.
inline Dump dump_heap(const HeapBackend& b) {
  const Descriptors& d = descriptors();
  Dump out;
  for (KeyGroup kg : b.key_group_range()) {
    b.for_each_entry(d.value, kg, [&](const std::string& k, const VoidNamespace&, const int64_t& v) {
      out["value|" + k] = std::to_string(v);
    });
    b.for_each_entry(d.list, kg, [&](const std::string& k, const VoidNamespace&, const std::vector<std::string>& v) {
      out["list|" + k] = join(v);
    });
    b.for_each_entry(d.map, kg, [&](const std::string& k, const VoidNamespace&, const auto& m) {
      out["map|" + k] = map_repr(m);
    });
    b.for_each_entry(d.reducing, kg, [&](const std::string& k, const VoidNamespace&, const int64_t& v) {
      out["reducing|" + k] = std::to_string(v);
    });
    b.for_each_entry(d.aggregating, kg, [&](const std::string& k, const VoidNamespace&, const int64_t& v) {
      out["aggregating|" + k] = std::to_string(v);
    });
    b.for_each_entry<Window>(d.windowed, kg, [&](const std::string& k, const Window& w, const auto& v) {
      out["windowed|" + k + "|" + std::to_string(w.start)] = join(v);
    });
  }
  return out;
}

// Every entry of the six states of b, decoded from its synchronous snapshot (any backend).
inline Dump dump_via_snapshot(const Backend& b) {
  Dump out;
  auto decode = [](std::string_view bytes, auto* v) {
    using T = std::remove_pointer_t<decltype(v)>;
    auto r = deserialize_bytes<T>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (r.is_ok()) *v = std::move(r).value();
  };
  for (KeyGroup kg : b.key_group_range()) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(b.snapshot_key_group(kg, &bytes).is_ok());
    auto view = parse_key_group_snapshot(bytes.data(), bytes.size());
    EXPECT_TRUE(view.is_ok()) << view.status().to_string();
    if (!view.is_ok()) return out;
    for (const StateSnapshotView& st : view->states) {
      SnapshotEntryReader reader(st);
      std::string_view kb, nb, vb;
      while (reader.next(&kb, &nb, &vb)) {
        std::string k;
        decode(kb, &k);
        const std::string& name = st.meta.name;
        if (name == "list") {
          std::vector<std::string> v;
          decode(vb, &v);
          out["list|" + k] = join(v);
        } else if (name == "map") {
          std::map<std::string, int64_t> m;
          decode(vb, &m);
          out["map|" + k] = map_repr(m);
        } else if (name == "windowed") {
          Window w;
          decode(nb, &w);
          std::vector<std::string> v;
          decode(vb, &v);
          out["windowed|" + k + "|" + std::to_string(w.start)] = join(v);
        } else if (name == "value" || name == "reducing" || name == "aggregating") {
          int64_t v = 0;
          decode(vb, &v);
          out[name + "|" + k] = std::to_string(v);
        }
      }
    }
  }
  return out;
}

// The heap backend is read through its tables (independent of its snapshot code), others via snapshots.
inline Dump dump(const Backend& b) {
  if (const auto* heap = dynamic_cast<const HeapBackend*>(&b)) return dump_heap(*heap);
  return dump_via_snapshot(b);
}

// Snapshots a backend keeps for live KeyedStateSnapshots (heap: versions; RocksDB: RocksDB snapshots).
inline size_t live_snapshots(const Backend& b) {
  if (const auto* heap = dynamic_cast<const HeapBackend*>(&b)) return heap->state_versions().live_snapshots();
  return dynamic_cast<const RocksBackend&>(b).live_snapshots();
}

// The same state kept in plain containers, changed by the same operations.
struct Model {
  std::map<std::string, int64_t> value, reducing, aggregating;
  std::map<std::string, std::vector<std::string>> list;
  std::map<std::string, std::map<std::string, int64_t>> map;
  std::map<std::pair<std::string, int64_t>, std::vector<std::string>> windowed;

  Dump dump() const {
    Dump out;
    for (const auto& [k, v] : value) out["value|" + k] = std::to_string(v);
    for (const auto& [k, v] : list) out["list|" + k] = join(v);
    for (const auto& [k, v] : map) out["map|" + k] = map_repr(v);
    for (const auto& [k, v] : reducing) out["reducing|" + k] = std::to_string(v);
    for (const auto& [k, v] : aggregating) out["aggregating|" + k] = std::to_string(v);
    for (const auto& [kw, v] : windowed) out["windowed|" + kw.first + "|" + std::to_string(kw.second)] = join(v);
    return out;
  }
};

inline std::string key_of(int64_t i) { return "key-" + std::to_string(i); }

// Draws keys from [0, keys) and sometimes adds a new key (keys grows, so maps rehash).
class Mutator {
 public:
  Mutator(Backend& b, States& s, Model* model, uint64_t seed, int64_t keys)
      : b_(b), s_(s), m_(model), rng_(seed), keys_(keys) {}

  int64_t keys() const { return keys_; }

  // Sets every state of key i (inserting it in every map).
  void fill_key(int64_t i) {
    const std::string k = key_of(i);
    b_.set_current_key(k);
    s_.value.update(i);
    s_.list.add_all({"a" + std::to_string(i), "b"});
    s_.map.put("x", i);
    s_.reducing.add(i);
    s_.aggregating.add("e");
    s_.windowed.set_current_namespace(Window{i % 3});
    s_.windowed.add("w" + std::to_string(i));
    if (m_ != nullptr) {
      m_->value[k] = i;
      auto& l = m_->list[k];
      l.push_back("a" + std::to_string(i));
      l.push_back("b");
      m_->map[k]["x"] = i;
      m_->reducing[k] += i;
      m_->aggregating[k] += 1;
      m_->windowed[{k, i % 3}].push_back("w" + std::to_string(i));
    }
  }

  void insert_new_key() { fill_key(keys_++); }

  // One random operation on one random key.
  void step() {
    const int op = static_cast<int>(rng_() % 13);
    if (op == 12) {
      insert_new_key();
      return;
    }
    const int64_t i = static_cast<int64_t>(rng_() % static_cast<uint64_t>(keys_));
    const std::string k = key_of(i);
    const int64_t x = static_cast<int64_t>(rng_() % 1000);
    const std::string uk = "u" + std::to_string(x % 5);
    b_.set_current_key(k);
    switch (op) {
      case 0: {  // read-modify-write
        const int64_t v = s_.value.value().value_or(0) + 1;
        s_.value.update(v);
        if (m_) m_->value[k] = v;
        break;
      }
      case 1:
        s_.list.add("l" + std::to_string(x));
        if (m_) m_->list[k].push_back("l" + std::to_string(x));
        break;
      case 2:
        if (x % 2 == 0) {
          s_.list.update({});
          if (m_) m_->list.erase(k);
        } else {
          s_.list.update({"r" + std::to_string(x)});
          if (m_) m_->list[k] = {"r" + std::to_string(x)};
        }
        break;
      case 3:
        s_.map.put(uk, x);
        if (m_) m_->map[k][uk] = x;
        break;
      case 4:
        s_.map.remove(uk);
        if (m_) {
          auto it = m_->map.find(k);
          if (it != m_->map.end()) {
            it->second.erase(uk);
            if (it->second.empty()) m_->map.erase(it);
          }
        }
        break;
      case 5:
        s_.reducing.add(x);
        if (m_) m_->reducing[k] += x;
        break;
      case 6:
        s_.aggregating.add("e");
        if (m_) m_->aggregating[k] += 1;
        break;
      case 7:
        s_.windowed.set_current_namespace(Window{x % 4});
        s_.windowed.add("n" + std::to_string(x));
        if (m_) m_->windowed[{k, x % 4}].push_back("n" + std::to_string(x));
        break;
      case 8: {  // merge windows 1 and 2 into 0
        s_.windowed.merge_namespaces(Window{0}, {Window{1}, Window{2}});
        if (m_) {
          std::vector<std::string> merged;
          bool any = false;
          for (int64_t w : {1, 2}) {
            auto it = m_->windowed.find({k, w});
            if (it == m_->windowed.end()) continue;
            any = true;
            merged.insert(merged.end(), it->second.begin(), it->second.end());
            m_->windowed.erase(it);
          }
          if (any) {
            auto& t = m_->windowed[{k, 0}];
            t.insert(t.end(), merged.begin(), merged.end());
          }
        }
        break;
      }
      case 9:  // clear the key in every state
        s_.value.clear();
        s_.list.clear();
        s_.map.clear();
        s_.reducing.clear();
        s_.aggregating.clear();
        for (int64_t w = 0; w < 4; ++w) {
          s_.windowed.set_current_namespace(Window{w});
          s_.windowed.clear();
        }
        if (m_) {
          m_->value.erase(k);
          m_->list.erase(k);
          m_->map.erase(k);
          m_->reducing.erase(k);
          m_->aggregating.erase(k);
          for (int64_t w = 0; w < 4; ++w) m_->windowed.erase({k, w});
        }
        break;
      case 10:
        s_.value.clear();
        if (m_) m_->value.erase(k);
        break;
      default:  // 11: refill (updates every state)
        fill_key(i);
        break;
    }
  }

 private:
  Backend& b_;
  States& s_;
  Model* m_;
  std::mt19937_64 rng_;
  int64_t keys_;
};

// The synchronous snapshot of every key group: the reference an asynchronous snapshot must equal.
inline std::map<int32_t, std::vector<uint8_t>> sync_snapshot(const Backend& b) {
  std::map<int32_t, std::vector<uint8_t>> out;
  for (KeyGroup kg : b.key_group_range()) {
    Status st = b.snapshot_key_group(kg, &out[kg.value()]);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
  }
  return out;
}

// An asynchronous snapshot's key group equals the synchronous reference: the same bytes, or nothing when the
// reference has no state.
inline void expect_same_key_group(int32_t kg, const std::vector<uint8_t>& async_bytes,
                                  const std::vector<uint8_t>& reference) {
  auto view = parse_key_group_snapshot(reference.data(), reference.size());
  ASSERT_TRUE(view.is_ok()) << view.status().to_string();
  if (view->states.empty()) {
    EXPECT_TRUE(async_bytes.empty()) << "key group " << kg;
  } else {
    EXPECT_TRUE(async_bytes == reference) << "key group " << kg << ": " << async_bytes.size() << " vs "
                                          << reference.size() << " bytes";
  }
}

// Restores a stream written by write_all_key_groups into a fresh backend of `kind` and dumps it.
inline Dump restore_and_dump(StateBackendKind kind, KeyGroupRange range, int32_t max_parallelism,
                             const std::vector<uint8_t>& stream, const std::vector<uint64_t>& offsets) {
  std::unique_ptr<Backend> owned = testing_backends::make_backend<std::string>(kind, range, max_parallelism);
  Backend& fresh = *owned;
  States registered(fresh);
  EXPECT_EQ(offsets.size(), static_cast<size_t>(range.num_key_groups()) + 1);
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (offsets[i] == offsets[i + 1]) continue;  // empty key group
    Status st = fresh.restore_key_group(stream.data() + offsets[i], offsets[i + 1] - offsets[i]);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
  }
  return dump(fresh);
}

// A counting semaphore for handing turns between the task thread and a snapshot thread.
class Turns {
 public:
  void give() {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++n_;
    }
    cv_.notify_one();
  }
  void take() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return n_ > 0; });
    --n_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_ = 0;
};

}  // namespace sluice::cow_test
