// S3Options: where an S3-compatible object store is, how to sign for it, and how hard to try.
//
// One struct for the S3 client (s3_client.h). Keys are Flink's where Flink has one (its S3 filesystems take
// `s3.*` keys and forward them to Hadoop's `fs.s3a.*`, so the Hadoop names follow the `s3.` prefix); Sluice's
// own keys are marked. The ConfigOption declarations are in s3_config_options.h.
//
//   field                        key                                 default
//   endpoint                     s3.endpoint                         "" = https://s3.<region>.amazonaws.com
//   region                       s3.region                           us-east-1
//   access_key / secret_key      s3.access-key / s3.secret-key       "" = env AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
//   path_style_access            s3.path.style.access                false (virtual-hosted: <bucket>.<host>;
//                                                                    IP and localhost hosts: always path-style)
//   connect_timeout_ms           s3.connection.establish.timeout     10 s
//   request_timeout_ms           s3.connection.request.timeout       60 s (one HTTP request, body included)
//   max_retries                  s3.retry.limit                      5, in [0, 30]
//   retry_base_delay_ms          s3.retry.interval                   100 ms
//   retry_max_delay_ms           s3.retry.max-interval (Sluice)      5 s
//   part_size_bytes              s3.multipart.size                   8 MiB, in [5 MiB, 5 GiB]
//   multipart_threshold_bytes    s3.multipart.threshold              8 MiB, >= 5 MiB
//   upload_parallelism           s3.upload.parallelism (Sluice)      4, in [1, 64]
//   download_parallelism         s3.download.parallelism (Sluice)    4, in [1, 64]
//
// Retries: a request that fails with a retriable error (s3_retry_policy.h) is tried again up to max_retries
// times; before retry n (1-based) the client sleeps a uniformly random time in
// [0, min(retry_max_delay_ms, retry_base_delay_ms x 2^(n-1))] ("full jitter", AWS Architecture Blog,
// "Exponential Backoff And Jitter", 2015). So the worst case of one call is about
// (max_retries + 1) x request_timeout_ms + max_retries x retry_max_delay_ms.
//
// Multipart: S3 requires every part but the last to be at least 5 MiB and allows at most 10,000 parts
// (AWS S3 User Guide, "Amazon S3 multipart upload limits"); a file that would need more parts is uploaded with
// larger parts (size / 10,000 rounded up to a MiB). The 8 MiB defaults are the AWS CLI's
// (multipart_threshold, multipart_chunksize).
//
// Secrets: describe() never prints secret_key; no error message of the client contains it.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::s3 {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kMinPartSizeBytes = 5 * kMiB;               // S3: every part but the last
inline constexpr uint64_t kMaxPartSizeBytes = uint64_t{5} << 30;       // S3: 5 GiB per part
inline constexpr int32_t kMaxPartCount = 10'000;                       // S3: parts per upload
inline constexpr int32_t kMaxRetriesLimit = 30;                        // bound of max_retries
inline constexpr int32_t kMaxParallelism = 64;                         // bound of the parallelism options

struct S3Options {
  std::string endpoint;                           // "http://127.0.0.1:9000" or "https://host"; no scheme = https
  std::string region = "us-east-1";               // signs requests (SigV4 credential scope)
  std::string access_key;                         // the access key id (printed in describe())
  std::string secret_key;                         // never printed
  bool path_style_access = false;                 // true: <endpoint>/<bucket>/<key>; needed by most non-AWS stores
                                                  // and, over https, by bucket names with dots (TLS names)
  int64_t connect_timeout_ms = 10'000;            // TCP (+ TLS) connect, >= 1
  int64_t request_timeout_ms = 60'000;            // one whole HTTP request, >= 1; must cover one part's transfer
  int32_t max_retries = 5;                        // retries after the first attempt, in [0, 30]
  int64_t retry_base_delay_ms = 100;              // >= 1
  int64_t retry_max_delay_ms = 5'000;             // >= retry_base_delay_ms
  uint64_t part_size_bytes = 8 * kMiB;            // in [5 MiB, 5 GiB]
  uint64_t multipart_threshold_bytes = 8 * kMiB;  // files of at least this size go multipart; >= 5 MiB
  int32_t upload_parallelism = 4;                 // parts of one upload in flight, in [1, 64]
  int32_t download_parallelism = 4;               // ranged GETs of one download in flight, in [1, 64]

  // kInvalidArgument naming the key (as in the table above), the value and what is expected, e.g.
  // "s3.multipart.size: 1mb is below S3's minimum part size (expected in [5mb, 5gb])". Also checks that the
  // endpoint parses (scheme http or https, a host, an optional port, no path) and that both keys are set.
  Status validate() const;

  // One line for logs: every field, with the secret shown as "<redacted>" (or "<unset>").
  std::string describe() const;

  // The endpoint URL the client talks to: `endpoint` with a scheme, or AWS's regional endpoint when empty.
  std::string effective_endpoint() const;
};

// Reads an environment variable; std::nullopt when unset. Injected so tests need not touch the process env.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
// getenv.
EnvLookup process_env();

// S3Options from `config` (the keys above; defaults for keys not set). An empty access or secret key falls back
// to the environment variables AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, as the AWS SDKs do. The result is
// validated: kInvalidArgument as validate(), e.g. when no credentials are found anywhere
// ("s3.access-key: not set and AWS_ACCESS_KEY_ID is not set either ...").
Result<S3Options> s3_options_from_config(const Configuration& config, const EnvLookup& env = process_env());

}  // namespace sluice::s3
