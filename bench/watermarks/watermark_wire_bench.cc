// The wire cost of record timestamps: records per CPU-second of a job whose records cross a network exchange,
// with and without timestamps on the edge (a source with a WatermarkStrategy makes the edge carry them), and a
// micro-benchmark of the two framings considered for the timestamp prefix (fixed 8 bytes vs zigzag varint).
//
//   watermark_wire_bench [--events N] [--repeat R]
// Prints one JSON object per line: {"case": ..., "events": ..., "cpu_s": ..., "events_per_cpu_s": ...}.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "../common/bench_util.h"
#include "sluice/sluice.h"

namespace {

struct Rec {
  int64_t key = 0;
  int64_t ts = 0;
  int64_t value = 0;
  SLUICE_FIELDS(Rec, key, ts, value)
};

struct CountSink final : sluice::Sink<Rec> {
  struct Writer final : sluice::SinkWriter<Rec> {
    void write(Rec&& r) override { sum_ += r.value; }
    void flush(bool) override {}
    int64_t sum_ = 0;
  };
  std::unique_ptr<sluice::SinkWriter<Rec>> create_writer(sluice::SinkInitContext&) const override {
    return std::make_unique<Writer>();
  }
};

double run_job(int64_t events, bool timestamps) {
  sluice::StreamExecutionEnvironment env;
  env.set_parallelism(1);
  auto gen = sluice::make_generator_source(events, [](int64_t i) { return Rec{i % 1000, 1'700'000'000'000 + i, i}; });
  auto strategy = sluice::WatermarkStrategy<Rec>::for_monotonous_timestamps().with_timestamp_assigner(
      [](const Rec& r) { return r.ts; });
  auto src = timestamps ? env.from_source(std::move(gen), strategy, "gen") : env.from_source(std::move(gen), "gen");
  // rebalance: the records cross a network exchange into the map's task.
  src.rebalance().map([](Rec r) { return r; }).sink_to(CountSink{});
  const double cpu0 = sluice::bench::process_cpu_seconds();
  auto result = env.execute(timestamps ? "with-timestamps" : "without-timestamps");
  const double cpu = sluice::bench::process_cpu_seconds() - cpu0;
  if (!result.is_ok() || result->status != sluice::JobStatus::kFinished) {
    std::fprintf(stderr, "job failed: %s\n",
                 result.is_ok() ? result->error.to_string().c_str() : result.status().to_string().c_str());
    std::exit(1);
  }
  return cpu;
}

// Framing alone: write then read `n` timestamp prefixes + records into one buffer.
template <bool kVarint>
double frame(int64_t n) {
  std::vector<uint8_t> buf;
  buf.reserve(static_cast<size_t>(n) * 40);
  const double t0 = sluice::bench::thread_cpu_s();
  sluice::DataOutputView out(&buf);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ts = 1'700'000'000'000 + i;
    if constexpr (kVarint) {
      out.write_varint((static_cast<uint64_t>(ts) << 1) ^ static_cast<uint64_t>(ts >> 63));
    } else {
      out.write_fixed<int64_t>(ts);
    }
    sluice::TypeSerializer<Rec>::serialize(Rec{i % 1000, ts, i}, out);
  }
  sluice::DataInputView in(buf.data(), buf.size());
  int64_t check = 0;
  while (!in.at_end()) {
    int64_t ts = 0;
    if constexpr (kVarint) {
      uint64_t z = in.read_varint();
      ts = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    } else {
      ts = in.read_fixed<int64_t>();
    }
    Rec r = sluice::TypeSerializer<Rec>::deserialize(in);
    check += ts - r.ts;
  }
  const double cpu = sluice::bench::thread_cpu_s() - t0;
  if (check != 0) std::exit(2);
  return cpu;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 2'000'000;
  int64_t repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    if (flag == "--events") events = sluice::bench::parse_int<int64_t>(flag, argv[i + 1], 1, INT64_MAX / 2).value();
    else if (flag == "--repeat") repeat = sluice::bench::parse_int<int64_t>(flag, argv[i + 1], 1, 100).value();
    else {
      std::fprintf(stderr, "usage: watermark_wire_bench [--events N] [--repeat R]\n");
      return 2;
    }
  }
  auto report = [&](const char* name, std::vector<double> cpus) {
    const double cpu = sluice::bench::median(std::move(cpus));
    std::printf("{\"case\": \"%s\", \"events\": %lld, \"cpu_s\": %.4f, \"events_per_cpu_s\": %.0f}\n", name,
                static_cast<long long>(events), cpu, static_cast<double>(events) / cpu);
  };
  std::vector<double> without, with, fixed, varint;
  for (int64_t r = 0; r < repeat; ++r) {
    without.push_back(run_job(events, false));
    with.push_back(run_job(events, true));
    fixed.push_back(frame<false>(events));
    varint.push_back(frame<true>(events));
  }
  report("exchange_without_timestamps", without);
  report("exchange_with_timestamps", with);
  report("framing_fixed8", fixed);
  report("framing_varint", varint);
  return 0;
}
