// SplitEnumeratorService: the JobManager's side of the SplitEnumeratorGateway (proto/task_executor.proto). A source
// reader in a TaskManager registers with, asks splits of, and reports its snapshots to the split enumerator of its
// source, which runs in the JobManager (as in Flink); the service hands those calls to the current attempt's
// coordinators through a bound ReaderHub (the remote deployer). Fencing as the JobMasterService: another leader
// epoch is refused with ABORTED, calls while nothing is bound with UNAVAILABLE, calls of an attempt that is not
// current or from another registration than its TaskManager's are answered and dropped.
// Thread-safety: gRPC calls it from its threads; bind/unbind from any thread.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "proto/task_executor.grpc.pb.h"
#include "rpc/task_manager_session.h"
#include "runtime/execution_attempt_id.h"
#include "sluice/operators/source_operator.h"

namespace sluice::rpc {

// The readers' side of the current attempt's split enumerators.
class ReaderHub {
 public:
  virtual ~ReaderHub() = default;
  // False when `reader` does not belong to the current attempt, or `from` is not the TaskManager registration it
  // was deployed to (nothing is done then).
  virtual bool register_reader(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                               std::vector<OperatorEvent>* events) = 0;
  virtual bool request_split(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader) = 0;
  virtual bool snapshot_done(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                             CheckpointId checkpoint_id) = 0;
};

class SplitEnumeratorService final : public v1::SplitEnumeratorGateway::Service {
 public:
  explicit SplitEnumeratorService(uint64_t leader_epoch) : leader_epoch_(leader_epoch) {}

  // `hub` must stay valid until unbind() returned.
  void bind(ReaderHub* hub);
  void unbind();

  grpc::Status RegisterReader(grpc::ServerContext* context, const v1::ReaderRequest* request,
                              v1::RegisterReaderResponse* response) override;
  grpc::Status RequestSplit(grpc::ServerContext* context, const v1::ReaderRequest* request,
                            v1::TaskExecutorReply* response) override;
  grpc::Status ReaderSnapshotDone(grpc::ServerContext* context, const v1::ReaderRequest* request,
                                  v1::TaskExecutorReply* response) override;

 private:
  grpc::Status admit(const v1::ReaderRequest& request) const;

  const uint64_t leader_epoch_;
  mutable std::shared_mutex mu_;
  ReaderHub* hub_ = nullptr;
};

}  // namespace sluice::rpc
