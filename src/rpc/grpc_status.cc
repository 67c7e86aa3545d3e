#include "rpc/grpc_status.h"

namespace sluice::rpc {

grpc::Status to_grpc(const Status& status) {
  if (status.is_ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (status.code()) {
    case StatusCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case StatusCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case StatusCode::kCancelled: code = grpc::StatusCode::CANCELLED; break;
    case StatusCode::kTimeout: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case StatusCode::kIOError: code = grpc::StatusCode::UNAVAILABLE; break;
    case StatusCode::kCorruption: code = grpc::StatusCode::DATA_LOSS; break;
    default: break;
  }
  return grpc::Status(code, status.message());
}

Status from_grpc(const grpc::Status& status, const std::string& what) {
  if (status.ok()) return Status::ok();
  const std::string m = what + ": " + status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT: return Status::invalid_argument(m);
    case grpc::StatusCode::NOT_FOUND: return Status::not_found(m);
    case grpc::StatusCode::FAILED_PRECONDITION: return Status::failed_precondition(m);
    case grpc::StatusCode::ABORTED: return Status::failed_precondition(m);
    case grpc::StatusCode::CANCELLED: return Status::cancelled(m);
    case grpc::StatusCode::DEADLINE_EXCEEDED: return Status::timeout(m);
    case grpc::StatusCode::UNAVAILABLE: return Status::io_error(m);
    case grpc::StatusCode::DATA_LOSS: return Status::corruption(m);
    default: return Status::internal(m + " (gRPC code " + std::to_string(static_cast<int>(status.error_code())) + ")");
  }
}

}  // namespace sluice::rpc
