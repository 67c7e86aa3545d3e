package dev.sluice.peers.flink;

import dev.sluice.peers.nexmark.Event;
import dev.sluice.peers.nexmark.GeneratorConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Locale;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.util.stats.StatsSummarySnapshot;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.function.SerializableFunction;

/**
 * Runs jobs on a local Flink MiniCluster over the Nexmark source:
 *
 * <pre>
 * Jobs --job demo|q0|q1|q2|q5|q7|q8[,...] [--events N] [--seed S] [--rate R] [--splits K] [--parallelism P]
 *      [--checkpoint-interval MS] [--checkpointing-mode exactly_once|at_least_once]
 *      [--state-backend hashmap|rocksdb] [--checkpoint-dir DIR] [--restart-delay-ms MS]
 *      [--inject-failure-at N] [--managed-memory SIZE] [--output DIR] [--summary-json FILE]
 * </pre>
 *
 * Defaults follow `sluice demo` / `sluice nexmark`: 8 splits, parallelism 2, checkpointing off (interval 0),
 * hashmap state; rocksdb means EmbeddedRocksDBStateBackend with incremental checkpoints. With --output the rows
 * go to DIR/part-* as Sluice writes them; without it to a DiscardingSink. Several comma-separated jobs run one
 * after the other in this JVM (never two at once), each into DIR/JOB. --inject-failure-at N fails subtask 0
 * once after N events (FailOnce) and the fixed-delay restart strategy recovers it. Per job one line on stdout,
 * "flink JOB: N events, parallelism P, net runtime X ms", and with --summary-json a JSON object (one job) with
 * the job's runtime, checkpoint statistics and recovery time. --managed-memory sets
 * taskmanager.memory.managed.size (a MemorySize such as 128mb; default: the MiniCluster's 128 MB for local
 * execution, split evenly over the slots; RocksDB's cache and write buffers come out of each slot's share).
 */
public final class Jobs {
  private Jobs() {}

  static final class Options {
    String jobs;
    long events = 1_000_000;
    long seed = 1;
    double rate = 10_000_000;
    int splits = 8;
    int parallelism = 2;
    long checkpointIntervalMs = 0;
    String mode = "exactly_once";
    String backend = "hashmap";
    String checkpointDir = "out/flink-checkpoints";
    long restartDelayMs = 100;
    long injectFailureAt = 0;
    String managedMemory; // taskmanager.memory.managed.size; null keeps the MiniCluster's default (128 MB)
    String output;
    String summaryJson;
  }

  public static void main(String[] args) {
    Options o = parse(args);
    String[] jobs = o.jobs.split(",");
    try {
      for (String job : jobs) {
        String dir = o.output == null ? null : jobs.length == 1 ? o.output : o.output + "/" + job;
        runJob(job, o, dir);
      }
    } catch (Exception e) {
      System.err.println("flink peer: the job failed:");
      e.printStackTrace();
      System.exit(1); // the MiniCluster's threads must not keep a failed run alive
    }
    System.exit(0);
  }

  private static Options parse(String[] args) {
    Options o = new Options();
    for (int i = 0; i < args.length; ++i) {
      String a = args[i];
      if (i + 1 >= args.length) usage(a + ": expected a value");
      String v = args[++i];
      switch (a) {
        case "--job": o.jobs = v; break;
        case "--events": o.events = Long.parseLong(v); break;
        case "--seed": o.seed = Long.parseUnsignedLong(v); break;
        case "--rate": o.rate = Double.parseDouble(v); break;
        case "--splits": o.splits = Integer.parseInt(v); break;
        case "--parallelism": o.parallelism = Integer.parseInt(v); break;
        case "--checkpoint-interval": o.checkpointIntervalMs = Long.parseLong(v); break;
        case "--checkpointing-mode": o.mode = v.toLowerCase(Locale.ROOT); break;
        case "--state-backend": o.backend = v; break;
        case "--checkpoint-dir": o.checkpointDir = v; break;
        case "--restart-delay-ms": o.restartDelayMs = Long.parseLong(v); break;
        case "--inject-failure-at": o.injectFailureAt = Long.parseLong(v); break;
        case "--managed-memory": o.managedMemory = v; break;
        case "--output": o.output = v; break;
        case "--summary-json": o.summaryJson = v; break;
        default: usage("unknown argument '" + a + "'");
      }
    }
    if (o.jobs == null) usage("--job is required");
    if (!o.backend.equals("hashmap") && !o.backend.equals("rocksdb")) usage("--state-backend: hashmap or rocksdb");
    if (!o.mode.equals("exactly_once") && !o.mode.equals("at_least_once")) {
      usage("--checkpointing-mode: exactly_once or at_least_once");
    }
    if (o.events < 1 || o.splits < 1 || o.parallelism < 1) usage("--events, --splits, --parallelism: >= 1");
    return o;
  }

