#include "fs/s3/s3_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

#include "fs/s3/s3_digest.h"
#include "fs/s3/s3_options.h"

namespace sluice::s3 {

namespace {

// Idle easy handles kept for reuse (each with its live connections); more are created under load and freed
// when returned to a full pool.
constexpr size_t kMaxIdleHandles = 32;
// A body announced larger than this is not reserved up front (it still arrives).
constexpr uint64_t kMaxReserveBytes = uint64_t{256} << 20;

void global_init_once() {
  static std::once_flag once;
  // curl_global_init is not thread-safe itself; call_once makes the first client's call the only one.
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct UploadSource {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
};

size_t on_read(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* src = static_cast<UploadSource*>(userdata);
  size_t n = std::min(size * nitems, src->bytes.size() - src->offset);
  std::memcpy(buffer, src->bytes.data() + src->offset, n);
  src->offset += n;
  return n;
}

// curl sends a request again by itself when the kept-alive connection it reused turns out closed before any
// answer (the server's idle timeout, a proxy); the body then starts over. Without this, curl fails the request
// with CURLE_SEND_FAIL_REWIND instead.
int on_seek(void* userdata, curl_off_t offset, int origin) {
  auto* src = static_cast<UploadSource*>(userdata);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > src->bytes.size()) return CURL_SEEKFUNC_CANTSEEK;
  src->offset = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

// Where a response goes; `expect_body` is false for HEAD, whose Content-Length announces no body.
struct ResponseSink {
  HttpResponse* response = nullptr;
  bool expect_body = true;
};

size_t on_write(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* response = static_cast<ResponseSink*>(userdata)->response;
  size_t n = size * nmemb;
  response->body.insert(response->body.end(), reinterpret_cast<const uint8_t*>(data),
                        reinterpret_cast<const uint8_t*>(data) + n);
  return n;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

size_t on_header(char* data, size_t size, size_t nitems, void* userdata) {
  auto* sink = static_cast<ResponseSink*>(userdata);
  HttpResponse* response = sink->response;
  size_t n = size * nitems;
  std::string_view line(data, n);
  if (line.substr(0, 5) == "HTTP/") {  // a new response (after "100 Continue"): forget the previous headers
    response->headers.clear();
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string value = trim(line.substr(colon + 1));
  if (name == "content-length" && sink->expect_body) {
    uint64_t length = std::strtoull(value.c_str(), nullptr, 10);
    if (length <= kMaxReserveBytes) response->body.reserve(static_cast<size_t>(length));
  }
  response->headers.emplace_back(std::move(name), std::move(value));
  return n;
}

// Blocks SIGPIPE in the calling thread for one transfer. With CURLOPT_NOSIGNAL (needed with threads) libcurl
// installs no handler, and OpenSSL's writes to a connection the peer closed raise SIGPIPE, which would end the
// process. A SIGPIPE raised meanwhile is consumed before the old mask returns (the technique of libcurl's own
// sigpipe handling, per thread).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec no_wait{0, 0};
        sigtimedwait(&pipe_, nullptr, &no_wait);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return value;
  }
  return std::nullopt;
}

struct HttpTransport::Impl {
  std::string sigv4;  // "aws:amz:<region>:s3"
  std::string access_key;
  std::string secret_key;
  long connect_timeout_ms = 0;
  long request_timeout_ms = 0;

  std::mutex mu;
  std::vector<CURL*> idle;  // guarded by mu

  CURL* acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        CURL* handle = idle.back();
        idle.pop_back();
        return handle;
      }
    }
    return curl_easy_init();
  }

  // Forgets the request's options (pointers into the finished request's header list and error buffer) but
  // keeps live connections and the DNS and TLS session caches.
  void release(CURL* handle) {
    curl_easy_reset(handle);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (idle.size() < kMaxIdleHandles) {
        idle.push_back(handle);
        return;
      }
    }
    curl_easy_cleanup(handle);
  }
};

HttpTransport::HttpTransport(const S3Options& options) : impl_(std::make_unique<Impl>()) {
  global_init_once();
  impl_->sigv4 = "aws:amz:" + options.region + ":s3";
  impl_->access_key = options.access_key;
  impl_->secret_key = options.secret_key;
  impl_->connect_timeout_ms = static_cast<long>(options.connect_timeout_ms);
  impl_->request_timeout_ms = static_cast<long>(options.request_timeout_ms);
}

HttpTransport::~HttpTransport() {
  for (CURL* handle : impl_->idle) curl_easy_cleanup(handle);
}

HttpResponse HttpTransport::perform(const HttpRequest& request) {
  HttpResponse response;
  CURL* curl = impl_->acquire();
  if (curl == nullptr) {
    response.curl_code = CURLE_FAILED_INIT;
    response.curl_error = "curl_easy_init failed";
    return response;
  }

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&headers](const std::string& line) {
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
  };
  add_header("x-amz-content-sha256: " + sha256_hex(request.body));
  for (const auto& [name, value] : request.headers) add_header(name + ": " + value);

  char error_buffer[CURL_ERROR_SIZE] = {0};
  UploadSource upload{request.body, 0};
  ResponseSink sink{&response, request.method != HttpMethod::kHead};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);  // keys may hold "./" or "../": send the path as signed
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, impl_->connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, impl_->request_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, impl_->sigv4.c_str());
  curl_easy_setopt(curl, CURLOPT_USERNAME, impl_->access_key.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, impl_->secret_key.c_str());
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "sluice-s3");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
  switch (request.method) {
    case HttpMethod::kGet:
      break;
    case HttpMethod::kHead:
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
      break;
    case HttpMethod::kPut:
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(curl, CURLOPT_READFUNCTION, &on_read);
      curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
      curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, &on_seek);
      curl_easy_setopt(curl, CURLOPT_SEEKDATA, &upload);
      curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      break;
    case HttpMethod::kPost:
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
                       request.body.empty() ? "" : reinterpret_cast<const char*>(request.body.data()));
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      break;
    case HttpMethod::kDelete:
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }

  CURLcode code;
  {
    ScopedSigpipeBlock no_sigpipe;
    code = curl_easy_perform(curl);
  }
  response.curl_code = static_cast<int>(code);
  if (code != CURLE_OK) {
    response.curl_error = curl_easy_strerror(code);
    if (error_buffer[0] != '\0') response.curl_error += std::string(": ") + error_buffer;
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  }
  curl_off_t sent = 0;
  if (curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &sent) == CURLE_OK && sent > 0) {
    response.bytes_sent = static_cast<uint64_t>(sent);
  }
  impl_->release(curl);
  return response;
}

}  // namespace sluice::s3
