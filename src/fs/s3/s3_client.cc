#include "fs/s3/s3_client.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <thread>

#include "fs/s3/s3_client_impl.h"
#include "fs/s3/s3_digest.h"
#include "fs/s3/s3_retry_policy.h"
#include "fs/s3/s3_xml.h"

namespace sluice::s3 {

namespace {

constexpr size_t kMaxKeysPerDelete = 1000;  // S3: DeleteObjects takes at most 1,000 keys

std::span<const uint8_t> as_bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// The <Error> of a failed response; when the body is not one (HEAD, a proxy's HTML page), its first bytes as the
// message so the reader still sees what came back.
S3ErrorBody error_body_of(const HttpResponse& response) {
  if (response.body.empty()) return {};
  Result<S3ErrorBody> parsed = parse_error(response.body_text());
  if (parsed.is_ok()) return std::move(parsed).value();
  constexpr size_t kShown = 200;
  std::string text(response.body_text().substr(0, kShown));
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return S3ErrorBody{"", "response body: " + text, ""};
}

Result<uint64_t> parse_size(std::string_view text, const RequestContext& c) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::corruption("S3 " + std::string(c.operation) + " of " + s3_uri(c.bucket, c.key) + " at " +
                              std::string(c.endpoint) + ": Content-Length '" + std::string(text) +
                              "' is not a number");
  }
  return value;
}

void raise_to(std::atomic<uint64_t>& peak, uint64_t value) {
  uint64_t seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

}  // namespace

std::function<uint64_t()> seeded_random(uint64_t seed) {
  auto generator = std::make_shared<SplitMix64>(seed);
  return [generator] { return generator->next(); };
}

// ---- Impl ----------------------------------------------------------------------------------------------------

S3Client::Impl::Impl(S3Options o, S3ClientHooks h)
    : options(std::move(o)),
      endpoint(parse_endpoint(options.effective_endpoint()).value()),
      endpoint_url(endpoint.url()),
      addressing(addressing_for(endpoint, options.path_style_access)),
      hooks(std::move(h)),
      transport(options) {
  if (!hooks.random) hooks.random = seeded_random(std::random_device{}());
  if (!hooks.sleep) {
    hooks.sleep = [](int64_t delay_ms) { std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms)); };
  }
}

int64_t S3Client::Impl::next_delay_ms(int32_t retry_number) {
  uint64_t random = 0;
  {
    std::lock_guard<std::mutex> lock(random_mu);
    random = hooks.random();
  }
  return full_jitter_delay_ms(retry_number, options.retry_base_delay_ms, options.retry_max_delay_ms, random);
}

Execution S3Client::Impl::execute(const RequestContext& context, const HttpRequest& request,
                                  bool error_body_in_2xx) {
  for (int32_t attempt = 1;; ++attempt) {
    raise_to(peak_in_flight, in_flight.fetch_add(1) + 1);
    HttpResponse response = transport.perform(request);
    in_flight.fetch_sub(1);
    requests.fetch_add(1, std::memory_order_relaxed);
    if (attempt > 1) retries.fetch_add(1, std::memory_order_relaxed);
    bytes_sent.fetch_add(response.bytes_sent, std::memory_order_relaxed);
    bytes_received.fetch_add(response.body.size(), std::memory_order_relaxed);

    AttemptFailure failure;
    failure.curl_code = response.curl_code;
    failure.curl_error = response.curl_error;
    failure.http_status = response.status;
    bool error_in_success_body = false;
    if (response.curl_code == 0) {
      bool success_status = response.status >= 200 && response.status < 300;
      if (!success_status) {
        failure.error = error_body_of(response);
      } else if (error_body_in_2xx && is_error_document(response.body_text())) {
        failure.error = error_body_of(response);
        error_in_success_body = true;
      }
    }
    switch (classify_attempt(response.curl_code, response.status, failure.error.code, error_in_success_body)) {
      case AttemptVerdict::kSuccess:
        return Execution{std::move(response), attempt};
      case AttemptVerdict::kFinal:
        return Execution{status_for_final_failure(context, failure, attempt), attempt};
      case AttemptVerdict::kRetriable:
        if (attempt > options.max_retries) {
          return Execution{status_for_exhausted_retries(context, failure, attempt), attempt};
        }
        hooks.sleep(next_delay_ms(attempt));
        break;
    }
  }
}

