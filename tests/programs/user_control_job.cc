// A user's program on the public API only (include/sluice/), for tests/integration/user_program_control_test.sh:
// what `execute()` gives every program - the REST endpoint, `sluice list`, `sluice savepoint`, `sluice stop`,
// `sluice cancel`, SIGINT / SIGTERM - and Flink's upgrade workflow (savepoint, change the program, restore).
//
//   user_control_job --events N --keys K --rate R --output DIR [--v2] [Sluice options: --config FILE,
//                    -D key=value, --restore PATH, --allow-non-restored-state, --summary-json FILE, ...; --help]
//
// Record i (0 <= i < N) has key i % K; the job paces the stream at R records per second in total, keeps a running
// count per key in keyed state and writes "key,index,count" per record through the exactly-once file sink into
// DIR. Whatever the interleaving, the committed lines of a run (and of a run restored from its savepoint) hold each
// index once and, per key, the counts 1..n: a duplicate or a loss breaks that. --v2 is the changed program: the
// keyed state's struct gains a field (schema evolution) and a new operator with a new uid tags the records on
// their way to the sink. Checkpoints every 200 ms unless execution.checkpointing.interval says otherwise.
// Exit: 0 FINISHED (also when stopped with a savepoint), 1 any other end, 2 bad arguments.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

namespace {

struct Input {
  int64_t key = 0;
  int64_t index = 0;
  SLUICE_FIELDS(Input, key, index)
};

struct Update {
  int64_t key = 0;
  int64_t index = 0;
  int64_t count = 0;
  SLUICE_FIELDS(Update, key, index, count)
};

// The per-key state of the first version, and of the second: one more field, the same recorded type name.
struct KeyStatsV1 {
  int64_t count = 0;
  SLUICE_FIELDS(KeyStats, count)
};
struct KeyStatsV2 {
  int64_t count = 0;
  int64_t last_index = -1;
  SLUICE_FIELDS(KeyStats, count, last_index)
};

template <class Stats>
class RunningCount final : public sluice::KeyedProcessFunction<int64_t, Input, Update> {
 public:
  void open(sluice::RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    stats_ = &get_state(sluice::ValueStateDescriptor<Stats>("stats"));
  }
  void process_element(const Input& in, sluice::KeyedProcessContext<int64_t>&, sluice::Collector<Update>& out) override {
    Stats s = stats_->value().value_or(Stats{});
    ++s.count;
    if constexpr (requires { s.last_index; }) s.last_index = in.index;
    stats_->update(s);
    out.collect(Update{in.key, in.index, s.count});
  }

 private:
  sluice::ValueState<Stats>* stats_ = nullptr;
};

bool parse_count(std::string_view text, int64_t& out) {
  return std::from_chars(text.data(), text.data() + text.size(), out).ptr == text.data() + text.size() && out >= 0;
}

template <class Stats>
void build(sluice::StreamExecutionEnvironment& env, int64_t events, int64_t keys, double rate, const std::string& output,
           bool v2) {
  auto counts = env.from_generator(events, [keys](int64_t i) { return Input{i % keys, i}; }, rate, "records")
                    .uid("records")
                    .key_by([](const Input& in) { return in.key; })
                    .process(RunningCount<Stats>{})
                    .name("running-count")
                    .uid("running-count");
  if (v2) counts = counts.map([](const Update& u) { return u; }).name("tag-v2").uid("tag-v2");
  counts
      .sink_to(sluice::file::TransactionalFileSink<Update>(output, [](const Update& u, std::string& line) {
        line += std::to_string(u.key) + "," + std::to_string(u.index) + "," + std::to_string(u.count);
      }))
      .name("sink")
      .uid("sink");
}

}  // namespace

constexpr const char* kUsage =
    "usage: user_control_job --events N --keys K --rate R --output DIR [--v2] [Sluice options] (N, R >= 0, K > 0)\n";

int main(int argc, char** argv) {
  // Sluice's flags (--config, -D, --restore, ...) configure the environment; the rest is this program's.
  auto args = sluice::parse_program_args(argc, argv);
  if (!args.is_ok()) {
    std::fprintf(stderr, "%s\n", args.status().to_string().c_str());
    return 2;
  }
  if (args->help_requested) {
    std::printf("%s\n%s", kUsage, sluice::program_args_help().c_str());
    return 0;
  }
  int64_t events = -1, keys = -1, rate = -1;
  std::string output;
  bool v2 = false;
  const std::vector<std::string>& rest = args->remaining;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string_view a = rest[i];
    const bool has_value = i + 1 < rest.size();
    if (a == "--events" && has_value) {
      if (!parse_count(rest[++i], events)) events = -1;
    } else if (a == "--keys" && has_value) {
      if (!parse_count(rest[++i], keys) || keys == 0) keys = -1;
    } else if (a == "--rate" && has_value) {
      if (!parse_count(rest[++i], rate)) rate = -1;
    } else if (a == "--output" && has_value) {
      output = rest[++i];
    } else if (a == "--v2") {
      v2 = true;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n%s", rest[i].c_str(), kUsage);
      return 2;
    }
  }
  if (events < 0 || keys < 0 || rate < 0 || output.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  sluice::StreamExecutionEnvironment* env = &args->env;
  if (!env->configuration().contains("execution.checkpointing.interval")) {
    if (auto st = env->configuration().set_string("execution.checkpointing.interval", "200ms"); !st.is_ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 2;
    }
  }
  if (v2) {
    build<KeyStatsV2>(*env, events, keys, static_cast<double>(rate), output, v2);
  } else {
    build<KeyStatsV1>(*env, events, keys, static_cast<double>(rate), output, v2);
  }
  auto result = env->execute("user-control-job");
  if (!result.is_ok()) {
    std::fprintf(stderr, "%s\n", result.status().to_string().c_str());
    return 2;
  }
  std::printf("job %s: %s\n", result->job_id.to_hex().c_str(), sluice::job_status_name(result->status));
  if (!result->error.is_ok()) std::fprintf(stderr, "%s\n", result->error.to_string().c_str());
  return result->status == sluice::JobStatus::kFinished ? 0 : 1;
}
