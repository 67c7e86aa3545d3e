// sluice_peer: the Sluice side of the Flink comparison (bench/peers, docs/benchmarks.md), in the formats the
// Flink peer (bench/peers/flink) writes, so that plain file comparisons decide "identical".
//
//   sluice_peer events [--seed S] [--events N] [--rate R] [--splits K] [--digest]
//       The generator's events, split 0's first, then split 1's, ...: one text line per event (kind letter and
//       every field in declaration order, comma-separated), or with --digest one line "events=N fnv1a=0x..."
//       (FNV-1a 64 over the serialized events, as the golden checksum). PrintEvents (Java) prints the same.
//   sluice_peer query --query q0|q1|q2|q5|q7|q8 --output FILE [--events N] [--seed S] [--rate R]
//                     [--parallelism P] [--splits K] [-D key=value ...]
//       Runs the query (examples/nexmark) on the engine, collects its rows exactly once and writes them to FILE,
//       one comma-separated line per row in the column order of reference/rows.h (row order unspecified).
//       The demo needs no such helper: `sluice demo --output DIR` writes its own part files.
//
// Exit codes: 0 ok, 1 the job failed, 2 bad arguments.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exactly_once_collect.h"
#include "q0.h"
#include "q1.h"
#include "q2.h"
#include "q5.h"
#include "q7.h"
#include "q8.h"
#include "queries.h"
#include "sluice/connectors/nexmark/generator.h"
#include "sluice/core/data_view.h"
#include "sluice/sluice.h"

namespace {

namespace nx = sluice::nexmark;
namespace ref = sluice::nexmark::reference;

struct Flags {
  std::string command;
  std::string query;
  std::string output;
  int64_t events = 1000;
  uint64_t seed = 1;
  double rate = 10'000'000;
  int32_t parallelism = 2;
  int32_t splits = 1;
  bool digest = false;
  std::vector<std::string> dynamic;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "sluice_peer: %s\n"
               "usage: sluice_peer events [--seed S] [--events N] [--rate R] [--splits K] [--digest]\n"
               "       sluice_peer query --query q0|q1|q2|q5|q7|q8 --output FILE [--events N] [--seed S] [--rate R]\n"
               "                         [--parallelism P] [--splits K] [-D key=value ...]\n",
               why.c_str());
  std::exit(2);
}

int64_t parse_int(const char* flag, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0') usage(std::string(flag) + ": expected an integer, got '" + text + "'");
  return v;
}

Flags parse(int argc, char** argv) {
  if (argc < 2) usage("expected a command");
  Flags f;
  f.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(std::string(a) + ": expected a value");
      return argv[++i];
    };
    if (a == "--seed") f.seed = std::strtoull(value(), nullptr, 10);
    else if (a == "--events") f.events = parse_int("--events", value());
    else if (a == "--rate") f.rate = std::strtod(value(), nullptr);
    else if (a == "--splits") f.splits = static_cast<int32_t>(parse_int("--splits", value()));
    else if (a == "--parallelism" || a == "-p") f.parallelism = static_cast<int32_t>(parse_int("-p", value()));
    else if (a == "--query") f.query = value();
    else if (a == "--output") f.output = value();
    else if (a == "--digest") f.digest = true;
    else if (a == "-D") f.dynamic.emplace_back(value());
    else usage("unknown argument '" + std::string(a) + "'");
  }
  if (f.events < 1) usage("--events: expected >= 1");
  if (f.splits < 1) usage("--splits: expected >= 1");
  if (f.parallelism < 1) usage("--parallelism: expected >= 1");
  return f;
}

// --- events ------------------------------------------------------------------------------------------------

void append_field(std::string& line, int64_t v) {
  line += ',';
  line += std::to_string(v);
}
void append_field(std::string& line, const std::string& s) {
  line += ',';
  line += s;
}

void append_event_line(const nx::Event& e, std::string& line) {
  line.clear();
  if (e.is_person()) {
    const nx::Person& p = e.person();
    line += 'P';
    append_field(line, p.id);
    append_field(line, p.name);
    append_field(line, p.email_address);
    append_field(line, p.credit_card);
    append_field(line, p.city);
    append_field(line, p.state);
    append_field(line, p.date_time);
    append_field(line, p.extra);
  } else if (e.is_auction()) {
    const nx::Auction& a = e.auction();
    line += 'A';
    append_field(line, a.id);
    append_field(line, a.item_name);
    append_field(line, a.description);
    append_field(line, a.initial_bid);
    append_field(line, a.reserve);
    append_field(line, a.date_time);
    append_field(line, a.expires);
    append_field(line, a.seller);
    append_field(line, a.category);
    append_field(line, a.extra);
  } else {
    const nx::Bid& b = e.bid();
    line += 'B';
    append_field(line, b.auction);
    append_field(line, b.bidder);
    append_field(line, b.price);
    append_field(line, b.channel);
    append_field(line, b.url);
    append_field(line, b.date_time);
    append_field(line, b.extra);
  }
  line += '\n';
}

