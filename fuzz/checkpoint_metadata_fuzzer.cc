// decode_metadata on damaged or hostile `_metadata` files (checkpoint/metadata_codec.h). The first input byte
// picks how the rest is used: even, as the whole file; odd, as the protobuf payload inside a frame built here with
// the right length and checksum (and version: the byte's upper bits), since random bytes almost never carry their
// own XXH3-64 and the protobuf decoding and validation behind the checksum would go untested.
// What decodes must encode again and decode to equal metadata, and the paths computed from it must be well formed.
#include <google/protobuf/stubs/logging.h>
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/metadata_codec.h"

namespace {

using namespace sluice::checkpoint;

std::vector<uint8_t> frame(uint32_t version, const uint8_t* payload, size_t size) {
  std::vector<uint8_t> out(kMetadataMagic, kMetadataMagic + sizeof(kMetadataMagic));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(version >> (8 * i)));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(size) >> (8 * i)));
  out.insert(out.end(), payload, payload + size);
  const uint64_t sum = XXH3_64bits(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // every undecodable string field would be logged
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> file;
  if ((data[0] & 1) == 0) {
    file.assign(data + 1, data + size);
  } else {
    // Versions 1 .. kFormatVersion + 1 (one newer than this build reads).
    const uint32_t version = 1 + (data[0] >> 1) % (CheckpointMetadata::kFormatVersion + 1);
    file = frame(version, data + 1, size - 1);
  }
  auto decoded = decode_metadata(file, "fuzz/_metadata");
  if (!decoded.is_ok()) return 0;

  auto encoded = encode_metadata(*decoded);
  if (!encoded.is_ok()) std::abort();  // decode validated it, so encode must accept it
  auto again = decode_metadata(*encoded, "fuzz/_metadata (re-encoded)");
  if (!again.is_ok() || !(*again == *decoded)) std::abort();

  for (const std::string& f : decoded->referenced_files()) {
    (void)handle_file_path("/checkpoints/0123456789abcdef0123456789abcdef/chk-1", f);
  }
  (void)decoded->shared_files();
  (void)decoded->state_size_bytes();
  (void)decoded->checkpointed_size_bytes();
  const std::string job = "/checkpoints/" + decoded->job_id.to_hex();
  const CheckpointLocation location{job + "/" + checkpoint_dir_name(decoded->checkpoint_id),
                                    job + "/" + checkpoint_dir_name(decoded->checkpoint_id) + "/_metadata", job};
  (void)files_outside_checkpoint_dir(*decoded, location);
  return 0;
}