// ---- S3Client ------------------------------------------------------------------------------------------------

Result<std::unique_ptr<S3Client>> S3Client::create(S3Options options, S3ClientHooks hooks) {
  SLUICE_RETURN_IF_ERROR(options.validate());
  return std::unique_ptr<S3Client>(new S3Client(std::make_unique<Impl>(std::move(options), std::move(hooks))));
}

S3Client::S3Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
S3Client::~S3Client() = default;

S3ClientStats S3Client::stats() const {
  return S3ClientStats{impl_->requests.load(), impl_->retries.load(), impl_->bytes_sent.load(),
                       impl_->bytes_received.load(), impl_->peak_in_flight.load(),
                       static_cast<uint64_t>(impl_->in_flight.load())};
}

const S3Options& S3Client::options() const { return impl_->options; }

Status S3Client::put_object(std::string_view bucket, std::string_view key, std::span<const uint8_t> bytes) {
  HttpRequest request{HttpMethod::kPut, impl_->url(bucket, key), {}, bytes};
  return impl_->execute(impl_->context("PutObject", bucket, key), request).result.status();
}

Result<std::vector<uint8_t>> S3Client::get_object(std::string_view bucket, std::string_view key) {
  HttpRequest request{HttpMethod::kGet, impl_->url(bucket, key), {}, {}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                          impl_->execute(impl_->context("GetObject", bucket, key), request).result);
  return std::move(response.body);
}

Result<std::vector<uint8_t>> S3Client::get_object_range(std::string_view bucket, std::string_view key,
                                                        uint64_t offset_bytes, uint64_t length_bytes) {
  if (length_bytes == 0) return std::vector<uint8_t>();
  uint64_t last = offset_bytes + length_bytes - 1;
  HttpRequest request{HttpMethod::kGet,
                      impl_->url(bucket, key),
                      {{"Range", "bytes=" + std::to_string(offset_bytes) + "-" + std::to_string(last)}},
                      {}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                          impl_->execute(impl_->context("GetObject", bucket, key), request).result);
  if (response.status == 206) return std::move(response.body);
  // 200: the store ignored the Range header and sent the whole object.
  std::vector<uint8_t>& all = response.body;
  if (offset_bytes >= all.size()) return std::vector<uint8_t>();
  auto begin = all.begin() + static_cast<std::ptrdiff_t>(offset_bytes);
  auto end = all.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(all.size(), last + 1));
  return std::vector<uint8_t>(begin, end);
}