int print_events(const Flags& f) {
  nx::GeneratorConfig config;
  config.seed = f.seed;
  config.max_events = f.events;
  config.declared_rate_per_s = f.rate;
  if (sluice::Status s = config.validate(); !s.is_ok()) usage(s.to_string());
  uint64_t h = 0xCBF29CE484222325ULL;
  std::vector<uint8_t> bytes;
  std::string line;
  nx::Event e;
  for (int32_t s = 0; s < f.splits; ++s) {
    nx::SplitGenerator split(config, s, f.splits);
    while (split.next(e)) {
      if (f.digest) {
        bytes.clear();
        sluice::DataOutputView out(&bytes);
        e.serialize(out);
        for (uint8_t b : bytes) h = (h ^ b) * 0x100000001B3ULL;
      } else {
        append_event_line(e, line);
        std::fwrite(line.data(), 1, line.size(), stdout);
      }
    }
  }
  if (f.digest) std::printf("events=%" PRId64 " fnv1a=0x%016" PRIX64 "\n", f.events, h);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

// --- query rows --------------------------------------------------------------------------------------------

// One line per row, the columns of reference/rows.h in order.
void append_row(const ref::Q0Row& r, std::string& l) {
  l = std::to_string(r.auction);
  for (int64_t v : {r.bidder, r.price}) append_field(l, v);
  append_field(l, r.channel);
  append_field(l, r.url);
  append_field(l, r.date_time);
  append_field(l, r.extra);
}
void append_row(const ref::Q1Row& r, std::string& l) {
  l = std::to_string(r.auction);
  for (int64_t v : {r.bidder, r.price_milli, r.date_time}) append_field(l, v);
  append_field(l, r.extra);
}
void append_row(const ref::Q2Row& r, std::string& l) {
  l = std::to_string(r.auction);
  append_field(l, r.price);
}
void append_row(const ref::Q5Row& r, std::string& l) {
  l = std::to_string(r.window_start_ms);
  for (int64_t v : {r.window_end_ms, r.auction, r.num}) append_field(l, v);
}
void append_row(const ref::Q7Row& r, std::string& l) {
  l = std::to_string(r.auction);
  for (int64_t v : {r.bidder, r.price, r.date_time}) append_field(l, v);
  append_field(l, r.extra);
}
void append_row(const ref::Q8Row& r, std::string& l) {
  l = std::to_string(r.person_id);
  append_field(l, r.name);
  append_field(l, r.window_start_ms);
}

template <class Row>
int run_query(const Flags& f, sluice::DataStream<Row> (*build)(const sluice::DataStream<nx::Event>&)) {
  sluice::Configuration config;
  for (const auto& kv : f.dynamic) {
    if (sluice::Status s = config.apply_dynamic_property(kv); !s.is_ok()) usage("-D " + kv + ": " + s.to_string());
  }
  sluice::StreamExecutionEnvironment env(config);
  env.set_parallelism(f.parallelism);
  nx::NexmarkSourceOptions source;
  source.generator.seed = f.seed;
  source.generator.max_events = f.events;
  source.generator.declared_rate_per_s = f.rate;
  source.num_splits = f.splits;
  if (sluice::Status s = source.generator.validate(); !s.is_ok()) usage(s.to_string());
  auto committed = std::make_shared<nx::queries::CommittedRows<Row>>();
  build(nx::queries::nexmark_events(env, source))
      .sink_to(nx::queries::ExactlyOnceCollectSink<Row>(committed))
      .name("peer-sink")
      .uid("peer-sink");
  auto result = env.execute("sluice-peer-" + f.query);
  if (!result.is_ok()) {
    std::fprintf(stderr, "sluice_peer: %s\n", result.status().to_string().c_str());
    return 1;
  }
  if (result->status != sluice::JobStatus::kFinished) {
    std::fprintf(stderr, "sluice_peer: job %s: %s\n", sluice::job_status_name(result->status),
                 result->error.to_string().c_str());
    return 1;
  }
  std::ofstream out(f.output);
  std::string line;
  for (const Row& r : committed->rows()) {
    append_row(r, line);
    out << line << '\n';
  }
  out.close();
  if (!out) {
    std::fprintf(stderr, "sluice_peer: cannot write '%s'\n", f.output.c_str());
    return 1;
  }
  std::printf("sluice_peer %s: %" PRId64 " events, parallelism %d, %" PRId64 " rows, %.3f s, %.3f CPU s\n",
              f.query.c_str(), f.events, f.parallelism, committed->size(), result->runtime_ms / 1000.0,
              result->cpu_seconds);
  return 0;
}

int query(const Flags& f) {
  if (f.output.empty()) usage("query: --output FILE is required");
  namespace q = nx::queries;
  if (f.query == "q0") return run_query(f, q::q0);
  if (f.query == "q1") return run_query(f, q::q1);
  if (f.query == "q2") return run_query(f, q::q2);
  if (f.query == "q5") return run_query(f, q::q5);
  if (f.query == "q7") return run_query(f, q::q7);
  if (f.query == "q8") return run_query(f, q::q8);
  usage("--query: expected q0, q1, q2, q5, q7 or q8, got '" + f.query + "'");
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  if (f.command == "events") return print_events(f);
  if (f.command == "query") return query(f);
  usage("unknown command '" + f.command + "'; expected events or query");
}
