#include "sluice/config/configuration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "log_capture.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
using testing::LogCapture;

TEST(Configuration, DefaultsWhenUnset) {
  Configuration c;
  EXPECT_EQ(c.get(options::kDefaultParallelism), 1);
  EXPECT_EQ(c.get(options::kMaxParallelism), -1);
  EXPECT_EQ(c.get(options::kPipelineName), "");
  EXPECT_EQ(c.get(options::kBufferTimeoutInterval), milliseconds(100));
  EXPECT_EQ(c.get(options::kAutoWatermarkInterval), milliseconds(200));
  EXPECT_TRUE(c.get(options::kBufferTimeoutEnabled));
  EXPECT_EQ(c.get(options::kMemorySegmentSize), MemorySize::of_kibibytes(32));
  EXPECT_EQ(c.get(options::kNetworkBuffersPerChannel), 2);
  EXPECT_EQ(c.get(options::kNetworkMaxBuffersPerChannel), 10);
  EXPECT_EQ(c.get(options::kStateBackendType), StateBackendType::kHashMap);
  EXPECT_FALSE(c.contains("parallelism.default"));
  EXPECT_TRUE(c.to_map().empty());
}

TEST(Configuration, TypedSetAndGet) {
  Configuration c;
  c.set(options::kDefaultParallelism, 4);
  c.set(options::kPipelineName, std::string("nexmark"));
  c.set(options::kBufferTimeoutInterval, milliseconds(5));
  c.set(options::kMemorySegmentSize, MemorySize::of_kibibytes(64));
  EXPECT_EQ(c.get(options::kDefaultParallelism), 4);
  EXPECT_EQ(c.get(options::kPipelineName), "nexmark");
  EXPECT_EQ(c.get(options::kBufferTimeoutInterval), milliseconds(5));
  EXPECT_EQ(c.get(options::kMemorySegmentSize), MemorySize::of_kibibytes(64));
  EXPECT_TRUE(c.contains("parallelism.default"));
  std::map<std::string, std::string> expected{{"execution.buffer-timeout.interval", "5ms"},
                                              {"parallelism.default", "4"},
                                              {"pipeline.name", "nexmark"},
                                              {"taskmanager.memory.segment-size", "64kb"}};
  EXPECT_EQ(c.to_map(), expected);
}

TEST(Configuration, TypedSetRejectsOutOfRangeValues) {
  Configuration c;
  Status s = c.try_set(options::kDefaultParallelism, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "parallelism.default: 0 is out of range (expected >= 1)");
  EXPECT_FALSE(c.contains("parallelism.default"));

  LogCapture log;
  c.set(options::kDefaultParallelism, -3);  // a precondition violation: logged, not stored
  EXPECT_EQ(c.get(options::kDefaultParallelism), 1);
  EXPECT_NE(log.text().find("parallelism.default: -3 is out of range"), std::string::npos) << log.text();
}

TEST(Configuration, SetStringParsesEveryType) {
  Configuration c;
  ASSERT_TRUE(c.set_string("parallelism.default", "8").is_ok());
  ASSERT_TRUE(c.set_string("pipeline.max-parallelism", "256").is_ok());
  ASSERT_TRUE(c.set_string("pipeline.name", "my job").is_ok());
  ASSERT_TRUE(c.set_string("execution.buffer-timeout.interval", "1 s").is_ok());
  ASSERT_TRUE(c.set_string("execution.buffer-timeout.enabled", "False").is_ok());
  ASSERT_TRUE(c.set_string("taskmanager.memory.segment-size", "1mb").is_ok());
  ASSERT_TRUE(c.set_string("state.backend.type", "hashmap").is_ok());
  EXPECT_EQ(c.get(options::kDefaultParallelism), 8);
  EXPECT_EQ(c.get(options::kMaxParallelism), 256);
  EXPECT_EQ(c.get(options::kPipelineName), "my job");
  EXPECT_EQ(c.get(options::kBufferTimeoutInterval), milliseconds(1000));
  EXPECT_FALSE(c.get(options::kBufferTimeoutEnabled));
  EXPECT_EQ(c.get(options::kMemorySegmentSize), MemorySize::of_mebibytes(1));
  EXPECT_EQ(c.get(options::kStateBackendType), StateBackendType::kHashMap);
  auto m = c.to_map();
  EXPECT_EQ(m["execution.buffer-timeout.interval"], "1s");
  EXPECT_EQ(m["execution.buffer-timeout.enabled"], "false");
  EXPECT_EQ(m["taskmanager.memory.segment-size"], "1mb");
  EXPECT_EQ(m["state.backend.type"], "HASHMAP");  // stored canonical upper-case
}