Result<ObjectHead> S3Client::head_object(std::string_view bucket, std::string_view key) {
  RequestContext c = impl_->context("HeadObject", bucket, key);
  HttpRequest request{HttpMethod::kHead, impl_->url(bucket, key), {}, {}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
  ObjectHead head;
  SLUICE_ASSIGN_OR_RETURN(head.size_bytes, parse_size(response.header("content-length").value_or("0"), c));
  head.etag = response.header("etag").value_or("");
  return head;
}

Result<ListObjectsPage> S3Client::list_objects_page(std::string_view bucket, std::string_view prefix,
                                                    std::string_view delimiter, std::string_view continuation_token,
                                                    int32_t max_keys) {
  RequestContext c = impl_->context("ListObjectsV2", bucket, "");
  if (max_keys < 1 || max_keys > 1000) {
    return Status::invalid_argument("S3 ListObjectsV2: max_keys is " + std::to_string(max_keys) +
                                    ", expected in [1, 1000]");
  }
  QueryParams params{{"list-type", "2"}, {"max-keys", std::to_string(max_keys)}};
  if (!prefix.empty()) params.emplace_back("prefix", std::string(prefix));
  if (!delimiter.empty()) params.emplace_back("delimiter", std::string(delimiter));
  if (!continuation_token.empty()) params.emplace_back("continuation-token", std::string(continuation_token));
  HttpRequest request{HttpMethod::kGet, impl_->url(bucket, "", std::move(params)), {}, {}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
  Result<ListObjectsPage> page = parse_list_objects_v2(response.body_text());
  if (!page.is_ok()) return page.status().with_context("listing '" + std::string(prefix) + "' in bucket '" +
                                                       std::string(bucket) + "' at " + impl_->endpoint_url);
  return page;
}

Result<ListObjectsResult> S3Client::list_objects(std::string_view bucket, std::string_view prefix,
                                                 std::string_view delimiter, int32_t max_keys_per_page) {
  ListObjectsResult result;
  std::string token;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(ListObjectsPage page,
                            list_objects_page(bucket, prefix, delimiter, token, max_keys_per_page));
    std::move(page.objects.begin(), page.objects.end(), std::back_inserter(result.objects));
    std::move(page.common_prefixes.begin(), page.common_prefixes.end(), std::back_inserter(result.common_prefixes));
    if (!page.truncated) return result;
    if (page.next_continuation_token == token) {
      return Status::corruption("S3 ListObjectsV2 of '" + std::string(prefix) + "' in bucket '" + std::string(bucket) +
                                "' at " + impl_->endpoint_url + " returned the continuation token '" + token +
                                "' again; the listing would never end");
    }
    token = std::move(page.next_continuation_token);
  }
}

Status S3Client::delete_object(std::string_view bucket, std::string_view key) {
  HttpRequest request{HttpMethod::kDelete, impl_->url(bucket, key), {}, {}};
  Status s = impl_->execute(impl_->context("DeleteObject", bucket, key), request).result.status();
  if (s.code() == StatusCode::kNotFound) return Status::ok();  // some stores answer 404 for a missing key
  return s;
}

Result<std::vector<DeleteObjectError>> S3Client::delete_objects(std::string_view bucket,
                                                                const std::vector<std::string>& keys) {
  std::vector<DeleteObjectError> errors;
  for (size_t begin = 0; begin < keys.size(); begin += kMaxKeysPerDelete) {
    size_t end = std::min(keys.size(), begin + kMaxKeysPerDelete);
    std::vector<std::string> batch(keys.begin() + static_cast<std::ptrdiff_t>(begin),
                                   keys.begin() + static_cast<std::ptrdiff_t>(end));
    std::string body = delete_objects_body(batch, /*quiet=*/true);
    HttpRequest request{HttpMethod::kPost,
                        impl_->url(bucket, "", {{"delete", ""}}),
                        {{"Content-Type", "application/xml"}, {"Content-MD5", md5_base64(as_bytes(body))}},
                        as_bytes(body)};
    RequestContext c = impl_->context("DeleteObjects", bucket, "");
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
    SLUICE_ASSIGN_OR_RETURN(std::vector<DeleteObjectError> batch_errors, parse_delete_objects(response.body_text()));
    std::move(batch_errors.begin(), batch_errors.end(), std::back_inserter(errors));
  }
  return errors;
}

// ---- multipart uploads -----------------------------------------------------------------------------------

Result<std::string> S3Client::create_multipart_upload(std::string_view bucket, std::string_view key) {
  HttpRequest request{HttpMethod::kPost, impl_->url(bucket, key, {{"uploads", ""}}), {}, {}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                          impl_->execute(impl_->context("CreateMultipartUpload", bucket, key), request).result);
  return parse_create_multipart_upload(response.body_text());
}

Result<std::string> S3Client::upload_part(std::string_view bucket, std::string_view key, std::string_view upload_id,
                                          int32_t part_number, std::span<const uint8_t> bytes) {
  RequestContext c = impl_->context("UploadPart", bucket, key, upload_id);
  if (part_number < 1 || part_number > kMaxPartCount) {
    return Status::invalid_argument("S3 UploadPart of " + s3_uri(bucket, key) + ": part number " +
                                    std::to_string(part_number) + " is out of range (expected in [1, 10000])");
  }
  HttpRequest request{HttpMethod::kPut,
                      impl_->url(bucket, key, {{"partNumber", std::to_string(part_number)},
                                               {"uploadId", std::string(upload_id)}}),
                      {},
                      bytes};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
  std::optional<std::string> etag = response.header("etag");
  if (!etag || etag->empty()) {
    return Status::corruption("S3 UploadPart of " + s3_uri(bucket, key) + " part " + std::to_string(part_number) +
                              " at " + impl_->endpoint_url + ": the response has no ETag header");
  }
  return *etag;
}

Result<std::string> S3Client::complete_multipart_upload(std::string_view bucket, std::string_view key,
                                                        std::string_view upload_id,
                                                        const std::vector<CompletedPart>& parts) {
  RequestContext c = impl_->context("CompleteMultipartUpload", bucket, key, upload_id);
  if (parts.empty()) {
    return Status::invalid_argument("S3 CompleteMultipartUpload of " + s3_uri(bucket, key) + ": no parts given");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].part_number <= parts[i - 1].part_number) {
      return Status::invalid_argument("S3 CompleteMultipartUpload of " + s3_uri(bucket, key) +
                                      ": part numbers must ascend, but " + std::to_string(parts[i].part_number) +
                                      " follows " + std::to_string(parts[i - 1].part_number));
    }
  }
  std::string body = complete_multipart_upload_body(parts);
  HttpRequest request{HttpMethod::kPost,
                      impl_->url(bucket, key, {{"uploadId", std::string(upload_id)}}),
                      {{"Content-Type", "application/xml"}},
                      as_bytes(body)};
  Execution execution = impl_->execute(c, request, /*error_body_in_2xx=*/true);
  if (execution.result.is_ok()) return parse_complete_multipart_upload(execution.result->body_text());
  const Status& failed = execution.result.status();
  // A retried completion finds the upload gone when an earlier attempt completed it but its answer was lost.
  if (failed.code() == StatusCode::kNotFound && execution.attempts > 1) {
    Result<std::string> expected = expected_multipart_etag(parts);
    Result<ObjectHead> head = head_object(bucket, key);
    if (expected.is_ok() && head.is_ok() && same_etag(head->etag, *expected)) return head->etag;
  }
  return failed;
}

