#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "log_capture.h"
#include "sluice/config/configuration.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    path_ = std::filesystem::temp_directory_path() /
            ("sluice-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".yaml");
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(ConfigYaml, FlatKeys) {
  auto c = Configuration::from_yaml_string(
      "parallelism.default: 4\n"
      "execution.buffer-timeout.interval: 10 ms\n"
      "state.backend.type: hashmap\n"
      "pipeline.name: 'nexmark q5'\n");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(options::kDefaultParallelism), 4);
  EXPECT_EQ(c->get(options::kBufferTimeoutInterval), milliseconds(10));
  EXPECT_EQ(c->get(options::kStateBackendType), StateBackendType::kHashMap);
  EXPECT_EQ(c->get(options::kPipelineName), "nexmark q5");
}

TEST(ConfigYaml, NestedMaps) {
  auto c = Configuration::from_yaml_string(
      "parallelism:\n"
      "  default: 3\n"
      "execution:\n"
      "  buffer-timeout:\n"
      "    interval: 1s\n"
      "    enabled: false\n"
      "taskmanager:\n"
      "  memory:\n"
      "    segment-size: 64kb\n"
      "  network.memory: {buffers-per-channel: 4, max-buffers-per-channel: 20}\n");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(options::kDefaultParallelism), 3);
  EXPECT_EQ(c->get(options::kBufferTimeoutInterval), milliseconds(1000));
  EXPECT_FALSE(c->get(options::kBufferTimeoutEnabled));
  EXPECT_EQ(c->get(options::kMemorySegmentSize), MemorySize::of_kibibytes(64));
  EXPECT_EQ(c->get(options::kNetworkBuffersPerChannel), 4);
  EXPECT_EQ(c->get(options::kNetworkMaxBuffersPerChannel), 20);
}

TEST(ConfigYaml, FlatAndNestedGiveTheSameConfiguration) {
  auto flat = Configuration::from_yaml_string("pipeline.max-parallelism: 128\nstate.backend.type: HASHMAP\n");
  auto nested = Configuration::from_yaml_string("pipeline: {max-parallelism: 128}\nstate: {backend: {type: hashmap}}\n");
  ASSERT_TRUE(flat.is_ok() && nested.is_ok());
  EXPECT_EQ(flat->to_map(), nested->to_map());
}

TEST(ConfigYaml, EmptyDocumentAndEmptyValue) {
  auto empty = Configuration::from_yaml_string("# only a comment\n");
  ASSERT_TRUE(empty.is_ok()) << empty.status().to_string();
  EXPECT_TRUE(empty->to_map().empty());
  auto c = Configuration::from_yaml_string("pipeline.name:\n");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_TRUE(c->contains("pipeline.name"));
  EXPECT_EQ(c->get(options::kPipelineName), "");
}

TEST(ConfigYaml, CanonicalKeyWinsOverDeprecatedOneRegardlessOfOrder) {
  testing::LogCapture log;
  auto c = Configuration::from_yaml_string(
      "execution.buffer-timeout.interval: 20ms\n"
      "execution.buffer-timeout: 50ms\n"
      "state.backend: hashmap\n");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(options::kBufferTimeoutInterval), milliseconds(20));
  EXPECT_TRUE(c->contains("state.backend.type"));
  EXPECT_NE(log.text().find("ignoring deprecated key 'execution.buffer-timeout'"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("'state.backend' is deprecated"), std::string::npos) << log.text();
}

TEST(ConfigYaml, FromFile) {
  TempFile file("parallelism.default: 7\n");
  auto c = Configuration::from_yaml_file(file.path());
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->get(options::kDefaultParallelism), 7);
}

TEST(ConfigYaml, MissingFileNamesThePath) {
  auto c = Configuration::from_yaml_file("/nonexistent/sluice/config.yaml");
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(c.status().message(), "config file '/nonexistent/sluice/config.yaml' does not exist");
  auto dir = Configuration::from_yaml_file(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.is_ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
}

TEST(ConfigYaml, BadYamlNamesPathLineAndColumn) {
  TempFile file(
      "parallelism.default: 4\n"
      "pipeline.name: [unclosed\n");
  auto c = Configuration::from_yaml_file(file.path());
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("config file '" + file.path() + "' is not valid YAML (line "), std::string::npos) << m;
  EXPECT_NE(m.find(", column "), std::string::npos) << m;

  auto tab = Configuration::from_yaml_string("a:\n  b: 1\n c: 2\n");
  ASSERT_FALSE(tab.is_ok());
  EXPECT_NE(tab.status().message().find("config file '<string>' is not valid YAML (line 3, column"),
            std::string::npos)
      << tab.status().message();
}