TEST(Configuration, BadValueNamesKeyValueAndWhatIsAccepted) {
  Configuration c;
  Status s = c.set_string("execution.buffer-timeout.interval", "fast");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "execution.buffer-timeout.interval: 'fast' is not a duration (expected e.g. 100ms, 1s, 2 min)");
  s = c.set_string("parallelism.default", "many");
  EXPECT_EQ(s.message(), "parallelism.default: 'many' is not an integer (expected a whole number such as 4)");
  s = c.set_string("execution.buffer-timeout.enabled", "yes");
  EXPECT_EQ(s.message(), "execution.buffer-timeout.enabled: 'yes' is not a boolean (expected true or false)");
  s = c.set_string("state.backend.type", "memory");
  EXPECT_EQ(s.message(),
            "state.backend.type: 'memory' is not an accepted value (expected one of HASHMAP, ROCKSDB, JOBMANAGER, "
            "MEMORYSTATEBACKEND, FILESYSTEM, FSSTATEBACKEND, ROCKSDBSTATEBACKEND, case-insensitive)");
  EXPECT_TRUE(c.to_map().empty()) << "failed sets must not store anything";
}

TEST(Configuration, RangeValidation) {
  struct Case {
    const char* key;
    const char* value;
    bool ok;
  };
  const Case cases[] = {
      {"parallelism.default", "1", true},
      {"parallelism.default", "0", false},
      {"parallelism.default", "-1", false},
      {"pipeline.max-parallelism", "-1", true},
      {"pipeline.max-parallelism", "1", true},
      {"pipeline.max-parallelism", "32768", true},
      {"pipeline.max-parallelism", "32769", false},
      {"pipeline.max-parallelism", "0", false},
      {"pipeline.max-parallelism", "-2", false},
      {"taskmanager.network.memory.buffers-per-channel", "1", true},
      {"taskmanager.network.memory.buffers-per-channel", "0", false},
      {"taskmanager.network.memory.max-buffers-per-channel", "0", false},
      {"taskmanager.memory.segment-size", "4kb", true},
      {"taskmanager.memory.segment-size", "16mb", true},
      {"taskmanager.memory.segment-size", "2kb", false},
      {"taskmanager.memory.segment-size", "32mb", false},
      {"taskmanager.memory.segment-size", "48kb", false},  // not a power of two
      {"execution.buffer-timeout.interval", "0ms", true},
  };
  for (const Case& tc : cases) {
    Configuration c;
    Status s = c.set_string(tc.key, tc.value);
    EXPECT_EQ(s.is_ok(), tc.ok) << tc.key << "=" << tc.value << ": " << s.to_string();
    if (!tc.ok) {
      EXPECT_NE(s.message().find(tc.key), std::string::npos) << s.message();
      EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
    }
  }
  Configuration c;
  EXPECT_EQ(c.set_string("pipeline.max-parallelism", "40000").message(),
            "pipeline.max-parallelism: 40000 is out of range (expected -1 or in [1, 32768])");
  EXPECT_EQ(c.set_string("taskmanager.memory.segment-size", "1kb").message(),
            "taskmanager.memory.segment-size: 1kb is out of range (expected a power of two in [4kb, 16mb])");
}

