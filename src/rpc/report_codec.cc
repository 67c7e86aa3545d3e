#include "rpc/report_codec.h"

#include <string>

namespace sluice::rpc {

void to_proto(const Status& status, v1::Failure* out) {
  out->set_code(static_cast<int32_t>(status.code()));
  out->set_message(status.message());
  out->set_retriable(status.retriable());
}

Status from_proto(const v1::Failure& failure) {
  const int32_t code = failure.code();
  if (code <= static_cast<int32_t>(StatusCode::kOk) || code > static_cast<int32_t>(StatusCode::kInternal)) {
    return Status(StatusCode::kInternal, failure.message() + " (unknown status code " + std::to_string(code) + ")",
                  failure.retriable());
  }
  return Status(static_cast<StatusCode>(code), failure.message(), failure.retriable());
}

void to_proto(const runtime::SubtaskSnapshotStats& s, v1::SnapshotStats* out) {
  out->set_sync_duration_ms(s.sync_duration_ms);
  out->set_async_duration_ms(s.async_duration_ms);
  out->set_alignment_duration_ms(s.alignment_duration_ms);
  out->set_state_size_bytes(s.state_size_bytes);
  out->set_start_delay_ms(s.start_delay_ms);
  out->set_checkpointed_size_bytes(s.checkpointed_size_bytes);
  out->set_persisted_data_bytes(s.persisted_data_bytes);
  out->set_unaligned(s.unaligned);
}

runtime::SubtaskSnapshotStats from_proto(const v1::SnapshotStats& s) {
  runtime::SubtaskSnapshotStats out;
  out.sync_duration_ms = s.sync_duration_ms();
  out.async_duration_ms = s.async_duration_ms();
  out.alignment_duration_ms = s.alignment_duration_ms();
  out.state_size_bytes = s.state_size_bytes();
  out.start_delay_ms = s.start_delay_ms();
  out.checkpointed_size_bytes = s.checkpointed_size_bytes();
  out.persisted_data_bytes = s.persisted_data_bytes();
  out.unaligned = s.unaligned();
  return out;
}

void to_proto(const runtime::ExecutionAttemptId& id, v1::ExecutionAttempt* out) {
  out->set_vertex(id.vertex.value());
  out->set_subtask(id.subtask.value());
  out->set_attempt_number(id.attempt_number);
}

runtime::ExecutionAttemptId from_proto(const v1::ExecutionAttempt& a) {
  return runtime::ExecutionAttemptId{JobVertexId(a.vertex()), SubtaskIndex(a.subtask()), a.attempt_number()};
}

}  // namespace sluice::rpc
