// The configuration options of the S3 client (s3_options.h maps each to its S3Options field): the registered
// options of include/sluice/config/options.h, under the names the client uses.
// Thread-safety: immutable namespace-scope constants.
#pragma once

#include <vector>

#include "sluice/config/options.h"

namespace sluice::s3::options {

inline const auto& kEndpoint = sluice::options::kS3Endpoint;
inline const auto& kRegion = sluice::options::kS3Region;
inline const auto& kAccessKey = sluice::options::kS3AccessKey;
inline const auto& kSecretKey = sluice::options::kS3SecretKey;
inline const auto& kPathStyleAccess = sluice::options::kS3PathStyleAccess;
inline const auto& kConnectTimeout = sluice::options::kS3ConnectTimeout;
inline const auto& kRequestTimeout = sluice::options::kS3RequestTimeout;
inline const auto& kRetryLimit = sluice::options::kS3RetryLimit;
inline const auto& kRetryInterval = sluice::options::kS3RetryInterval;
inline const auto& kRetryMaxInterval = sluice::options::kS3RetryMaxInterval;
inline const auto& kMultipartSize = sluice::options::kS3MultipartSize;
inline const auto& kMultipartThreshold = sluice::options::kS3MultipartThreshold;
inline const auto& kUploadParallelism = sluice::options::kS3UploadParallelism;
inline const auto& kDownloadParallelism = sluice::options::kS3DownloadParallelism;

// All of the above, in documentation order.
inline std::vector<const ConfigOptionBase*> all_s3_options() {
  return {&kEndpoint,       &kRegion,        &kAccessKey,          &kSecretKey,          &kPathStyleAccess,
          &kConnectTimeout, &kRequestTimeout, &kRetryLimit,        &kRetryInterval,      &kRetryMaxInterval,
          &kMultipartSize,  &kMultipartThreshold, &kUploadParallelism, &kDownloadParallelism};
}

}  // namespace sluice::s3::options