TEST(Configuration, DeprecatedKeysResolveWithAWarning) {
  LogCapture log;
  Configuration c;
  ASSERT_TRUE(c.set_string("execution.buffer-timeout", "10ms").is_ok());
  ASSERT_TRUE(c.set_string("state.backend", "HashMap").is_ok());
  EXPECT_EQ(c.get(options::kBufferTimeoutInterval), milliseconds(10));
  EXPECT_TRUE(c.contains("execution.buffer-timeout"));
  EXPECT_TRUE(c.contains("execution.buffer-timeout.interval"));
  EXPECT_EQ(c.to_map().count("execution.buffer-timeout"), 0u) << "stored under the canonical key";
  EXPECT_EQ(c.to_map().at("state.backend.type"), "HASHMAP");
  std::string text = log.text();
  EXPECT_NE(text.find("warning: configuration key 'execution.buffer-timeout' is deprecated; use "
                      "'execution.buffer-timeout.interval' instead"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("'state.backend' is deprecated; use 'state.backend.type'"), std::string::npos) << text;
}

// Flink's rule, for -D as for a file: the canonical key wins over its deprecated key in either order.
TEST(Configuration, CanonicalKeyWinsOverADeprecatedKeySetLater) {
  LogCapture log;
  Configuration c;
  ASSERT_TRUE(c.apply_dynamic_property("s3.access-key=good").is_ok());
  ASSERT_TRUE(c.apply_dynamic_property("s3.access.key=stale").is_ok());
  EXPECT_EQ(c.get(options::kS3AccessKey), "good");
  EXPECT_NE(log.text().find("ignoring deprecated key 's3.access.key' because 's3.access-key' is also set"),
            std::string::npos)
      << log.text();
  Configuration d;
  ASSERT_TRUE(d.apply_dynamic_property("s3.access.key=stale").is_ok());
  ASSERT_TRUE(d.apply_dynamic_property("s3.access-key=good").is_ok());
  EXPECT_EQ(d.get(options::kS3AccessKey), "good");
  ASSERT_TRUE(d.apply_dynamic_property("s3.access.key=again").is_ok());
  EXPECT_EQ(d.get(options::kS3AccessKey), "good");
}

TEST(Configuration, SecretsAreRedactedFromMessages) {
  EXPECT_TRUE(is_sensitive_key("s3.secret-key"));
  EXPECT_TRUE(is_sensitive_key("S3.Secret-Key"));
  EXPECT_TRUE(is_sensitive_key("metrics.reporter.x.password"));
  EXPECT_FALSE(is_sensitive_key("s3.access-key"));
  EXPECT_EQ(redact_sensitive_values("-D s3.secret-kye=TOPSECRET x=1"), "-D s3.secret-kye=<redacted> x=1");
  EXPECT_EQ(redact_sensitive_values("not expected: s3.secret-key TOPSECRET --x"),
            "not expected: s3.secret-key <redacted> --x");
  EXPECT_EQ(redact_sensitive_values("'s3.secret.key=TOPSECRET'"), "'s3.secret.key=<redacted>'");
  EXPECT_EQ(redact_sensitive_values("s3.endpoint=http://h:1"), "s3.endpoint=http://h:1");
  EXPECT_EQ(redact_sensitive_values("password: TOPSECRET"), "password: <redacted>");
  // Words that merely contain a sensitive word are not keys: an operator named "tokenize" keeps its subtask.
  EXPECT_EQ(redact_sensitive_values("task Source: lines -> tokenize (1/2): operator 'tokenize' (subtask 1/2) failed"),
            "task Source: lines -> tokenize (1/2): operator 'tokenize' (subtask 1/2) failed");
  Configuration c;
  Status s = c.apply_dynamic_property("s3.secret-key TOPSECRET");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find("TOPSECRET"), std::string::npos) << s.message();
}

TEST(Configuration, CanonicalKeyDoesNotWarn) {
  LogCapture log;
  Configuration c;
  ASSERT_TRUE(c.set_string("execution.buffer-timeout.interval", "10ms").is_ok());
  EXPECT_EQ(log.text(), "");
}

