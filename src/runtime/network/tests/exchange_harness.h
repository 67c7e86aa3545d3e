// The multi-threaded exchange the network tests run in-process and over TCP: N producers x M consumers, one
// thread each, as tasks would run them, checking order per channel, exactly-once delivery, events in place and
// lost wake-ups (a wait that runs into its timeout).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/tests/test_util.h"

namespace sluice::runtime::testing {

using namespace std::chrono_literals;

// Consumer c's input channels (input channel p fed by producer p), given every producer's partition.
using Wiring = std::function<std::vector<std::shared_ptr<Channel>>(
    int32_t consumer, const std::vector<std::unique_ptr<ResultPartition>>& partitions)>;

inline std::vector<std::shared_ptr<Channel>> wire_in_process(
    int32_t consumer, const std::vector<std::unique_ptr<ResultPartition>>& partitions) {
  std::vector<std::shared_ptr<Channel>> channels;
  for (const auto& partition : partitions) channels.push_back(partition->channel(consumer));
  return channels;
}

inline uint64_t mix(uint64_t x) {  // splitmix64 finalizer: a deterministic "random" choice per record
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Plan {
  int32_t producers;
  int32_t consumers;
  uint32_t records_per_producer;
  NetworkConfig config;

  int32_t target(uint32_t p, uint32_t seq) const {
    return static_cast<int32_t>(mix(p * 1'000'003ULL + seq) % static_cast<uint64_t>(consumers));
  }
  size_t payload_len(uint32_t p, uint32_t seq) const {
    const uint64_t h = mix(seq * 7919ULL + p);
    if (h % 50 == 0) return static_cast<size_t>(config.buffer_size_bytes) + h % 1000;  // oversized
    return h % 64;
  }
};

// Each producer thread emits its records, a watermark (payload: the last seq emitted) every 97 records and a
// flush every 50; even producers wait for availability before each record (as a task does), odd ones rely on
// emit_record blocking. Each consumer thread checks, per channel, that records arrive in order and that a
// watermark arrives exactly after the records emitted before it; at the end every record arrived exactly once.
inline void run_exchange(const Plan& plan, const Wiring& wire = wire_in_process) {
  std::vector<std::unique_ptr<TaskNotifier>> producer_n, consumer_n;
  std::vector<std::unique_ptr<ResultPartition>> partitions;
  for (int32_t p = 0; p < plan.producers; ++p) {
    producer_n.push_back(std::make_unique<TaskNotifier>());
    partitions.push_back(std::make_unique<ResultPartition>(plan.consumers, plan.config, producer_n.back().get()));
  }
  std::vector<std::vector<std::shared_ptr<Channel>>> inputs;  // inputs[c]: consumer c's input channels
  for (int32_t c = 0; c < plan.consumers; ++c) {
    consumer_n.push_back(std::make_unique<TaskNotifier>());
    inputs.push_back(wire(c, partitions));
  }

  // count_before[p][c][s]: records of producer p with seq < s that go to consumer c.
  std::vector<std::vector<std::vector<uint32_t>>> count_before(
      static_cast<size_t>(plan.producers),
      std::vector<std::vector<uint32_t>>(static_cast<size_t>(plan.consumers),
                                         std::vector<uint32_t>(plan.records_per_producer + 1, 0)));
  for (uint32_t p = 0; p < static_cast<uint32_t>(plan.producers); ++p) {
    for (uint32_t s = 0; s < plan.records_per_producer; ++s) {
      for (int32_t c = 0; c < plan.consumers; ++c) {
        auto& v = count_before[p][static_cast<size_t>(c)];
        v[s + 1] = v[s] + (plan.target(p, s) == c ? 1 : 0);
      }
    }
  }

  std::atomic<int> timeouts{0};
  // received[c][p]: seqs consumer c got from producer p, in arrival order.
  std::vector<std::vector<std::vector<uint32_t>>> received(
      static_cast<size_t>(plan.consumers), std::vector<std::vector<uint32_t>>(static_cast<size_t>(plan.producers)));

  std::vector<std::thread> threads;
  for (int32_t c = 0; c < plan.consumers; ++c) {
    threads.emplace_back([&, c] {
      InputGate gate(std::move(inputs[static_cast<size_t>(c)]), consumer_n[static_cast<size_t>(c)].get());
      auto& mine = received[static_cast<size_t>(c)];
      int64_t polls = 0;
      bool some_blocked = false;
      while (!gate.is_finished()) {
        std::optional<BufferOrEvent> next = gate.poll_next();
        if (!next) {
          if (some_blocked) {  // only blocked channels have data (or none does): let them go
            gate.unblock_all();
            some_blocked = false;
            continue;
          }
          if (!consumer_n[static_cast<size_t>(c)]->wait(20s)) timeouts.fetch_add(1);
          if (timeouts.load() > 0) return;  // stalled: give up (the gate detaches, releasing the producers)
          continue;
        }
        ++polls;
        if (polls % 211 == 0 && !some_blocked) {  // exercise alignment-style blocking under concurrency
          gate.block_channel(static_cast<int32_t>(polls / 211) % gate.num_channels());
          some_blocked = true;
        } else if (polls % 211 == 60 && some_blocked) {
          gate.unblock_all();
          some_blocked = false;
        }
        const size_t p = static_cast<size_t>(next->channel_index);
        if (next->is_buffer()) {
          for (const ParsedRecord& r : parse_records(next->buffer())) {
            ASSERT_EQ(r.producer, p);
            ASSERT_EQ(plan.target(r.producer, r.seq), c) << "record reached the wrong consumer";
            ASSERT_EQ(r.size_bytes, testing::kRecordHeaderBytes + plan.payload_len(r.producer, r.seq));
            ASSERT_TRUE(mine[p].empty() || mine[p].back() < r.seq) << "out of order on channel " << p;
            mine[p].push_back(r.seq);
          }
          gate.recycle(std::move(next->buffer()));
        } else if (next->event().type == EventType::kWatermark) {
          uint32_t last_seq = 0;
          ASSERT_EQ(next->event().payload.size(), 4u);
          std::memcpy(&last_seq, next->event().payload.data(), 4);
          ASSERT_EQ(mine[p].size(), count_before[p][static_cast<size_t>(c)][last_seq + 1])
              << "watermark after seq " << last_seq << " overtook or trailed data on channel " << p;
        }
      }
    });
  }
  for (int32_t p = 0; p < plan.producers; ++p) {
    threads.emplace_back([&, p] {
      ResultPartition& partition = *partitions[static_cast<size_t>(p)];
      std::vector<uint8_t> record;
      for (uint32_t s = 0; s < plan.records_per_producer; ++s) {
        if (p % 2 == 0) {
          while (!partition.is_available()) {
            if (!producer_n[static_cast<size_t>(p)]->wait(20s) && !partition.is_available()) timeouts.fetch_add(1);
            if (timeouts.load() > 0) return;
          }
        }
        make_record(static_cast<uint32_t>(p), s, plan.payload_len(static_cast<uint32_t>(p), s), &record);
        partition.emit_record(plan.target(static_cast<uint32_t>(p), s), record.data(), record.size());
        if (s % 97 == 96) {
          RuntimeEvent watermark{EventType::kWatermark, std::vector<uint8_t>(4)};
          std::memcpy(watermark.payload.data(), &s, 4);
          partition.broadcast_event(watermark);
        }
        if (s % 50 == 49) partition.flush_all();
      }
      partition.finish();
    });
  }
  for (auto& t : threads) t.join();

  EXPECT_EQ(timeouts.load(), 0) << "a wait ran into its timeout: lost wake-up";
  for (int32_t p = 0; p < plan.producers; ++p) {
    std::vector<int> seen(plan.records_per_producer, 0);
    for (int32_t c = 0; c < plan.consumers; ++c) {
      for (uint32_t s : received[static_cast<size_t>(c)][static_cast<size_t>(p)]) ++seen[s];
    }
    for (uint32_t s = 0; s < plan.records_per_producer; ++s) {
      ASSERT_EQ(seen[s], 1) << "producer " << p << " seq " << s << " arrived " << seen[s] << " times";
    }
    EXPECT_EQ(partitions[static_cast<size_t>(p)]->records_out(), plan.records_per_producer);
  }
}

}  // namespace sluice::runtime::testing
