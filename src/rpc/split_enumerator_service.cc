#include "rpc/split_enumerator_service.h"

#include <mutex>
#include <string>

#include "rpc/report_codec.h"

namespace sluice::rpc {
namespace {

TaskManagerSessionId session_of(const v1::ReaderRequest& r) {
  return {r.session().leader_epoch(), r.session().task_manager_id(), r.session().registration_id()};
}

}  // namespace

void SplitEnumeratorService::bind(ReaderHub* hub) {
  std::unique_lock lock(mu_);
  hub_ = hub;
}

void SplitEnumeratorService::unbind() {
  std::unique_lock lock(mu_);
  hub_ = nullptr;
}

grpc::Status SplitEnumeratorService::admit(const v1::ReaderRequest& request) const {
  if (request.session().leader_epoch() != leader_epoch_) {
    return grpc::Status(grpc::StatusCode::ABORTED, "a source reader called under leader epoch " +
                                                       std::to_string(request.session().leader_epoch()) +
                                                       ", this JobManager leads epoch " + std::to_string(leader_epoch_));
  }
  if (!hub_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no job runs on this JobManager yet");
  return grpc::Status::OK;
}

grpc::Status SplitEnumeratorService::RegisterReader(grpc::ServerContext*, const v1::ReaderRequest* request,
                                                    v1::RegisterReaderResponse* response) {
  std::shared_lock lock(mu_);
  if (grpc::Status s = admit(*request); !s.ok()) return s;
  std::vector<OperatorEvent> events;
  if (!hub_->register_reader(session_of(*request), from_proto(request->reader()), &events)) return grpc::Status::OK;
  for (const OperatorEvent& e : events) {
    v1::OperatorEventMessage* m = response->add_events();
    m->set_kind(static_cast<int32_t>(e.kind));
    m->set_payload(e.payload.data(), e.payload.size());
  }
  return grpc::Status::OK;
}

grpc::Status SplitEnumeratorService::RequestSplit(grpc::ServerContext*, const v1::ReaderRequest* request,
                                                  v1::TaskExecutorReply*) {
  std::shared_lock lock(mu_);
  if (grpc::Status s = admit(*request); !s.ok()) return s;
  hub_->request_split(session_of(*request), from_proto(request->reader()));
  return grpc::Status::OK;
}

grpc::Status SplitEnumeratorService::ReaderSnapshotDone(grpc::ServerContext*, const v1::ReaderRequest* request,
                                                        v1::TaskExecutorReply*) {
  std::shared_lock lock(mu_);
  if (grpc::Status s = admit(*request); !s.ok()) return s;
  hub_->snapshot_done(session_of(*request), from_proto(request->reader()), CheckpointId(request->checkpoint_id()));
  return grpc::Status::OK;
}

}  // namespace sluice::rpc
