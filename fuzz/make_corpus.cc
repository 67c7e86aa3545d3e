// Writes the seed corpora of the harnesses (fuzz/corpus/<harness>/seed-*) with the engine's own writers, so that
// every seed is a valid input the fuzzer mutates from, plus the savepoint kept in tests/data. Not run by CI: run it
// after changing a format and commit what changed (docs/fuzzing.md):
//   build/fuzz/fuzz/make_corpus fuzz/corpus tests/data
// Regression inputs (regression-*) are written by hand and never touched here.
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/channel_state.h"
#include "checkpoint/metadata_codec.h"
#include "fuzz_job.h"
#include "fuzz_records.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/core/clock.h"
#include "sluice/state/incremental_snapshot.h"

namespace {

using namespace sluice;
using namespace sluice::checkpoint;
using namespace sluice::fuzz;
namespace stdfs = std::filesystem;

using Bytes = std::vector<uint8_t>;

stdfs::path g_root;

Bytes bytes_of(std::string_view s) { return Bytes(s.begin(), s.end()); }
Bytes with_mode(uint8_t mode, const Bytes& b) {
  Bytes out{mode};
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

void write(const std::string& harness, const std::string& name, const Bytes& b) {
  const stdfs::path dir = g_root / harness;
  stdfs::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s/seed-%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
}

Bytes read(const stdfs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class T>
T must(Result<T> r) {
  if (!r.is_ok()) {
    std::fprintf(stderr, "%s\n", r.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

// ---- checkpoint metadata ----

// The job id the savepoint-folder harness lays its checkpoint folders out for.
const JobId kJob = [] {
  JobId id;
  if (!JobId::parse("0123456789abcdef0123456789abcdef", &id)) std::abort();
  return id;
}();

StreamStateHandle inline_handle(const Bytes& b) {
  return StreamStateHandle{"", b, b.size(), XXH3_64bits(b.data(), b.size())};
}
StreamStateHandle file_handle(const std::string& path, uint64_t size) { return StreamStateHandle{path, {}, size, 0x5eed}; }

KeyGroupsStateHandle keyed(KeyGroupRange range, StreamStateHandle stream) {
  KeyGroupsStateHandle k;
  k.range = range;
  for (int32_t i = 0; i <= range.num_key_groups(); ++i) k.offsets.push_back(i == 0 ? 0 : stream.size_bytes);
  k.stream = std::move(stream);
  return k;
}

CheckpointMetadata metadata(int64_t id, SnapshotType type, std::vector<OperatorState> operators) {
  CheckpointMetadata m;
  m.checkpoint_id = CheckpointId(id);
  m.job_id = kJob;
  m.trigger_timestamp_ms = 1'700'000'000'000;
  m.type = type;
  m.state_backend = "hashmap";
  m.operators = std::move(operators);
  m.properties = {{"demo.seed", "1"}, {"demo.events", "1000"}};
  return m;
}

OperatorState op(std::string id, int32_t parallelism, std::vector<OperatorSubtaskState> subtasks) {
  OperatorState o;
  o.operator_id = std::move(id);
  o.operator_name = o.operator_id;
  o.parallelism = parallelism;
  o.max_parallelism = kMaxParallelism;
  o.subtasks = std::move(subtasks);
  return o;
}

OperatorSubtaskState subtask(int32_t index) {
  OperatorSubtaskState st;
  st.subtask_index = index;
  return st;
}

IncrementalKeyedStateHandle incremental(int64_t checkpoint, bool native) {
  IncrementalKeyedStateHandle k;
  k.range = KeyGroupRange(0, 63);
  k.backend_id = "00112233445566778899aabbccddeeff";
  k.checkpoint_id = CheckpointId(checkpoint);
  const std::string own = native ? "" : "chk-" + std::to_string(checkpoint) + "/";
  k.shared_files = {{"000012.sst", file_handle(native ? "agg-000012.sst" : "shared/agg-0-000012.sst", 4096), false}};
  if (!native) k.shared_files.push_back({"000009.sst", file_handle("../" + kJob.to_hex() + "/shared/x.sst", 100), true});
  k.private_files = {{"MANIFEST-000005", file_handle(own + "MANIFEST-000005-ab", 120), false},
                     {"CURRENT", file_handle(own + "CURRENT-cd", 16), false}};
  IncrementalStateMeta meta;
  meta.max_parallelism = kMaxParallelism;
  meta.key_serializer = TypeSerializer<std::string>::snapshot();
  meta.states = {StateMetaInfo{"value", StateKind::kValue, TypeSerializer<VoidNamespace>::snapshot(),
                               {TypeSerializer<int64_t>::snapshot()}}};
  k.state_meta = encode_incremental_state_meta(meta);
  return k;
}

std::vector<std::pair<std::string, CheckpointMetadata>> metadata_samples() {
  checkpoint::SubtaskChannelState channels;
  channels.inputs = {{0, {{2, {1, 2, 3, 4}}}}};
  channels.outputs = {{0, 1, {{1, {9, 9}}}}};
  std::vector<std::pair<std::string, CheckpointMetadata>> out;

  OperatorSubtaskState src0 = subtask(0), src1 = subtask(1), agg0 = subtask(0), agg1 = subtask(1);
  src0.operator_state = inline_handle(bytes_of("split-0@42"));
  src1.operator_state = file_handle("chk-7/source-op-0001", 300);
  agg0.keyed_state = keyed(KeyGroupRange(0, 63), file_handle("chk-7/agg-keyed-0002", 2048));
  agg1.keyed_state = keyed(KeyGroupRange(64, 127), inline_handle(bytes_of("key groups 64..127")));
  out.emplace_back("checkpoint", metadata(7, SnapshotType::kCheckpoint,
                                          {op("source", 2, {src0, src1}), op("agg", 2, {agg0, agg1})}));

  OperatorSubtaskState inc = subtask(0);
  inc.incremental_keyed_state = incremental(8, false);
  CheckpointMetadata rocks = metadata(8, SnapshotType::kCheckpoint, {op("agg", 2, {inc})});
  rocks.state_backend = "rocksdb";
  out.emplace_back("incremental", rocks);

  OperatorSubtaskState unaligned = subtask(1);
  unaligned.channel_state = inline_handle(encode_channel_state(channels));
  out.emplace_back("unaligned", metadata(9, SnapshotType::kCheckpoint, {op("agg", 2, {unaligned})}));

  // Entropy-injected data files are recorded as absolute URIs (filesystem_checkpoint_storage.h).
  OperatorSubtaskState entropy = subtask(0);
  entropy.operator_state = file_handle("file:///ckdata/x7k2/ck/" + kJob.to_hex() + "/chk-10/source-op-0003", 64);
  out.emplace_back("entropy", metadata(10, SnapshotType::kCheckpoint, {op("source", 1, {entropy})}));

  OperatorSubtaskState sp0 = subtask(0), sp1 = subtask(1);
  sp0.keyed_state = keyed(KeyGroupRange(0, 63), file_handle("agg-keyed-0004", 512));
  sp1.operator_state = inline_handle(bytes_of("committables"));
  out.emplace_back("savepoint", metadata(11, SnapshotType::kSavepoint, {op("agg", 2, {sp0, sp1})}));

  OperatorSubtaskState native = subtask(0);
  native.incremental_keyed_state = incremental(12, true);
  CheckpointMetadata nat = metadata(12, SnapshotType::kSavepoint, {op("agg", 1, {native})});
  nat.savepoint_format = SavepointFormatType::kNative;
  nat.state_backend = "rocksdb";
  out.emplace_back("native-savepoint", nat);
  return out;
}

// The `_metadata` file's protobuf payload (what the harnesses frame themselves) and its version.
std::pair<uint32_t, Bytes> payload_of(const Bytes& file) {
  uint32_t version = 0;
  uint64_t length = 0;
  for (int i = 3; i >= 0; --i) version = (version << 8) | file[4 + i];
  for (int i = 7; i >= 0; --i) length = (length << 8) | file[8 + i];
  return {version, Bytes(file.begin() + kMetadataHeaderBytes, file.begin() + kMetadataHeaderBytes + length)};
}

void write_metadata_seeds(const stdfs::path& test_data) {
  std::vector<std::pair<std::string, Bytes>> files;
  for (const auto& [name, m] : metadata_samples()) files.emplace_back(name, must(encode_metadata(m)));
  files.emplace_back("tests-data-v1-keyed-state", read(test_data / "savepoints/v1-keyed-state/_metadata"));
  for (const auto& [name, file] : files) {
    const auto [version, payload] = payload_of(file);
    // checkpoint_metadata_fuzzer: even first byte, the file; odd, the payload with version (byte >> 1) + 1.
    write("checkpoint_metadata_fuzzer", name, with_mode(0, file));
    write("checkpoint_metadata_fuzzer", name + "-framed", with_mode(static_cast<uint8_t>(1 | ((version - 1) << 1)), payload));
    // savepoint_folder_fuzzer: bit 0 a chk-<n> folder, bit 1 framed with version (byte >> 2) + 1.
    const bool is_savepoint = name.find("savepoint") != std::string::npos || name.starts_with("tests-data");
    const uint8_t folder = is_savepoint ? 0 : 1;
    write("savepoint_folder_fuzzer", name, with_mode(folder, file));
    write("savepoint_folder_fuzzer", name + "-framed",
          with_mode(static_cast<uint8_t>(folder | 2 | ((version - 1) << 2)), payload));
  }
}

// ---- channel state ----

void write_channel_state_seeds() {
  checkpoint::SubtaskChannelState empty;
  write("channel_state_fuzzer", "empty", encode_channel_state(empty));
  checkpoint::SubtaskChannelState inputs;
  inputs.inputs = {{0, {{1, {7}}, {3, Bytes(40, 0xab)}}}, {2, {{1, bytes_of("record")}}}};
  write("channel_state_fuzzer", "inputs", encode_channel_state(inputs));
  checkpoint::SubtaskChannelState both = inputs;
  both.outputs = {{0, 0, {{2, {1, 2}}}}, {0, 3, {{1, {3}}}}, {1, 0, {{5, Bytes(200, 1)}}}};
  write("channel_state_fuzzer", "inputs-and-outputs", encode_channel_state(both));
}

// ---- keyed state, operator state, incremental state meta ----

namespace old_schema {
// Position as an earlier version of the program had it: a restore migrates it.
struct Position {
  std::string symbol;
  int32_t lots = 0;
  SLUICE_FIELDS(Position, symbol, lots)
};
}  // namespace old_schema

void write_state_seeds(const stdfs::path& test_data) {
  auto heap = make_keyed_state_backend<std::string>(StateBackendKind::kHashMap, KeyGroupRange(0, kMaxParallelism - 1),
                                                    kMaxParallelism);
  if (!heap.is_ok()) std::abort();
  KeyedStateBackend<std::string>& b = **heap;
  b.set_ttl_clock(std::make_shared<ManualClock>(1'000'000));
  KeyedStates s = register_states(b);
  std::set<int32_t> groups;
  for (int i = 0; i < 24; ++i) {
    const std::string key = "key-" + std::to_string(i);
    b.set_current_key(key);
    groups.insert(key_group_for_key_bytes(serialize_bytes(key).data(), serialize_bytes(key).size(), kMaxParallelism).value());
    s.value->update(i);
    s.list->add_all({"a" + std::to_string(i), "b"});
    s.map->put("x", i);
    s.reducing->add(i);
    s.aggregating->add("e");
    s.windowed->set_current_namespace(Window{i % 3});
    s.windowed->update("w" + std::to_string(i));
    s.position->update(Position{"ACME", i, {1.5, 2.5}, i % 2 == 0 ? std::optional<std::string>("note") : std::nullopt});
    s.ttl_value->update(i * 10);
    if (groups.size() >= 3) break;
  }
  // Every seed must restore, or the fuzzer would start from inputs the harness refuses at once.
  auto check_restores = [](const Bytes& snap, const std::string& name) {
    auto fresh = make_keyed_state_backend<std::string>(StateBackendKind::kHashMap,
                                                       KeyGroupRange(0, kMaxParallelism - 1), kMaxParallelism);
    (void)register_states(**fresh);
    Status st = (*fresh)->restore_key_group(snap.data(), snap.size());
    if (!st.is_ok()) {
      std::fprintf(stderr, "seed %s does not restore: %s\n", name.c_str(), st.to_string().c_str());
      std::exit(1);
    }
  };
  int n = 0;
  for (int32_t kg : groups) {
    Bytes snap;
    if (!b.snapshot_key_group(KeyGroup(kg), &snap).is_ok()) std::abort();
    check_restores(snap, "key group " + std::to_string(kg));
    const std::string name = "key-group-" + std::to_string(kg);
    // Bit 0: RocksDB; bit 1: registered before the restore; bit 2: checksum rewritten by the harness.
    write("state_snapshot_fuzzer", name + "-heap", with_mode(n == 0 ? 0 : 4, snap));
    write("state_snapshot_fuzzer", name + "-heap-registered", with_mode(n == 1 ? 2 : 6, snap));
    if (n == 0) write("state_snapshot_fuzzer", name + "-rocksdb", with_mode(5, snap));
    ++n;
  }
  // A key group of another schema of Position (a migration on restore) and of an empty backend.
  auto older = make_keyed_state_backend<std::string>(StateBackendKind::kHashMap, KeyGroupRange(0, kMaxParallelism - 1),
                                                     kMaxParallelism);
  auto& ob = **older;
  ValueState<old_schema::Position>& old_position = ob.get_state(ValueStateDescriptor<old_schema::Position>("position"));
  ob.set_current_key("key-0");
  old_position.update(old_schema::Position{"OLD", 3});
  const KeyGroup kg0 = key_group_for_key_bytes(serialize_bytes(std::string("key-0")).data(),
                                               serialize_bytes(std::string("key-0")).size(), kMaxParallelism);
  Bytes migrated, empty;
  if (!ob.snapshot_key_group(kg0, &migrated).is_ok() || !ob.snapshot_key_group(KeyGroup(0), &empty).is_ok()) {
    std::abort();
  }
  check_restores(migrated, "key group of the old Position");
  write("state_snapshot_fuzzer", "key-group-old-position", with_mode(6, migrated));
  write("state_snapshot_fuzzer", "key-group-empty", with_mode(4, empty));

  // The savepoint in tests/data: its keyed state files cut at the key-group offsets of its `_metadata`.
  const stdfs::path sp = test_data / "savepoints/v1-keyed-state";
  CheckpointMetadata md = must(decode_metadata(read(sp / "_metadata"), "tests/data _metadata"));
  for (const OperatorState& o : md.operators) {
    for (const OperatorSubtaskState& st : o.subtasks) {
      if (!st.keyed_state || st.keyed_state->stream.is_inline()) continue;
      const Bytes stream = read(sp / st.keyed_state->stream.relative_path);
      const auto& offsets = st.keyed_state->offsets;
      for (size_t i = 0; i + 1 < offsets.size(); ++i) {
        if (offsets[i] == offsets[i + 1]) continue;
        const Bytes one(stream.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                        stream.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
        write("state_snapshot_fuzzer", "tests-data-" + o.operator_id + "-subtask-" + std::to_string(st.subtask_index),
              with_mode(4, one));
        break;  // one key group per subtask is plenty
      }
    }
  }

  OperatorStateStore store;
  OperatorStates os = register_operator_states(store);
  os.splits->add_all({"bids-0@10", "bids-1@7"});
  os.offsets->add(42);
  os.rules->put("max-price", 100);
  const Bytes op_state = store.snapshot();
  write("state_snapshot_fuzzer", "operator-state", with_mode(8 | 4, op_state));
  write("state_snapshot_fuzzer", "operator-state-exact", with_mode(8, op_state));

  IncrementalStateMeta meta;
  meta.max_parallelism = kMaxParallelism;
  meta.key_serializer = TypeSerializer<std::string>::snapshot();
  meta.states = {StateMetaInfo{"list", StateKind::kList, TypeSerializer<VoidNamespace>::snapshot(),
                               {TypeSerializer<std::string>::snapshot()}},
                 StateMetaInfo{"position", StateKind::kValue, TypeSerializer<VoidNamespace>::snapshot(),
                               {TypeSerializer<Position>::snapshot()}}};
  write("state_snapshot_fuzzer", "incremental-state-meta", with_mode(16, encode_incremental_state_meta(meta)));
}

// ---- configuration ----

void write_config_seeds() {
  // First byte: 0 YAML string, 1 YAML file, 2 -D lines, 3 one option value.
  write("config_fuzzer", "yaml-flat", with_mode(0, bytes_of(R"(execution.checkpointing.interval: 10s
execution.checkpointing.dir: file:///var/ck
state.backend.type: rocksdb
state.backend.rocksdb.memory.managed: true
taskmanager.memory.managed.size: 256mb
parallelism.default: 4
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 100 ms
)")));
  write("config_fuzzer", "yaml-nested", with_mode(1, bytes_of(R"(execution:
  checkpointing:
    interval: 1 min
    mode: AT_LEAST_ONCE
    unaligned:
      enabled: true
  runtime-mode: BATCH
state.checkpoints.dir: /tmp/ck   # a deprecated key
pipeline: {max-parallelism: 256}
s3.secret-key: "x"
)")));
  write("config_fuzzer", "dynamic-properties", with_mode(2, bytes_of("parallelism.default=2\n"
                                                                     "state.backend.type = hashmap\n"
                                                                     "execution.buffer-timeout.interval=5ms\n"
                                                                     "rest.port=0\n"
                                                                     "state.savepoints.dir=/sp\n")));
  for (const char* v : {"100ms", "1 min", "64mb", "1gb", "ROCKSDB", "exactly_once", "true", "-1", "+4", "0.75", "",
                        "1.5e3"}) {
    std::string name = *v ? v : "empty";
    std::replace(name.begin(), name.end(), ' ', '_');
    write("config_fuzzer", "value-" + name, with_mode(3, bytes_of(v)));
  }
}

// ---- REST ----

void write_rest_seeds() {
  const std::string job = "/jobs/0123456789abcdeffedcba9876543210";
  auto req = [](const std::string& method, const std::string& target, const std::string& body = "") {
    std::string r = method + " " + target + " HTTP/1.1\r\nHost: localhost:8081\r\n";
    if (!body.empty()) r += "Content-Type: application/json\r\n";
    if (method != "GET") r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return bytes_of(r + "Connection: close\r\n\r\n" + body);
  };
  write("rest_request_fuzzer", "jobs", req("GET", "/jobs"));
  write("rest_request_fuzzer", "job", req("GET", job));
  write("rest_request_fuzzer", "checkpoints", req("GET", job + "/checkpoints"));
  write("rest_request_fuzzer", "checkpoints-sluice", req("GET", job + "/checkpoints?format=sluice"));
  write("rest_request_fuzzer", "cancel", req("PATCH", job + "?mode=cancel"));
  write("rest_request_fuzzer", "cancel-no-length",
        bytes_of("PATCH " + job + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  write("rest_request_fuzzer", "savepoint",
        req("POST", job + "/savepoints", R"({"target-directory":"/sp","cancel-job":false,"formatType":"NATIVE"})"));
  write("rest_request_fuzzer", "stop", req("POST", job + "/stop", R"({"targetDirectory":"/sp","drain":true})"));
  write("rest_request_fuzzer", "savepoint-status",
        req("GET", job + "/savepoints/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
  write("rest_request_fuzzer", "savepoint-failed", req("GET", job + "/savepoints/cccccccccccccccccccccccccccccccc"));
  write("rest_request_fuzzer", "chunked",
        bytes_of("POST " + job + "/stop HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "b\r\n{\"drain\":1}\r\n0\r\n\r\n"));
}

// ---- records ----

template <class T>
void write_record(int type, const std::string& name, const T& v) {
  write("serializer_fuzzer", name, with_mode(static_cast<uint8_t>(type), serialize_bytes(v)));
  // Mode 0x80: the serializer snapshot the bytes were written with, then the bytes (a restore's migration).
  Bytes migrated;
  DataOutputView out(&migrated);
  TypeSerializer<T>::snapshot().write(out);
  serialize_append(v, migrated);
  write("serializer_fuzzer", name + "-migrated", with_mode(static_cast<uint8_t>(0x80 | type), migrated));
}

void write_record_seeds() {
  const Item item{7, "seven"};
  Order order{"ada", "1 Main St", "", {item, {8, "eight"}}, item, {{"views", 3}}, {1, 2, 3, 4}, Color::kBlue, true};
  write_record(0, "bool", true);
  write_record(1, "i32", int32_t{-42});
  write_record(2, "u64", ~uint64_t{0});
  write_record(3, "f64", 3.25);
  write_record(4, "enum", Color::kBlue);
  write_record(5, "string", std::string("hello"));
  write_record(6, "vector-i64", std::vector<int64_t>{1, -2, 3});
  write_record(7, "vector-string", std::vector<std::string>{"a", "", "ccc"});
  write_record(8, "map", std::map<std::string, int64_t>{{"a", 1}, {"b", 2}});
  write_record(9, "hash-map", std::unordered_map<int32_t, std::string>{{1, "x"}});
  write_record(10, "optional", std::optional<std::string>("set"));
  write_record(11, "pair", std::pair<std::string, int32_t>{"k", 9});
  write_record(12, "tuple", std::tuple<int8_t, std::string, float, bool>{-1, "t", 1.5f, false});
  write_record(13, "array", std::array<uint16_t, 3>{1, 2, 3});
  write_record(14, "struct", item);
  write_record(15, "order", order);
  write_record(16, "orders", std::vector<Order>{order, Order{}});
  write_record(17, "nested", std::vector<std::vector<std::optional<Item>>>{{item, std::nullopt}, {}});
  write_record(18, "empties", std::vector<Empty>(3));
  write_record(19, "map-of-orders", std::map<int64_t, std::vector<Order>>{{1, {order}}});
  // Item as an older program wrote it (its label added later): migrates.
  TypeSerializerSnapshot old_item{"Item", 1, {TypeSerializer<int32_t>::snapshot()}, std::vector<std::string>{"id"}};
  Bytes bytes;
  DataOutputView out(&bytes);
  old_item.write(out);
  serialize_append(int32_t{5}, bytes);
  write("serializer_fuzzer", "struct-field-added", with_mode(0x80 | 14, bytes));
}

// ---- Kafka ----

void write_kafka_seeds() {
  // 0: a record view: [flags: bit 0 key, bit 1 value, bit 2 timestamp, partition << 3][topic][key][value].
  Bytes record{0x0f, 4, 'b', 'i', 'd', 's', 3, 'k', 'e', 'y'};
  const Bytes value = bytes_of("{\"auction\":1,\"price\":10}");
  record.insert(record.end(), value.begin(), value.end());
  write("kafka_record_fuzzer", "record", with_mode(0, record));
  write("kafka_record_fuzzer", "tombstone", with_mode(0, Bytes{0x01, 4, 'b', 'i', 'd', 's', 1, 'k'}));
  // 1: the enumerator's state (kafka_enumerator.cc: pending splits, then the partitions it knows).
  const std::vector<kafka::KafkaPartitionSplit> splits{{"bids", 0, 10, kafka::kNoStoppingOffset}, {"bids", 1, 0, 50}};
  Bytes state = serialize_bytes(splits);
  serialize_append(std::vector<std::pair<std::string, int32_t>>{{"bids", 0}, {"bids", 1}, {"bids", 2}}, state);
  write("kafka_record_fuzzer", "enumerator-state", with_mode(1, state));
  write("kafka_record_fuzzer", "enumerator-state-before-discovery", with_mode(1, serialize_bytes(splits)));
  // 2: a reader's splits.
  write("kafka_record_fuzzer", "reader-splits", with_mode(2, serialize_bytes(splits)));
  // 3: the exactly-once sink's committables.
  kafka::KafkaCommittable c;
  c.transactional_id = "sluice-tx-0-7";
  c.job_id = kJob.to_hex();
  c.attempt = 1;
  c.checkpoint_id = 7;
  c.subtask = 0;
  c.marker_topic = "sluice-tx.markers";
  c.marker_offset = 12;
  c.pool_ids = {"sluice-tx-0-6", "sluice-tx-0-7"};
  c.records = {kafka::KafkaProducerRecord{"out", -1, "k", true, "v", 1000}};
  kafka::KafkaCommittable d = c;
  d.transactional_id = "sluice-tx-1-7";
  d.subtask = 1;
  d.records.clear();
  write("kafka_record_fuzzer", "committables", with_mode(3, serialize_bytes(std::vector<kafka::KafkaCommittable>{c, d})));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <fuzz/corpus> <tests/data>\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  const stdfs::path test_data = argv[2];
  write_metadata_seeds(test_data);
  write_channel_state_seeds();
  write_state_seeds(test_data);
  write_config_seeds();
  write_rest_seeds();
  write_record_seeds();
  write_kafka_seeds();
  return 0;
}
