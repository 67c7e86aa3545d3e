#include "fs/s3/s3_digest.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace sluice::s3 {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

std::string to_hex(const unsigned char* data, size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHexDigits[data[i] >> 4]);
    out.push_back(kHexDigits[data[i] & 0xF]);
  }
  return out;
}

// One-shot digest. EVP_Digest fails only when memory runs out or the algorithm is missing from the OpenSSL
// build; neither can be handled here, so the process stops with a message.
std::vector<unsigned char> digest(const EVP_MD* md, std::span<const uint8_t> bytes) {
  std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, md, nullptr) != 1) {
    std::fprintf(stderr, "sluice s3: OpenSSL EVP_Digest(%s) failed\n", EVP_MD_get0_name(md));
    std::abort();
  }
  out.resize(size);
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string sha256_hex(std::span<const uint8_t> bytes) {
  std::vector<unsigned char> d = digest(EVP_sha256(), bytes);
  return to_hex(d.data(), d.size());
}

std::string md5_base64(std::span<const uint8_t> bytes) {
  std::vector<unsigned char> d = digest(EVP_md5(), bytes);
  std::array<unsigned char, 32> encoded{};  // 4 * ceil(16 / 3) + 1
  int n = EVP_EncodeBlock(encoded.data(), d.data(), static_cast<int>(d.size()));
  return std::string(reinterpret_cast<const char*>(encoded.data()), static_cast<size_t>(n));
}

Result<std::string> expected_multipart_etag(const std::vector<CompletedPart>& parts) {
  std::vector<uint8_t> concatenated;
  concatenated.reserve(parts.size() * 16);
  for (const CompletedPart& part : parts) {
    std::string_view etag = part.etag;
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    bool hex = etag.size() == 32;
    for (size_t i = 0; hex && i < etag.size(); ++i) hex = hex_value(etag[i]) >= 0;
    if (!hex) {
      return Status::invalid_argument("part " + std::to_string(part.part_number) + " has ETag '" + part.etag +
                                      "', not the 32 hex digits of an MD5, so the upload's ETag cannot be predicted");
    }
    for (size_t i = 0; i < 32; i += 2) {
      concatenated.push_back(static_cast<uint8_t>(hex_value(etag[i]) * 16 + hex_value(etag[i + 1])));
    }
  }
  std::vector<unsigned char> d = digest(EVP_md5(), concatenated);
  return "\"" + to_hex(d.data(), d.size()) + "-" + std::to_string(parts.size()) + "\"";
}

}  // namespace sluice::s3
