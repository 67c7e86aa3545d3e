#include "sluice/config/cluster_options.h"

namespace sluice::options {

using std::chrono::milliseconds;

namespace {
Constraint<int32_t> port(bool ephemeral) {
  const int32_t lo = ephemeral ? 0 : 1;
  return {[lo](const int32_t& v) { return v >= lo && v <= 65535; },
          ephemeral ? "a port in [0, 65535] (0: an ephemeral port)" : "a port in [1, 65535]"};
}
Constraint<milliseconds> positive() {
  return {[](const milliseconds& v) { return v.count() > 0; }, "> 0"};
}
Constraint<std::string> not_empty() {
  return {[](const std::string& v) { return !v.empty(); }, "not empty"};
}
}  // namespace

const ConfigOption<ProcessRole> kProcessRole{
    "execution.process-role", ProcessRole::kMiniCluster,
    "What execute() does with the program (Sluice's own; set by --role): MINI_CLUSTER runs the job in this process; "
    "JOBMANAGER serves the job's JobManager on jobmanager.rpc.address:jobmanager.rpc.port and runs the job on the "
    "slots of the TaskManagers that register; TASKMANAGER offers slots to that JobManager and runs what it deploys. "
    "Every process of a cluster runs the same program with the same job options.",
    {}, {}};

const ConfigOption<std::string> kJobManagerRpcAddress{
    "jobmanager.rpc.address", "127.0.0.1",
    "Where the JobManager serves its control plane (the address it binds) and where TaskManagers reach it.", {},
    not_empty()};

const ConfigOption<int32_t> kJobManagerRpcPort{"jobmanager.rpc.port", 6123, "The JobManager's control-plane port.",
                                               {}, port(false)};

const ConfigOption<std::string> kTaskManagerHost{
    "taskmanager.host", "127.0.0.1",
    "The IP address a TaskManager binds and announces to the JobManager, for its TaskExecutor and its data plane.",
    {}, not_empty()};

const ConfigOption<int32_t> kTaskManagerRpcPort{"taskmanager.rpc.port", 0,
                                                "The TaskManager's TaskExecutor port; 0 picks an ephemeral port.", {},
                                                port(true)};

const ConfigOption<int32_t> kTaskManagerDataPort{
    "taskmanager.data.port", 0,
    "The TaskManager's data-plane port (TCP connections to the other TaskManagers), one for all the deployments it "
    "runs; 0 picks an ephemeral port.",
    {}, port(true)};

const ConfigOption<int32_t> kNumberOfTaskSlots{
    "taskmanager.numberOfTaskSlots", 1,
    "Slots a TaskManager offers. Slot k holds subtask k of every vertex, so a job needs as many slots as its highest "
    "parallelism.",
    {}, {[](const int32_t& v) { return v >= 1; }, ">= 1"}};

const ConfigOption<std::string> kTaskManagerResourceId{
    "taskmanager.resource-id", "",
    "The TaskManager's id; empty: <taskmanager.host>:<taskmanager.rpc.port> with a fixed RPC port, else the host and "
    "a random suffix (127.0.0.1:2f6b015d). A process that starts again with the same id and RPC address replaces "
    "its predecessor at once; one at another address waits until the holder's connection ends or its heartbeats "
    "time out, so two live processes never share an id.",
    {}, {}};

const ConfigOption<milliseconds> kHeartbeatInterval{
    "heartbeat.interval", milliseconds(10'000),
    "How often a TaskManager sends its JobManager a heartbeat; must be below heartbeat.timeout.", {}, positive()};

const ConfigOption<milliseconds> kHeartbeatTimeout{
    "heartbeat.timeout", milliseconds(50'000),
    "A TaskManager without a heartbeat for this long is lost (its tasks fail over), and a TaskManager that cannot "
    "reach its JobManager for this long cancels its tasks. Dropped connections are noticed at once.",
    {}, positive()};

const ConfigOption<int32_t> kHeartbeatRpcFailureThreshold{
    "heartbeat.rpc-failure-threshold", 2,
    "Heartbeat RPCs that fail in a row before a TaskManager counts its JobManager as lost.", {},
    {[](const int32_t& v) { return v >= 1; }, ">= 1"}};

const ConfigOption<milliseconds> kAskTimeout{
    "pekko.ask.timeout", milliseconds(10'000),
    "How long the JobManager waits for a TaskManager to answer one control-plane call (a deployment, a checkpoint "
    "trigger or notification, ...) before the call counts as failed and the job fails over; cancelling an attempt, "
    "which waits for its tasks to end, gets six times as long.",
    {"akka.ask.timeout"}, positive()};

const ConfigOption<milliseconds> kSlotRequestTimeout{
    "slot.request.timeout", milliseconds(300'000),
    "How long a deployment waits for enough free slots before it fails (and the restart strategy decides).", {},
    positive()};

const ConfigOption<milliseconds> kTaskManagerRegistrationTimeout{
    "taskmanager.registration.timeout", milliseconds(300'000),
    "A TaskManager that has had no registration with a JobManager for this long gives up, and its process ends.", {},
    positive()};

const ConfigOption<bool> kEvenlySpreadOutSlots{
    "cluster.evenly-spread-out-slots", false,
    "Take the job's slots from all registered TaskManagers in turn (most free slots first) instead of filling one "
    "TaskManager after another.",
    {}, {}};

}  // namespace sluice::options
