// The `_metadata` file format: a protobuf payload (proto/checkpoint_metadata.proto) in a small frame.
//
//   "SLCK"        4 bytes magic
//   u32 LE        format version (CheckpointMetadata::required_format_version() when written: 2, or 3 with
//                 channel state; every version up to kFormatVersion is read)
//   u64 LE        payload length in bytes
//   payload       the protobuf message
//   u64 LE        XXH3-64 of every preceding byte (magic through payload)
//
// The frame itself never changes between format versions; only the payload does. So a reader first checks the
// frame (size, magic, length, checksum: any truncation or flipped byte is kCorruption naming the file), then the
// version: a version newer than this build knows is kFailedPrecondition ("written by a newer Sluice"), never a
// guess. The protobuf headers stay in metadata_codec.cc.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

inline constexpr char kMetadataMagic[4] = {'S', 'L', 'C', 'K'};
inline constexpr size_t kMetadataHeaderBytes = 16;  // magic + version + length
inline constexpr size_t kMetadataTrailerBytes = 8;  // checksum

// Checks what a reader relies on: ids non-negative; operator ids non-empty and unique; 1 <= parallelism <=
// max_parallelism <= 32768; subtasks sorted by index, unique, in [0, parallelism); key-group ranges inside
// [0, max_parallelism) with num_key_groups() + 1 non-decreasing offsets ending at the stream's size; inline
// handles hold exactly size_bytes bytes whose XXH3-64 is the checksum; file handles hold no inline bytes and a
// relative path without "." / ".." / empty components, or the absolute URI of an entropy-injected file in the
// checkpoint's own folder (".../<job-id>/chk-<n>/<name>", its job id and checkpoint id) or, for shared files, in a
// job's shared folder (".../<job-id>/shared/<name>"). The message names the operator, subtask and field.
Status validate_metadata(const CheckpointMetadata& metadata);

// kInvalidArgument if validate_metadata fails.
Result<std::vector<uint8_t>> encode_metadata(const CheckpointMetadata& metadata);

// `what` names the source in errors (the file path, or "jobmanager://<job>/<n>"). Errors: kCorruption (frame,
// checksum, protobuf or validation failure), kFailedPrecondition (a newer format version).
Result<CheckpointMetadata> decode_metadata(std::span<const uint8_t> bytes, std::string_view what);

// One subtask's acknowledged state (its handles by operator id) as bytes for the control plane, in the protobuf
// messages `_metadata` uses (proto/checkpoint_metadata.proto, SubtaskStates). Decoding checks the structure only
// (kCorruption naming `what` for bytes that do not parse, a key-group range that starts below 0, or an operator
// twice); the CheckpointCoordinator validates the whole checkpoint when it writes `_metadata`.
std::vector<uint8_t> encode_subtask_states(const std::map<std::string, OperatorSubtaskState>& states);
Result<std::map<std::string, OperatorSubtaskState>> decode_subtask_states(std::span<const uint8_t> bytes,
                                                                          std::string_view what);

}  // namespace sluice::checkpoint
