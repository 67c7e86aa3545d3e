package dev.sluice.peers.flink;

import dev.sluice.peers.nexmark.Event;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Failure injection for the recovery measurement: subtask 0 of the first attempt throws when it has seen
 * `failAt` events; the first event any later attempt of subtask 0 processes marks the end of the recovery. The
 * times live in static fields: the MiniCluster runs every task in this JVM. Chained to the source (no shuffle).
 */
final class FailOnce extends RichMapFunction<Event, Event> {
  private static final long serialVersionUID = 1L;

  static volatile long failedAtNanos;
  static volatile long recoveredAtNanos;

  private final long failAt;
  private transient long seen;
  private transient boolean armed;
  private transient boolean watching;

  FailOnce(long failAt) {
    this.failAt = failAt;
  }

  @Override
  public void open(OpenContext ctx) {
    boolean first = getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
    boolean subtask0 = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
    armed = first && subtask0;
    watching = !first && subtask0;
  }

  @Override
  public Event map(Event e) {
    if (armed && ++seen == failAt) {
      failedAtNanos = System.nanoTime();
      throw new IllegalStateException("injected failure after " + failAt + " events (FailOnce)");
    }
    if (watching && recoveredAtNanos == 0 && failedAtNanos != 0) {
      recoveredAtNanos = System.nanoTime();
    }
    return e;
  }

  /** Failure to the first event processed again, ms; -1 if no failure or no recovery happened. */
  static double recoveryMs() {
    long f = failedAtNanos;
    long r = recoveredAtNanos;
    return f == 0 || r == 0 ? -1 : (r - f) / 1e6;
  }
}
