// Conversions between the engine's task reports and the JobMasterGateway's messages (proto/job_master.proto):
// Status <-> Failure, SubtaskSnapshotStats <-> SnapshotStats, ExecutionAttemptId <-> ExecutionAttempt. Included by
// src/rpc's .cc files only. Thread-safety: pure functions.
#pragma once

#include "proto/job_master.pb.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "runtime/execution_attempt_id.h"
#include "sluice/core/status.h"

namespace sluice::rpc {

void to_proto(const Status& status, v1::Failure* out);
// A code this build does not know becomes kInternal, with the number in the message.
Status from_proto(const v1::Failure& failure);

void to_proto(const runtime::SubtaskSnapshotStats& stats, v1::SnapshotStats* out);
runtime::SubtaskSnapshotStats from_proto(const v1::SnapshotStats& stats);

void to_proto(const runtime::ExecutionAttemptId& id, v1::ExecutionAttempt* out);
runtime::ExecutionAttemptId from_proto(const v1::ExecutionAttempt& attempt);

}  // namespace sluice::rpc
