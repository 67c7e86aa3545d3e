package dev.sluice.peers.flink;

import dev.sluice.peers.nexmark.Event;
import dev.sluice.peers.nexmark.GeneratorConfig;
import java.time.Duration;
import java.util.Locale;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.function.SerializableFunction;

/**
 * Runs one job on Flink's local MiniCluster over the Nexmark source:
 *
 * <pre>
 * Jobs --job demo|q0|q1|q2|q5|q7|q8[,...] [--events N] [--seed S] [--rate R] [--splits K] [--parallelism P]
 *      [--checkpoint-interval MS] [--checkpointing-mode exactly_once|at_least_once]
 *      [--state-backend hashmap|rocksdb] [--checkpoint-dir DIR] [--restart-delay-ms MS] [--output DIR]
 * </pre>
 *
 * Defaults follow `sluice demo` / `sluice nexmark`: 8 splits, parallelism 2, checkpointing off (interval 0),
 * hashmap state; rocksdb means EmbeddedRocksDBStateBackend with incremental checkpoints. With --output the rows
 * go to DIR/part-* as Sluice writes them; without it to a DiscardingSink. Several comma-separated jobs run one
 * after the other in this JVM (never two at once), each into DIR/JOB. Per job one line on stdout:
 * "flink JOB: N events, parallelism P, net runtime X ms".
 */
public final class Jobs {
  private Jobs() {}

  public static void main(String[] args) throws Exception {
    String job = null;
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
    String output = null;
    for (int i = 0; i < args.length; ++i) {
      String a = args[i];
      if (i + 1 >= args.length) usage(a + ": expected a value");
      String v = args[++i];
      switch (a) {
        case "--job": job = v; break;
        case "--events": events = Long.parseLong(v); break;
        case "--seed": seed = Long.parseUnsignedLong(v); break;
        case "--rate": rate = Double.parseDouble(v); break;
        case "--splits": splits = Integer.parseInt(v); break;
        case "--parallelism": parallelism = Integer.parseInt(v); break;
        case "--checkpoint-interval": checkpointIntervalMs = Long.parseLong(v); break;
        case "--checkpointing-mode": mode = v.toLowerCase(Locale.ROOT); break;
        case "--state-backend": backend = v; break;
        case "--checkpoint-dir": checkpointDir = v; break;
        case "--restart-delay-ms": restartDelayMs = Long.parseLong(v); break;
        case "--output": output = v; break;
        default: usage("unknown argument '" + a + "'");
      }
    }
    if (job == null) usage("--job is required");
    String[] jobs = job.split(",");
    if (!backend.equals("hashmap") && !backend.equals("rocksdb")) usage("--state-backend: hashmap or rocksdb");
    if (!mode.equals("exactly_once") && !mode.equals("at_least_once")) {
      usage("--checkpointing-mode: exactly_once or at_least_once");
    }

    try {
      for (String j : jobs) {
        String dir = output == null ? null : jobs.length == 1 ? output : output + "/" + j;
        runJob(j, events, seed, rate, splits, parallelism, checkpointIntervalMs, mode, backend, checkpointDir,
            restartDelayMs, dir);
      }
    } catch (Exception e) {
      System.err.println("flink peer: the job failed:");
      e.printStackTrace();
      System.exit(1); // the MiniCluster's threads must not keep a failed run alive
    }
    System.exit(0);
  }

  private static void runJob(String job, long events, long seed, double rate, int splits, int parallelism,
      long checkpointIntervalMs, String mode, String backend, String checkpointDir, long restartDelayMs,
      String output) throws Exception {
    Configuration conf = new Configuration();
    conf.set(StateBackendOptions.STATE_BACKEND, backend);
    if (backend.equals("rocksdb")) conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
    if (checkpointIntervalMs > 0) {
      conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(checkpointIntervalMs));
      conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE,
          mode.equals("exactly_once") ? CheckpointingMode.EXACTLY_ONCE : CheckpointingMode.AT_LEAST_ONCE);
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "file://" + java.nio.file.Paths.get(checkpointDir)
          .toAbsolutePath());
    }
    // The same restart policy as the sluice commands: fixed delay (Flink's default delay is 1 s).
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(restartDelayMs));

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);

    GeneratorConfig generator = new GeneratorConfig();
    generator.seed = seed;
    generator.maxEvents = events;
    generator.declaredRatePerS = rate;
    // Per-split watermarks that never make an event late: each split's events come in time order.
    WatermarkStrategy<Event> watermarks = WatermarkStrategy.<Event>forMonotonousTimestamps()
        .withTimestampAssigner((e, previous) -> e.eventTimeMs());
    DataStream<Event> source =
        env.fromSource(new NexmarkSource(generator, splits), watermarks, "nexmark-source").uid("nexmark-source");

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
    JobExecutionResult result = env.execute("flink-" + job);
    System.out.printf("flink %s: %d events, parallelism %d, net runtime %d ms%n", job, events, parallelism,
        result.getNetRuntime());
  }

  private static <T> void sink(DataStream<T> rows, SerializableFunction<T, String> line, String output) {
    if (output == null) {
      rows.sinkTo(new DiscardingSink<>()).name("discard");
    } else {
      rows.sinkTo(new LineFileSink<>(output, line)).name("files");
    }
  }

  private static void usage(String why) {
    System.err.println("Jobs: " + why + "\nusage: Jobs --job demo|q0|q1|q2|q5|q7|q8 [--events N] [--seed S] "
        + "[--rate R] [--splits K] [--parallelism P] [--checkpoint-interval MS] "
        + "[--checkpointing-mode exactly_once|at_least_once] [--state-backend hashmap|rocksdb] "
        + "[--checkpoint-dir DIR] [--restart-delay-ms MS] [--output DIR]");
    System.exit(2);
  }
}