TEST(Configuration, UnknownKeySuggestsClosestKeys) {
  Configuration c;
  Status s = c.set_string("parallelism.defualt", "4");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown configuration key 'parallelism.defualt'; did you mean 'parallelism.default'?");

  s = c.set_string("state.backend.typ", "hashmap");
  EXPECT_EQ(s.message(), "unknown configuration key 'state.backend.typ'; did you mean 'state.backend.type'?");

  s = c.set_string("taskmanager.network.memory.buffers-per-chanel", "2");
  EXPECT_NE(s.message().find("did you mean 'taskmanager.network.memory.buffers-per-channel'"), std::string::npos)
      << s.message();

  s = c.set_string("web.submit.enable", "true");
  EXPECT_EQ(s.message(), "unknown configuration key 'web.submit.enable' (see docs/configuration.md for the "
                         "known keys)");
}

TEST(Configuration, SuggestKeys) {
  EXPECT_EQ(suggest_keys("Parallelism.Default"), std::vector<std::string>{"parallelism.default"});
  // A key segment that matches: the whole key is suggested even though it is many edits away.
  EXPECT_EQ(suggest_keys("max-buffers-per-channel"),
            std::vector<std::string>{"taskmanager.network.memory.max-buffers-per-channel"});
  auto several = suggest_keys("execution.buffer-timeout.x");
  ASSERT_GE(several.size(), 2u);
  EXPECT_EQ(std::set<std::string>(several.begin(), several.begin() + 2),
            (std::set<std::string>{"execution.buffer-timeout.interval", "execution.buffer-timeout.enabled"}));
  EXPECT_TRUE(suggest_keys("zzz").empty());
  EXPECT_LE(suggest_keys("taskmanager.network.memory", 1).size(), 1u);
}

// Suggestions compare the unknown key with every known key by edit distance, which for a key of megabytes (a
// value pasted as a -D flag) took 17 s for 4 MB; a key far longer than any known one has no suggestion, at once (found
// profiling fuzz/config_fuzzer, which spent most of its time there).
TEST(Configuration, AnUnknownKeyOfMegabytesIsRefusedAtOnce) {
  const std::string huge(4 << 20, 'k');
  const auto start = std::chrono::steady_clock::now();
  Configuration c;
  Status s = c.apply_dynamic_property(huge + "=1");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find("did you mean"), std::string::npos);
  EXPECT_TRUE(suggest_keys(huge).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(Configuration, DynamicProperties) {
  Configuration c;
  ASSERT_TRUE(c.apply_dynamic_property("parallelism.default=3").is_ok());
  EXPECT_EQ(c.get(options::kDefaultParallelism), 3);
  // Only the first '=' separates key and value.
  ASSERT_TRUE(c.apply_dynamic_property("pipeline.name=a=b=c").is_ok());
  EXPECT_EQ(c.get(options::kPipelineName), "a=b=c");
  ASSERT_TRUE(c.apply_dynamic_property(" pipeline.name =x").is_ok());
  EXPECT_EQ(c.get(options::kPipelineName), "x");
  ASSERT_TRUE(c.apply_dynamic_property("pipeline.name=").is_ok());
  EXPECT_EQ(c.get(options::kPipelineName), "");

  Status s = c.apply_dynamic_property("parallelism.default");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "dynamic property 'parallelism.default' is not of the form key=value");
  s = c.apply_dynamic_property("=4");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("empty key"), std::string::npos);
  s = c.apply_dynamic_property("parallelism.default=lots");
  EXPECT_NE(s.message().find("parallelism.default: 'lots' is not an integer"), std::string::npos);
  s = c.apply_dynamic_property("paralelism.default=2");
  EXPECT_NE(s.message().find("did you mean 'parallelism.default'"), std::string::npos);
  EXPECT_EQ(c.get(options::kDefaultParallelism), 3);
}

TEST(Configuration, MergeLetsOtherWin) {
  Configuration base;
  base.set(options::kDefaultParallelism, 2);
  base.set(options::kPipelineName, std::string("base"));
  Configuration overrides;
  overrides.set(options::kDefaultParallelism, 6);
  overrides.set(options::kBufferTimeoutEnabled, false);
  base.merge(overrides);
  EXPECT_EQ(base.get(options::kDefaultParallelism), 6);
  EXPECT_EQ(base.get(options::kPipelineName), "base");
  EXPECT_FALSE(base.get(options::kBufferTimeoutEnabled));
  EXPECT_EQ(overrides.to_map().size(), 2u) << "merge must not change its argument";
}

