// The program shown in README.md ("Write your own job"); built and run by the tests, which also check that the
// README shows exactly this code, so the README stays true.
#include <cstdio>

#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

struct WordCount { std::string word; int64_t count = 0; SLUICE_FIELDS(WordCount, word, count) };

int main(int argc, char** argv) {
  auto env = sluice::StreamExecutionEnvironment::from_args(argc, argv);   // --config, -D key=value, --restore, --help
  if (!env.is_ok()) {
    std::fprintf(stderr, "%s\n", env.status().to_string().c_str());
    return 2;
  }
  env->enable_checkpointing(1'000);   // a checkpoint every second; the sink commits what each one covers
  env->from_collection(std::vector<std::string>{"a", "b", "a"}).uid("words")
      .map([](std::string w) { return WordCount{std::move(w), 1}; }).uid("to-counts")
      .key_by([](const WordCount& wc) { return wc.word; })
      .sum(&WordCount::count).uid("count")
      .sink_to(sluice::file::TransactionalFileSink<WordCount>(   // exactly-once part files in out/word-count/
          "out/word-count", [](const WordCount& wc, std::string& line) { line += wc.word + "," + std::to_string(wc.count); }))
      .uid("sink");
  auto result = env->execute("word-count");
  if (!result.is_ok()) {                                   // refused before it ran (a bad --restore, ...)
    std::fprintf(stderr, "%s\n", result.status().to_string().c_str());
    return 1;
  }
  if (result->status != sluice::JobStatus::kFinished) {    // FAILED (error says why) or CANCELED
    std::fprintf(stderr, "word-count %s %s\n", sluice::job_status_name(result->status),
                 result->error.is_ok() ? "" : result->error.to_string().c_str());
    return 1;
  }
  return 0;
}