TEST(ConfigYaml, BadValueOrKeyNamesPathAndLine) {
  TempFile file(
      "parallelism.default: 4\n"
      "execution:\n"
      "  buffer-timeout:\n"
      "    interval: fast\n");
  auto c = Configuration::from_yaml_file(file.path());
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().message(), "config file '" + file.path() +
                                      "', line 4: execution.buffer-timeout.interval: 'fast' is not a duration "
                                      "(expected e.g. 100ms, 1s, 2 min)");

  auto unknown = Configuration::from_yaml_string("parallelism.default: 4\nparalelism.default: 4\n");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().message(),
            "config file '<string>', line 2: unknown configuration key 'paralelism.default'; did you mean "
            "'parallelism.default'?");
}

TEST(ConfigYaml, RejectsListsAndNonMapDocuments) {
  auto list = Configuration::from_yaml_string("pipeline.name: [a, b]\n");
  ASSERT_FALSE(list.is_ok());
  EXPECT_NE(list.status().message().find("'pipeline.name' has a list value"), std::string::npos)
      << list.status().message();
  auto scalar = Configuration::from_yaml_string("just text\n");
  ASSERT_FALSE(scalar.is_ok());
  EXPECT_NE(scalar.status().message().find("expected a map of configuration keys"), std::string::npos);
}

TEST(ConfigYaml, RejectsAKeyGivenTwice) {
  auto literal = Configuration::from_yaml_string("parallelism.default: 2\npipeline.name: x\nparallelism.default: 4\n");
  ASSERT_FALSE(literal.is_ok());
  EXPECT_EQ(literal.status().message(),
            "config file '<string>', line 3: 'parallelism.default' is already set on line 1; expected each key once");
  auto flat_and_nested = Configuration::from_yaml_string("parallelism.default: 2\nparallelism:\n  default: 4\n");
  ASSERT_FALSE(flat_and_nested.is_ok());
  EXPECT_NE(flat_and_nested.status().message().find("'parallelism.default' is already set on line 1"),
            std::string::npos)
      << flat_and_nested.status().message();
}

// A map key repeated in one map (at the top level or deeper) would merge its two blocks silently: an error
// naming the key and both lines.
TEST(ConfigYaml, RejectsAMapKeyGivenTwice) {
  auto top = Configuration::from_yaml_string(
      "execution:\n  checkpointing:\n    interval: 1s\npipeline.name: x\nexecution:\n  buffer-timeout:\n"
      "    interval: 5ms\n");
  ASSERT_FALSE(top.is_ok());
  EXPECT_EQ(top.status().message(),
            "config file '<string>', line 5: 'execution' is already set on line 1; expected each key once in a map "
            "(merge the two blocks)");
  auto nested = Configuration::from_yaml_string(
      "execution:\n  checkpointing:\n    interval: 1s\n  checkpointing:\n    timeout: 1 min\n");
  ASSERT_FALSE(nested.is_ok());
  EXPECT_NE(nested.status().message().find("line 4: 'execution.checkpointing' is already set on line 2"),
            std::string::npos)
      << nested.status().message();
  // A map and a scalar under the same key.
  auto mixed = Configuration::from_yaml_string("pipeline:\n  name: x\npipeline: y\n");
  ASSERT_FALSE(mixed.is_ok());
  EXPECT_NE(mixed.status().message().find("line 3: 'pipeline' is already set on line 1"), std::string::npos)
      << mixed.status().message();
  // Flat and nested keys that share a prefix are fine.
  EXPECT_TRUE(Configuration::from_yaml_string("execution.checkpointing.interval: 1s\nexecution:\n  checkpointing:\n"
                                              "    timeout: 1 min\n")
                  .is_ok());
}

}  // namespace
}  // namespace sluice
