// The record writers of a task's outputs, read back through an input gate: a pipelined writer sends records as
// they are and watermarks as events on every channel, a blocking one frames each record with its key and writes
// no watermarks.
#include "runtime/network/partition_record_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/network/blocking_record_framing.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/watermark_event.h"

namespace sluice::runtime {
namespace {

const uint8_t* writer_bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// What one channel delivered: its data buffers' bytes, and "wm:<ms>" for each watermark event, in order.
std::vector<std::vector<std::string>> delivered_by_channel(InputGate& gate, int32_t channels) {
  std::vector<std::vector<std::string>> out(static_cast<size_t>(channels));
  while (auto next = gate.poll_next()) {
    auto& seen = out[static_cast<size_t>(next->channel_index)];
    if (next->is_buffer()) {
      Buffer& b = next->buffer();
      seen.emplace_back(b.bytes.begin(), b.bytes.end());
      gate.recycle(std::move(b));
    } else {
      auto wm = decode_watermark(next->event());
      seen.push_back(wm.is_ok() ? "wm:" + std::to_string(*wm) : "event");
    }
  }
  return out;
}

std::string framed_entry(const std::string& key, const std::string& record) {
  std::vector<uint8_t> framed;
  append_blocking_record(writer_bytes(key), key.size(), writer_bytes(record), record.size(), &framed);
  return std::string(framed.begin(), framed.end());
}

TEST(PartitionRecordWriter, WritesRecordsAsTheyAreAndWatermarksOnEveryChannel) {
  TaskNotifier producer, consumer;
  ResultPartition partition(2, NetworkConfig{}, &producer);
  InputGate gate({partition.channel(0), partition.channel(1)}, &consumer);
  PartitionRecordWriter writer(&partition, 2);
  EXPECT_EQ(writer.num_channels(), 2);
  const std::string a = "abc", b = "de";
  writer.emit(1, writer_bytes(a), a.size());
  writer.broadcast_emit(writer_bytes(b), b.size());
  writer.broadcast_watermark(42);  // flushes what is ahead of it: records stay in order with the event
  auto seen = delivered_by_channel(gate, 2);
  EXPECT_EQ(seen[0], (std::vector<std::string>{"de", "wm:42"}));
  EXPECT_EQ(seen[1], (std::vector<std::string>{"abcde", "wm:42"}));
}

TEST(BlockingPartitionRecordWriter, FramesEveryRecordWithItsKeyAndDropsWatermarks) {
  TaskNotifier producer, consumer;
  ResultPartition partition(2, NetworkConfig{}, &producer);
  InputGate gate({partition.channel(0), partition.channel(1)}, &consumer);
  BlockingPartitionRecordWriter writer(&partition, 2, /*keyed=*/true);
  EXPECT_TRUE(writer.wants_keys());
  EXPECT_FALSE(BlockingPartitionRecordWriter(&partition, 2, false).wants_keys());
  const std::string key = "k", rec = "rec", plain = "r2", all = "b";
  writer.emit_keyed(0, writer_bytes(key), key.size(), writer_bytes(rec), rec.size());
  writer.emit(0, writer_bytes(plain), plain.size());
  writer.broadcast_emit(writer_bytes(all), all.size());
  writer.broadcast_watermark(7);
  writer.broadcast_watermark_status(true);
  partition.flush_all();
  auto seen = delivered_by_channel(gate, 2);
  EXPECT_EQ(seen[0], (std::vector<std::string>{framed_entry("k", "rec") + framed_entry("", "r2") + framed_entry("", "b")}));
  EXPECT_EQ(seen[1], (std::vector<std::string>{framed_entry("", "b")}));
}

}  // namespace
}  // namespace sluice::runtime