  private static Configuration configuration(Options o) {
    Configuration conf = new Configuration();
    conf.set(StateBackendOptions.STATE_BACKEND, o.backend);
    if (o.backend.equals("rocksdb")) conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
    if (o.checkpointIntervalMs > 0) {
      conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(o.checkpointIntervalMs));
      conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE,
          o.mode.equals("exactly_once") ? CheckpointingMode.EXACTLY_ONCE : CheckpointingMode.AT_LEAST_ONCE);
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY,
          Paths.get(o.checkpointDir).toAbsolutePath().toUri().toString());
    }
    // The same restart policy as the sluice commands: fixed delay (Flink's default delay is 1 s).
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(o.restartDelayMs));
    // Managed memory (RocksDB's block cache and write buffers come out of it, split over the slots).
    if (o.managedMemory != null) conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse(o.managedMemory));
    // Keep every checkpoint's statistics for the summary (default 10).
    conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 10_000);
    return conf;
  }

  private static void runJob(String job, Options o, String output) throws Exception {
    Configuration conf = configuration(o);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(o.parallelism);

    GeneratorConfig generator = new GeneratorConfig();
    generator.seed = o.seed;
    generator.maxEvents = o.events;
    generator.declaredRatePerS = o.rate;
    // Per-split watermarks that never make an event late: each split's events come in time order.
    WatermarkStrategy<Event> watermarks = WatermarkStrategy.<Event>forMonotonousTimestamps()
        .withTimestampAssigner((e, previous) -> e.eventTimeMs());
    DataStream<Event> source =
        env.fromSource(new NexmarkSource(generator, o.splits), watermarks, "nexmark-source").uid("nexmark-source");
    if (o.injectFailureAt > 0) {
      source = source.map(new FailOnce(o.injectFailureAt)).returns(Event.class).name("fail-once").uid("fail-once");
    }

    switch (job) {
      case "demo": sink(Queries.demo(source), Rows.AuctionUpdate::line, output); break;
      case "q0": sink(Queries.q0(source), Rows::q0Line, output); break;
      case "q1": sink(Queries.q1(source), Rows.Q1Row::line, output); break;
      case "q2": sink(Queries.q2(source), Rows.Q2Row::line, output); break;
      case "q5": sink(Queries.q5(source), Rows.Q5Row::line, output); break;
      case "q7": sink(Queries.q7(source), Rows.Q7Row::line, output); break;
      case "q8": sink(Queries.q8(source), Rows.Q8Row::line, output); break;
      default: usage("--job: expected demo, q0, q1, q2, q5, q7 or q8, got '" + job + "'");
    }

    // What env.execute() does for a local environment, with a MiniCluster we own so that the finished job's
    // checkpoint statistics can be read before it shuts down.
    JobGraph graph = env.getStreamGraph().getJobGraph();
    graph.setJobID(new JobID());
    MiniClusterConfiguration cluster = new MiniClusterConfiguration.Builder()
        .setConfiguration(conf)
        .setNumTaskManagers(1)
        .setNumSlotsPerTaskManager(o.parallelism)
        .build();
    try (MiniCluster mini = new MiniCluster(cluster)) {
      mini.start();
      mini.submitJob(graph).get();
      JobResult result = mini.requestJobResult(graph.getJobID()).get();
      if (!result.isSuccess()) {
        throw new IllegalStateException("flink-" + job + " failed", result.getSerializedThrowable()
            .map(t -> (Throwable) t).orElse(null));
      }
      CheckpointStatsSnapshot stats = mini.getArchivedExecutionGraph(graph.getJobID()).get()
          .getCheckpointStatsSnapshot();
      System.out.printf("flink %s: %d events, parallelism %d, net runtime %d ms%n", job, o.events, o.parallelism,
          result.getNetRuntime());
      if (o.summaryJson != null) writeSummary(job, o, result.getNetRuntime(), stats);
    }
  }

  private static void writeSummary(String job, Options o, long runtimeMs, CheckpointStatsSnapshot stats)
      throws IOException {
    StringBuilder j = new StringBuilder("{");
    field(j, "engine", "\"flink\"");
    field(j, "job", "\"" + job + "\"");
    field(j, "events", Long.toString(o.events));
    field(j, "parallelism", Integer.toString(o.parallelism));
    field(j, "elapsed_s", Double.toString(runtimeMs / 1000.0));
    field(j, "events_per_s", Double.toString(runtimeMs > 0 ? o.events * 1000.0 / runtimeMs : 0));
    field(j, "state_backend", "\"" + o.backend + "\"");
    field(j, "checkpoint_interval_ms", Long.toString(o.checkpointIntervalMs));
    if (stats != null) {
      StatsSummarySnapshot d = stats.getSummaryStats().getEndToEndDurationStats();
      CompletedCheckpointStats latest = stats.getHistory().getLatestCompletedCheckpoint();
      field(j, "checkpoints_completed", Long.toString(stats.getCounts().getNumberOfCompletedCheckpoints()));
      field(j, "checkpoints_failed", Long.toString(stats.getCounts().getNumberOfFailedCheckpoints()));
      field(j, "checkpoint_duration_p50_ms", Double.toString(d.getCount() > 0 ? d.getQuantile(0.5) : 0));
      field(j, "checkpoint_duration_p99_ms", Double.toString(d.getCount() > 0 ? d.getQuantile(0.99) : 0));
      // The largest completed checkpoint: the latest one of a bounded job is often taken after its windows fired.
      field(j, "checkpoint_size_max_bytes", Long.toString(stats.getSummaryStats().getStateSizeStats().getMaximum()));
      field(j, "checkpoint_size_bytes", Long.toString(latest == null ? 0 : latest.getStateSize()));
      field(j, "checkpointed_size_bytes", Long.toString(latest == null ? 0 : latest.getCheckpointedSize()));
    }
    field(j, "recovery_ms", Double.toString(FailOnce.recoveryMs()));
    j.setLength(j.length() - 1);
    j.append("}\n");
    Files.write(Paths.get(o.summaryJson), j.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static void field(StringBuilder j, String name, String jsonValue) {
    j.append('"').append(name).append("\":").append(jsonValue).append(',');
  }

  private static <T> void sink(DataStream<T> rows, SerializableFunction<T, String> line, String output) {
    if (output == null) {
      rows.sinkTo(new DiscardingSink<>()).name("discard");
    } else {
      rows.sinkTo(new LineFileSink<>(output, line)).name("files");
    }
  }

  private static void usage(String why) {
    System.err.println("Jobs: " + why + "\nusage: Jobs --job demo|q0|q1|q2|q5|q7|q8[,...] [--events N] [--seed S] "
        + "[--rate R] [--splits K] [--parallelism P] [--checkpoint-interval MS] "
        + "[--checkpointing-mode exactly_once|at_least_once] [--state-backend hashmap|rocksdb] "
        + "[--checkpoint-dir DIR] [--restart-delay-ms MS] [--inject-failure-at N] "
        + "[--managed-memory SIZE] [--output DIR] [--summary-json FILE]");
    System.exit(2);
  }
}
