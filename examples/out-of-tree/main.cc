// Word count with exactly-once output, built against an installed Sluice (README.md "Write your own job", docs/install.md).
//   word_count --input FILE_OR_DIR [--input ...] --output DIR [--fail-once-after-lines N]
//              [--config FILE] [-D key=value ...]
// Writes "word,count" lines - the running count per word after each occurrence, so the last line of a word is its
// total - into part files in DIR through the two-phase-commit file sink: a part file becomes visible when the
// checkpoint after it completes (docs/checkpoints.md), the last one when the input ended and the final checkpoint
// completed. Checkpoints every second into DIR-checkpoints unless execution.checkpointing.interval and
// execution.checkpointing.dir say otherwise; after a crash, --restore latest goes on from the last one.
// --fail-once-after-lines N throws from the tokenizer once, at the Nth line: the job restarts from its latest
// checkpoint (restart-strategy.*, docs/fault-tolerance.md) and DIR still ends with every line exactly once.
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/connectors/file/file_source.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

struct WordCount {
  std::string word;
  int64_t count = 0;
  SLUICE_FIELDS(WordCount, word, count)
};

namespace {

// Process-wide, not per task: the embedded MiniCluster runs every attempt of the job in this process, so the
// injected failure happens once instead of on every attempt.
std::atomic<int64_t> lines_seen{0};
std::atomic<bool> failed_once{false};

}  // namespace

constexpr const char* kUsage =
    "usage: word_count --input FILE_OR_DIR... --output DIR [--fail-once-after-lines N] [Sluice options]\n";

int main(int argc, char** argv) {
  // Sluice's flags (--config, -D key=value, --restore, --summary-json, ...) configure the environment; the rest are
  // this program's own.
  auto args = sluice::parse_program_args(argc, argv);
  if (!args.is_ok()) {
    std::fprintf(stderr, "%s\n", args.status().to_string().c_str());
    return 2;
  }
  if (args->help_requested) {
    std::printf("%s\n%s", kUsage, sluice::program_args_help().c_str());
    return 0;
  }
  std::vector<std::string> inputs;
  std::string output;
  int64_t fail_after_lines = 0;
  const std::vector<std::string>& rest = args->remaining;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string_view a = rest[i];
    const bool takes_value = a == "--input" || a == "--output" || a == "--fail-once-after-lines";
    if (takes_value && i + 1 == rest.size()) {
      std::fprintf(stderr, "%s: expected a value\n%s", rest[i].c_str(), kUsage);
      return 2;
    }
    if (a == "--input") {
      inputs.push_back(rest[++i]);
    } else if (a == "--output") {
      output = rest[++i];
    } else if (a == "--fail-once-after-lines") {
      std::string_view n = rest[++i];
      if (std::from_chars(n.data(), n.data() + n.size(), fail_after_lines).ptr != n.data() + n.size()) {
        std::fprintf(stderr, "--fail-once-after-lines: expected a number of lines, got '%s'\n", rest[i].c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n%s", rest[i].c_str(), kUsage);
      return 2;
    }
  }
  if (inputs.empty() || output.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  sluice::StreamExecutionEnvironment* env = &args->env;
  if (!env->configuration().contains("execution.checkpointing.interval")) env->enable_checkpointing(1'000);
  if (!env->configuration().contains("execution.checkpointing.dir")) {
    // Beside the output, so a run that died can go on with --restore latest.
    while (output.size() > 1 && output.back() == '/') output.pop_back();
    if (auto set = env->configuration().set_string("execution.checkpointing.dir", output + "-checkpoints");
        !set.is_ok()) {
      std::fprintf(stderr, "%s\n", set.to_string().c_str());
      return 2;
    }
  }

  env->from_source(sluice::file::FileSource::for_paths(inputs), "lines")
      .uid("lines")
      .flat_map([fail_after_lines](const std::string& line, sluice::Collector<WordCount>& out) {
        if (fail_after_lines > 0 && ++lines_seen == fail_after_lines && !failed_once.exchange(true)) {
          throw std::runtime_error("injected failure at line " + std::to_string(fail_after_lines));
        }
        std::string word;
        for (char c : line + " ") {
          if (std::isalnum(static_cast<unsigned char>(c))) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          } else if (!word.empty()) {
            out.collect(WordCount{std::move(word), 1});
            word.clear();
          }
        }
      })
      .name("tokenize")
      .uid("tokenize")
      .key_by([](const WordCount& wc) { return wc.word; })
      .sum(&WordCount::count)
      .name("count")
      .uid("count")
      .sink_to(sluice::file::TransactionalFileSink<WordCount>(output, [](const WordCount& wc, std::string& line) {
        line += wc.word;
        line += ',';
        line += std::to_string(wc.count);
      }))
      .name("sink")
      .uid("sink");

  auto result = env->execute("word-count");
  if (!result.is_ok()) {
    std::fprintf(stderr, "%s\n", result.status().to_string().c_str());
    return 2;
  }
  std::printf("job %s: %s in %lld ms\n", result->job_id.to_hex().c_str(), sluice::job_status_name(result->status),
              static_cast<long long>(result->runtime_ms));
  if (result->status != sluice::JobStatus::kFinished) {
    if (!result->error.is_ok()) std::fprintf(stderr, "%s\n", result->error.to_string().c_str());  // FAILED: why
    return 1;
  }
  return 0;
}
