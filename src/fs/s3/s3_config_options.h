// The configuration options of the S3 client (s3_options.h maps each to its S3Options field).
//
// Declared here, next to the code that reads them, and read with Configuration::get(). They are not (yet) in
// the registry of src/config/options.cc (all_options()), so config.yaml and -D flags do not accept them; code
// can set them with Configuration::set(). Registering them means adding these objects to all_options() and a
// row per key to docs/configuration.md (see src/fs/s3/README.md).
//
// Thread-safety: immutable namespace-scope constants (do not read them from other static initializers).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/config/config_option.h"
#include "sluice/config/option_type.h"

namespace sluice::s3::options {

// s3.endpoint (String, "" = AWS: https://s3.<region>.amazonaws.com): URL of the S3 API.
extern const ConfigOption<std::string> kEndpoint;
// s3.region (String, "us-east-1"; alias s3.endpoint.region, Hadoop's fs.s3a.endpoint.region): the signing region.
extern const ConfigOption<std::string> kRegion;
// s3.access-key (String, "" = env AWS_ACCESS_KEY_ID; alias s3.access.key).
extern const ConfigOption<std::string> kAccessKey;
// s3.secret-key (String, "" = env AWS_SECRET_ACCESS_KEY; alias s3.secret.key). Never printed.
extern const ConfigOption<std::string> kSecretKey;
// s3.path.style.access (Boolean, false; alias s3.path-style-access, the Presto filesystem's key).
extern const ConfigOption<bool> kPathStyleAccess;
// s3.connection.establish.timeout (Duration, 10s, >= 1ms).
extern const ConfigOption<std::chrono::milliseconds> kConnectTimeout;
// s3.connection.request.timeout (Duration, 60s, >= 1ms): one whole HTTP request.
extern const ConfigOption<std::chrono::milliseconds> kRequestTimeout;
// s3.retry.limit (Integer, 5, in [0, 30]): retries of one request after its first attempt.
extern const ConfigOption<int32_t> kRetryLimit;
// s3.retry.interval (Duration, 100ms, >= 1ms): base delay of the exponential backoff.
extern const ConfigOption<std::chrono::milliseconds> kRetryInterval;
// s3.retry.max-interval (Duration, 5s, >= 1ms; Sluice's own): cap of one backoff delay.
extern const ConfigOption<std::chrono::milliseconds> kRetryMaxInterval;
// s3.multipart.size (MemorySize, 8mb, in [5mb, 5gb]): size of each part but the last.
extern const ConfigOption<MemorySize> kMultipartSize;
// s3.multipart.threshold (MemorySize, 8mb, >= 5mb): files of at least this size are uploaded in parts.
extern const ConfigOption<MemorySize> kMultipartThreshold;
// s3.upload.parallelism (Integer, 4, in [1, 64]; Sluice's own): parts of one upload in flight.
extern const ConfigOption<int32_t> kUploadParallelism;
// s3.download.parallelism (Integer, 4, in [1, 64]; Sluice's own): ranged GETs of one download in flight.
extern const ConfigOption<int32_t> kDownloadParallelism;

// All of the above, in documentation order.
const std::vector<const ConfigOptionBase*>& all_s3_options();

}  // namespace sluice::s3::options