TEST(Configuration, IsAValueType) {
  Configuration a;
  a.set(options::kDefaultParallelism, 2);
  Configuration b = a;
  b.set(options::kDefaultParallelism, 5);
  EXPECT_EQ(a.get(options::kDefaultParallelism), 2);
  EXPECT_EQ(b.get(options::kDefaultParallelism), 5);
  EXPECT_FALSE(a == b);
  b.set(options::kDefaultParallelism, 2);
  EXPECT_TRUE(a == b);
}

TEST(Configuration, UnregisteredOptionsWorkThroughTypedAccess) {
  const ConfigOption<int64_t> local{"test.local-option", 42, "Only in this test.", {},
                                    {[](const int64_t& v) { return v % 2 == 0; }, "an even number"}};
  Configuration c;
  EXPECT_EQ(c.get(local), 42);
  c.set(local, int64_t{8});
  EXPECT_EQ(c.get(local), 8);
  EXPECT_TRUE(c.contains("test.local-option"));
  EXPECT_EQ(c.try_set(local, int64_t{7}).message(), "test.local-option: 7 is out of range (expected an even number)");
  // Text entry points only know registered keys.
  EXPECT_FALSE(c.set_string("test.local-option", "10").is_ok());
}

TEST(OptionRegistry, KeysAndAliasesAreUniqueAndDefaultsValid) {
  std::set<std::string> seen;
  for (const ConfigOptionBase* option : all_options()) {
    EXPECT_TRUE(seen.insert(option->key).second) << "duplicate key " << option->key;
    for (const auto& alias : option->deprecated_keys) EXPECT_TRUE(seen.insert(alias).second) << alias;
    EXPECT_FALSE(option->description.empty()) << option->key;
    // The documented default must itself be accepted, and survive a text round trip.
    auto parsed = option->parse_value(option->default_value_string());
    ASSERT_TRUE(parsed.is_ok()) << option->key << ": " << parsed.status().to_string();
    EXPECT_EQ(parsed->formatted, option->default_value_string());
  }
  EXPECT_EQ(all_options().size(), 108u);
}

TEST(OptionRegistry, FindOption) {
  auto canonical = find_option("state.backend.type");
  ASSERT_NE(canonical.option, nullptr);
  EXPECT_FALSE(canonical.deprecated);
  auto alias = find_option("state.backend");
  EXPECT_EQ(alias.option, canonical.option);
  EXPECT_TRUE(alias.deprecated);
  EXPECT_EQ(find_option("state").option, nullptr);
  EXPECT_EQ(find_option("execution.buffer-timeout").option, &options::kBufferTimeoutInterval);
}

TEST(Configuration, RuntimeModeAndSortedInputsMemory) {
  Configuration c;
  EXPECT_EQ(c.get(options::kRuntimeMode), RuntimeExecutionMode::kStreaming);
  EXPECT_EQ(c.get(options::kSortedInputsMemory).bytes, 64u << 20);
  ASSERT_TRUE(c.apply_dynamic_property("execution.runtime-mode=BATCH").is_ok());
  EXPECT_EQ(c.get(options::kRuntimeMode), RuntimeExecutionMode::kBatch);
  ASSERT_TRUE(c.apply_dynamic_property("execution.runtime-mode=AUTOMATIC").is_ok());
  EXPECT_EQ(c.get(options::kRuntimeMode), RuntimeExecutionMode::kAutomatic);
  Status bad = c.apply_dynamic_property("execution.runtime-mode=FAST");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("execution.runtime-mode"), std::string::npos) << bad.to_string();
  ASSERT_TRUE(c.apply_dynamic_property("execution.sorted-inputs.memory=1mb").is_ok());
  EXPECT_EQ(c.get(options::kSortedInputsMemory).bytes, 1u << 20);
  EXPECT_FALSE(c.apply_dynamic_property("execution.sorted-inputs.memory=1kb").is_ok());
}

}  // namespace
}  // namespace sluice
