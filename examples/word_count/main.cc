// Word count over text files, the first program to read:
//   word_count_example FILE_OR_DIR... [-D parallelism.default=2]
// Prints "word,count" lines: the running count per word after each occurrence (a rolling sum), as
// Flink's WordCount example does in streaming mode; the last line per word is its total.
#include <cctype>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sluice/connectors/file/file_source.h"
#include "sluice/sluice.h"

struct WordCount {
  std::string word;
  int64_t count = 0;
  SLUICE_FIELDS(WordCount, word, count)
};

int main(int argc, char** argv) {
  // Sluice's flags (-D, --config, ...) configure the job; what they leave are the files to read.
  auto args = sluice::parse_program_args(argc, argv);
  if (!args.is_ok()) {
    std::fprintf(stderr, "%s\n", args.status().to_string().c_str());
    return 2;
  }
  const std::vector<std::string>& paths = args->remaining;
  if (args->help_requested || paths.empty()) {
    std::fprintf(args->help_requested ? stdout : stderr, "usage: word_count_example FILE_OR_DIR... [-D key=value]\n%s",
                 sluice::program_args_help().c_str());
    return args->help_requested ? 0 : 2;
  }
  for (const std::string& p : paths) {
    if (p.rfind('-', 0) == 0) {
      std::fprintf(stderr, "unknown flag '%s' (word_count_example --help lists them)\n", p.c_str());
      return 2;
    }
  }
  sluice::StreamExecutionEnvironment* env = &args->env;
  env->from_source(sluice::file::FileSource::for_paths(paths), "lines")
      .flat_map([](const std::string& line, sluice::Collector<WordCount>& out) {
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
      .key_by([](const WordCount& wc) { return wc.word; })
      .sum(&WordCount::count)
      .name("count")
      .sink_to(sluice::PrintSink<WordCount>(
          [](const WordCount& wc) { return wc.word + "," + std::to_string(wc.count); }))
      .name("print");
  auto result = env->execute("word-count");
  if (!result.is_ok()) {
    std::fprintf(stderr, "%s\n", result.status().to_string().c_str());
    return 2;
  }
  if (result->status != sluice::JobStatus::kFinished) {
    std::fprintf(stderr, "%s\n", result->error.to_string().c_str());
    return 1;
  }
  return 0;
}
