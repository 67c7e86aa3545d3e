// What the Kafka connector decodes without a broker (connectors/kafka): consumed records through the source's
// deserializers (KafkaRecordDeserializer, ValueStringDeserializer; key and value are arbitrary bytes, either may be
// null), the source's checkpointed state (the enumerator's pending splits and known partitions, restored by
// restore_enumerator, whose documented error is std::invalid_argument; the readers' splits), and the exactly-once
// sink's checkpointed committables with the recovery decisions taken on them (ids_to_fence, to_rewrite). The first
// byte picks which. A restored enumerator must hand out only valid splits (a partition >= 0, an offset >= 0), each
// to its owner subtask, and snapshot again to state that restores to the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kafka_transactions.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/connectors/kafka/kafka_source.h"

namespace {

using namespace sluice;
using namespace sluice::kafka;

class RecordingContext final : public SplitEnumeratorContext<KafkaPartitionSplit> {
 public:
  int32_t current_parallelism() const override { return 3; }
  void assign_split(KafkaPartitionSplit split, int32_t subtask) override {
    if (subtask < 0 || subtask >= current_parallelism() ||
        kafka_split_owner(split.topic, split.partition, current_parallelism()) != subtask || split.partition < 0 ||
        split.offset < 0 || (split.stopping_offset != kNoStoppingOffset && split.stopping_offset < 0)) {
      std::abort();  // an invalid split or the wrong owner
    }
  }
  void signal_no_more_splits(int32_t) override {}
  void call_async(std::function<std::function<void()>()>, int64_t, int64_t) override {}
};

// [flags][u8 topic length][topic][u8 key length][key][value...]: flags bit 0 a key, bit 1 a value, bit 2 a timestamp.
void check_record(const uint8_t* data, size_t size) {
  DataInputView in(data, size);
  const uint8_t flags = in.read_u8();
  KafkaRecordView view;
  view.topic = in.read_bytes(in.read_u8());
  view.partition = static_cast<int32_t>(flags >> 3);
  view.offset = static_cast<int64_t>(size);
  view.timestamp_ms = (flags & 4) != 0 ? static_cast<int64_t>(size) * 1000 : kNoRecordTimestamp;
  view.has_key = (flags & 1) != 0;
  view.key = view.has_key ? in.read_bytes(in.read_u8()) : std::string_view();
  view.has_value = (flags & 2) != 0;
  view.value = view.has_value ? in.read_bytes(in.remaining()) : std::string_view();
  if (!in.ok()) return;
  KafkaRecord record;
  if (!KafkaRecordDeserializer{}(view, record)) std::abort();
  if (record.topic != view.topic || record.key != view.key || record.value != view.value ||
      record.offset != view.offset || record.timestamp_ms != view.timestamp_ms) {
    std::abort();
  }
  std::string value;
  if (!ValueStringDeserializer{}(view, value) || value != view.value) std::abort();
}

std::unique_ptr<SplitEnumerator<KafkaPartitionSplit>> restore(RecordingContext& ctx,
                                                              const std::vector<uint8_t>& state) {
  KafkaSourceOptions options;
  options.bootstrap_servers = "localhost:1";  // never contacted: a restored enumerator does not list partitions
  options.topics = {"bids"};
  options.boundedness = Boundedness::kBounded;
  try {
    return kafka::detail::restore_kafka_enumerator(ctx, options, state);
  } catch (const std::invalid_argument&) {
    return nullptr;
  }
}

void check_enumerator_state(const uint8_t* data, size_t size) {
  RecordingContext ctx;
  auto restored = restore(ctx, std::vector<uint8_t>(data, data + size));
  if (restored == nullptr) return;
  const std::vector<uint8_t> again = restored->snapshot_state(CheckpointId(1));
  auto twice = restore(ctx, again);
  if (twice == nullptr || twice->snapshot_state(CheckpointId(2)) != again) std::abort();
  for (int32_t subtask = 0; subtask < ctx.current_parallelism(); ++subtask) restored->add_reader(subtask);
}

void check_reader_splits(const uint8_t* data, size_t size) {
  auto splits = deserialize_bytes<std::vector<KafkaPartitionSplit>>(data, size, "kafka reader state");
  if (!splits.is_ok()) return;
  for (const KafkaPartitionSplit& s : *splits) {
    (void)s.split_id();
    for (int32_t parallelism : {1, 3, 128}) {
      const int32_t owner = kafka_split_owner(s.topic, s.partition, parallelism);
      if (s.partition >= 0 && (owner < 0 || owner >= parallelism)) std::abort();
    }
  }
}

void check_committables(const uint8_t* data, size_t size) {
  auto restored = deserialize_bytes<std::vector<KafkaCommittable>>(data, size, "kafka sink state");
  if (!restored.is_ok()) return;
  (void)internal::ids_to_fence("sluice-tx", *restored, 5, nullptr);
  const internal::FenceScope scope{1, 2, restored->empty() ? 0 : restored->front().checkpoint_id};
  (void)internal::ids_to_fence("sluice-tx", *restored, 5, &scope);
  std::set<std::string> markers;
  for (size_t i = 0; i < restored->size(); i += 2) markers.insert(internal::marker_value((*restored)[i]));
  (void)internal::to_rewrite(*restored, markers);
  for (const KafkaCommittable& c : *restored) (void)internal::marker_partition(c.subtask, 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 4) {
    case 0: check_record(data + 1, size - 1); break;
    case 1: check_enumerator_state(data + 1, size - 1); break;
    case 2: check_reader_splits(data + 1, size - 1); break;
    case 3: check_committables(data + 1, size - 1); break;
  }
  return 0;
}