Status S3Client::abort_multipart_upload(std::string_view bucket, std::string_view key, std::string_view upload_id) {
  HttpRequest request{HttpMethod::kDelete, impl_->url(bucket, key, {{"uploadId", std::string(upload_id)}}), {}, {}};
  return impl_->execute(impl_->context("AbortMultipartUpload", bucket, key, upload_id), request).result.status();
}

Result<std::vector<MultipartUploadInfo>> S3Client::list_multipart_uploads(std::string_view bucket,
                                                                          std::string_view prefix) {
  RequestContext c = impl_->context("ListMultipartUploads", bucket, "");
  std::vector<MultipartUploadInfo> uploads;
  std::string key_marker;
  std::string upload_id_marker;
  for (;;) {
    QueryParams params{{"uploads", ""}};
    if (!prefix.empty()) params.emplace_back("prefix", std::string(prefix));
    if (!key_marker.empty()) params.emplace_back("key-marker", key_marker);
    if (!upload_id_marker.empty()) params.emplace_back("upload-id-marker", upload_id_marker);
    HttpRequest request{HttpMethod::kGet, impl_->url(bucket, "", std::move(params)), {}, {}};
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
    SLUICE_ASSIGN_OR_RETURN(ListMultipartUploadsPage page, parse_list_multipart_uploads(response.body_text()));
    std::move(page.uploads.begin(), page.uploads.end(), std::back_inserter(uploads));
    if (!page.truncated) return uploads;
    if (page.next_key_marker == key_marker && page.next_upload_id_marker == upload_id_marker) {
      return Status::corruption("S3 ListMultipartUploads of bucket '" + std::string(bucket) + "' at " +
                                impl_->endpoint_url + " returned the same markers again; the listing would never end");
    }
    key_marker = std::move(page.next_key_marker);
    upload_id_marker = std::move(page.next_upload_id_marker);
  }
}

Result<std::vector<PartInfo>> S3Client::list_parts(std::string_view bucket, std::string_view key,
                                                   std::string_view upload_id) {
  RequestContext c = impl_->context("ListParts", bucket, key, upload_id);
  std::vector<PartInfo> parts;
  int32_t marker = 0;
  for (;;) {
    QueryParams params{{"uploadId", std::string(upload_id)}};
    if (marker > 0) params.emplace_back("part-number-marker", std::to_string(marker));
    HttpRequest request{HttpMethod::kGet, impl_->url(bucket, key, std::move(params)), {}, {}};
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, impl_->execute(c, request).result);
    SLUICE_ASSIGN_OR_RETURN(ListPartsPage page, parse_list_parts(response.body_text()));
    std::move(page.parts.begin(), page.parts.end(), std::back_inserter(parts));
    if (!page.truncated) return parts;
    if (page.next_part_number_marker <= marker) {
      return Status::corruption("S3 ListParts of " + s3_uri(bucket, key) + " at " + impl_->endpoint_url +
                                " did not advance its part number marker; the listing would never end");
    }
    marker = page.next_part_number_marker;
  }
}

}  // namespace sluice::s3
