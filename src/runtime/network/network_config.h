// NetworkConfig: sizes of the in-process exchange's buffers and its flow-control bounds.
//
// Names follow Flink's configuration keys (taskmanager.memory.segment-size,
// taskmanager.network.memory.buffers-per-channel, taskmanager.network.memory.max-buffers-per-channel).
// The bound these give on data in flight per channel is explained in README.md in this folder.
// Thread-safety: a value; copied into every partition and channel.
#pragma once

#include <cstdint>

#include "sluice/core/status.h"

namespace sluice::runtime {

struct NetworkConfig {
  // Capacity of one network buffer (taskmanager.memory.segment-size, default 32 KiB). Records never span
  // buffers: a record larger than this travels alone in an oversized buffer sized to the record.
  int32_t buffer_size_bytes = 32 * 1024;
  // Receiver buffers per input channel, i.e. the credit a receiver grants its sender
  // (taskmanager.network.memory.buffers-per-channel, default 2). A buffer holds its credit from the moment
  // it reaches the receiver until the consumer recycles it.
  int32_t credits_per_channel = 2;
  // Buffers a sender may hold per subpartition: the one being filled plus those queued awaiting credit
  // (taskmanager.network.memory.max-buffers-per-channel, default 10). Reaching it blocks the producer.
  int32_t max_buffers_per_channel = 10;

  // InvalidArgument naming the field if any value is not positive.
  Status validate() const;
};

}  // namespace sluice::runtime
