// Status <-> grpc::Status at the edge of the control plane. Codes map one to one where gRPC has the same meaning
// (kInvalidArgument, kNotFound, kFailedPrecondition, kCancelled, kTimeout as DEADLINE_EXCEEDED, kIOError as
// UNAVAILABLE, kCorruption as DATA_LOSS, so a damaged file read in another process is still seen as damaged); the rest go as
// INTERNAL / UNAVAILABLE with the message kept. Included by src/rpc's .cc files only (it pulls in gRPC).
#pragma once

#include <grpcpp/grpcpp.h>

#include "sluice/core/status.h"

namespace sluice::rpc {

grpc::Status to_grpc(const Status& status);
// `what`: the call, for the message ("registering with the JobManager at host:port").
Status from_grpc(const grpc::Status& status, const std::string& what);

}  // namespace sluice::rpc
