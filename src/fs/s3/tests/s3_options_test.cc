// S3Options: defaults, reading Flink's s3.* keys, environment fallbacks, errors naming the key, and a describe()
// that never shows the secret.
#include "fs/s3/s3_options.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "fs/s3/s3_config_options.h"

namespace sluice::s3 {
namespace {

using std::chrono::milliseconds;

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

S3Options valid_options() {
  S3Options o;
  o.endpoint = "http://127.0.0.1:9000";
  o.access_key = "AKIDEXAMPLE";
  o.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  return o;
}

TEST(S3Options, DefaultsAreDocumented) {
  S3Options o;
  EXPECT_EQ(o.region, "us-east-1");
  EXPECT_FALSE(o.path_style_access);
  EXPECT_EQ(o.max_retries, 5);
  EXPECT_EQ(o.part_size_bytes, 8 * kMiB);
  EXPECT_EQ(o.multipart_threshold_bytes, 8 * kMiB);
  EXPECT_EQ(o.effective_endpoint(), "https://s3.us-east-1.amazonaws.com");
  o.region = "eu-west-1";
  EXPECT_EQ(o.effective_endpoint(), "https://s3.eu-west-1.amazonaws.com");
  o.endpoint = "minio.local:9000";
  EXPECT_EQ(o.effective_endpoint(), "https://minio.local:9000");
}

TEST(S3Options, ConfigOptionDefaultsMatchTheStruct) {
  Result<S3Options> o = s3_options_from_config(Configuration(), fake_env({{"AWS_ACCESS_KEY_ID", "a"},
                                                                          {"AWS_SECRET_ACCESS_KEY", "s"}}));
  ASSERT_TRUE(o.is_ok()) << o.status().to_string();
  S3Options defaults;
  EXPECT_EQ(o->region, defaults.region);
  EXPECT_EQ(o->connect_timeout_ms, defaults.connect_timeout_ms);
  EXPECT_EQ(o->request_timeout_ms, defaults.request_timeout_ms);
  EXPECT_EQ(o->max_retries, defaults.max_retries);
  EXPECT_EQ(o->retry_base_delay_ms, defaults.retry_base_delay_ms);
  EXPECT_EQ(o->retry_max_delay_ms, defaults.retry_max_delay_ms);
  EXPECT_EQ(o->part_size_bytes, defaults.part_size_bytes);
  EXPECT_EQ(o->multipart_threshold_bytes, defaults.multipart_threshold_bytes);
  EXPECT_EQ(o->upload_parallelism, defaults.upload_parallelism);
  EXPECT_EQ(o->download_parallelism, defaults.download_parallelism);
  EXPECT_EQ(o->path_style_access, defaults.path_style_access);
}

TEST(S3Options, ReadsEveryKeyFromTheConfiguration) {
  Configuration config;
  config.set(options::kEndpoint, std::string("http://127.0.0.1:9000"));
  config.set(options::kRegion, std::string("eu-central-1"));
  config.set(options::kAccessKey, std::string("AKID"));
  config.set(options::kSecretKey, std::string("SECRET"));
  config.set(options::kPathStyleAccess, true);
  config.set(options::kConnectTimeout, milliseconds(1500));
  config.set(options::kRequestTimeout, milliseconds(20'000));
  config.set(options::kRetryLimit, 3);
  config.set(options::kRetryInterval, milliseconds(50));
  config.set(options::kRetryMaxInterval, milliseconds(2000));
  config.set(options::kMultipartSize, MemorySize::of_mebibytes(16));
  config.set(options::kMultipartThreshold, MemorySize::of_mebibytes(32));
  config.set(options::kUploadParallelism, 8);
  config.set(options::kDownloadParallelism, 2);
  Result<S3Options> o = s3_options_from_config(config, fake_env({}));
  ASSERT_TRUE(o.is_ok()) << o.status().to_string();
  EXPECT_EQ(o->endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(o->region, "eu-central-1");
  EXPECT_EQ(o->access_key, "AKID");
  EXPECT_EQ(o->secret_key, "SECRET");
  EXPECT_TRUE(o->path_style_access);
  EXPECT_EQ(o->connect_timeout_ms, 1500);
  EXPECT_EQ(o->request_timeout_ms, 20'000);
  EXPECT_EQ(o->max_retries, 3);
  EXPECT_EQ(o->retry_base_delay_ms, 50);
  EXPECT_EQ(o->retry_max_delay_ms, 2000);
  EXPECT_EQ(o->part_size_bytes, 16 * kMiB);
  EXPECT_EQ(o->multipart_threshold_bytes, 32 * kMiB);
  EXPECT_EQ(o->upload_parallelism, 8);
  EXPECT_EQ(o->download_parallelism, 2);
}

TEST(S3Options, CredentialsFallBackToTheEnvironment) {
  Configuration config;
  Result<S3Options> from_env =
      s3_options_from_config(config, fake_env({{"AWS_ACCESS_KEY_ID", "ENVKEY"}, {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"}}));
  ASSERT_TRUE(from_env.is_ok()) << from_env.status().to_string();
  EXPECT_EQ(from_env->access_key, "ENVKEY");
  EXPECT_EQ(from_env->secret_key, "ENVSECRET");

  config.set(options::kAccessKey, std::string("CONFKEY"));
  config.set(options::kSecretKey, std::string("CONFSECRET"));
  Result<S3Options> configured =
      s3_options_from_config(config, fake_env({{"AWS_ACCESS_KEY_ID", "ENVKEY"}, {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"}}));
  ASSERT_TRUE(configured.is_ok());
  EXPECT_EQ(configured->access_key, "CONFKEY");  // the configuration wins
  EXPECT_EQ(configured->secret_key, "CONFSECRET");
}

TEST(S3Options, MissingCredentialsNameBothPlacesLooked) {
  Result<S3Options> o = s3_options_from_config(Configuration(), fake_env({}));
  ASSERT_FALSE(o.is_ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(o.status().message().find("s3.access-key"), std::string::npos) << o.status().message();
  EXPECT_NE(o.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos) << o.status().message();

  Result<S3Options> no_secret = s3_options_from_config(Configuration(), fake_env({{"AWS_ACCESS_KEY_ID", "k"}}));
  ASSERT_FALSE(no_secret.is_ok());
  EXPECT_NE(no_secret.status().message().find("s3.secret-key"), std::string::npos) << no_secret.status().message();
}

// Each bad value: the error names the key and what was expected.
TEST(S3Options, BadValuesNameTheKeyAndTheExpectation) {
  struct Case {
    std::function<void(S3Options&)> change;
    std::string key;
    std::string expected;
  };
  std::vector<Case> cases = {
      {[](S3Options& o) { o.endpoint = "ftp://host"; }, "s3.endpoint", "http or https"},
      {[](S3Options& o) { o.endpoint = "http://host:99999"; }, "s3.endpoint", "[1, 65535]"},
      {[](S3Options& o) { o.endpoint = "http://host/bucket"; }, "s3.endpoint", "path"},
      {[](S3Options& o) { o.region = ""; }, "s3.region", "us-east-1"},
      {[](S3Options& o) { o.connect_timeout_ms = 0; }, "s3.connection.establish.timeout", ">= 1ms"},
      {[](S3Options& o) { o.request_timeout_ms = -5; }, "s3.connection.request.timeout", ">= 1ms"},
      {[](S3Options& o) { o.max_retries = -1; }, "s3.retry.limit", "[0, 30]"},
      {[](S3Options& o) { o.max_retries = 31; }, "s3.retry.limit", "[0, 30]"},
      {[](S3Options& o) { o.retry_base_delay_ms = 0; }, "s3.retry.interval", ">= 1ms"},
      {[](S3Options& o) { o.retry_max_delay_ms = 10; }, "s3.retry.max-interval", ">= s3.retry.interval"},
      {[](S3Options& o) { o.part_size_bytes = kMiB; }, "s3.multipart.size", "[5mb, 5gb]"},
      {[](S3Options& o) { o.part_size_bytes = kMaxPartSizeBytes + 1; }, "s3.multipart.size", "[5mb, 5gb]"},
      {[](S3Options& o) { o.multipart_threshold_bytes = 4 * kMiB; }, "s3.multipart.threshold", ">= 5mb"},
      {[](S3Options& o) { o.upload_parallelism = 0; }, "s3.upload.parallelism", "[1, 64]"},
      {[](S3Options& o) { o.download_parallelism = 65; }, "s3.download.parallelism", "[1, 64]"},
  };
  ASSERT_TRUE(valid_options().validate().is_ok());
  for (const Case& c : cases) {
    S3Options o = valid_options();
    c.change(o);
    Status s = o.validate();
    ASSERT_FALSE(s.is_ok()) << c.key;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_EQ(s.message().rfind(c.key + ":", 0), 0u) << "should start with the key: " << s.message();
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
}

TEST(S3Options, ConfigurationRejectsOutOfRangeValuesAtSetTime) {
  Configuration config;
  Status s = config.try_set(options::kMultipartSize, MemorySize::of_mebibytes(1));
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("s3.multipart.size"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[5mb, 5gb]"), std::string::npos) << s.message();
  Result<ParsedOptionValue> parsed = options::kRetryLimit.parse_value("many");
  ASSERT_FALSE(parsed.is_ok());
  EXPECT_NE(parsed.status().message().find("s3.retry.limit"), std::string::npos);
}

TEST(S3Options, DescribeRedactsTheSecret) {
  S3Options o = valid_options();
  std::string text = o.describe();
  EXPECT_EQ(text.find(o.secret_key), std::string::npos) << text;
  EXPECT_NE(text.find("secret_key=<redacted>"), std::string::npos) << text;
  EXPECT_NE(text.find("access_key=AKIDEXAMPLE"), std::string::npos) << text;
  EXPECT_NE(text.find("endpoint=http://127.0.0.1:9000"), std::string::npos) << text;
  EXPECT_NE(text.find("part_size=8mb"), std::string::npos) << text;
  o.secret_key.clear();
  EXPECT_NE(o.describe().find("secret_key=<unset>"), std::string::npos);
}

TEST(S3Options, EveryOptionHasAnS3KeyAndADescription) {
  std::set<std::string> keys;
  for (const ConfigOptionBase* option : options::all_s3_options()) {
    EXPECT_EQ(option->key.rfind("s3.", 0), 0u) << option->key;
    EXPECT_FALSE(option->description.empty()) << option->key;
    EXPECT_TRUE(keys.insert(option->key).second) << "duplicate " << option->key;
  }
  EXPECT_EQ(keys.size(), 14u);
}

}  // namespace
}  // namespace sluice::s3
