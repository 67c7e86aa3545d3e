// The program shown in README.md ("Write your own job"); built and run by the tests so the README stays true.
#include <cstdio>

#include "sluice/sluice.h"

struct WordCount { std::string word; int64_t count = 0; SLUICE_FIELDS(WordCount, word, count) };

int main(int argc, char** argv) {
  auto env = sluice::StreamExecutionEnvironment::from_args(argc, argv);   // --config, -D key=value
  if (!env.is_ok()) {
    std::fprintf(stderr, "%s\n", env.status().to_string().c_str());
    return 2;
  }
  env->from_collection(std::vector<std::string>{"a", "b", "a"})
      .map([](std::string w) { return WordCount{std::move(w), 1}; })
      .key_by([](const WordCount& wc) { return wc.word; })
      .sum(&WordCount::count)
      .sink_to(sluice::PrintSink<WordCount>([](const WordCount& wc) { return wc.word + "," + std::to_string(wc.count); }));
  auto result = env->execute("word-count");
  return result.is_ok() && result->status == sluice::JobStatus::kFinished ? 0 : 1;
}
