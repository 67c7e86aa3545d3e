package dev.sluice.peers.nexmark;

/**
 * Split i of n: event numbers i, i + n, i + 2n, ... (Sluice's SplitGenerator). The offset (events emitted) is
 * the checkpoint position. One thread at a time.
 */
public final class SplitGenerator {
  private final Generator generator;
  private final int splitIndex;
  private final int numSplits;
  private long offset;

  public SplitGenerator(Generator generator, int splitIndex, int numSplits, long offset) {
    if (numSplits < 1 || splitIndex < 0 || splitIndex >= numSplits || offset < 0) {
      throw new IllegalArgumentException("nexmark split " + splitIndex + "/" + numSplits + " at offset " + offset
          + ": expected 0 <= index < splits and offset >= 0");
    }
    this.generator = generator;
    this.splitIndex = splitIndex;
    this.numSplits = numSplits;
    this.offset = offset;
  }

  public int splitIndex() {
    return splitIndex;
  }

  public int numSplits() {
    return numSplits;
  }

  public long offset() {
    return offset;
  }

  public long nextEventNumber() {
    return splitIndex + offset * numSplits;
  }

  public boolean hasNext() {
    return !generator.isBounded() || nextEventNumber() < generator.config().maxEvents;
  }

  /** The next event, or null at the end of a bounded stream. */
  public Event next() {
    if (!hasNext()) return null;
    Event e = generator.eventAt(nextEventNumber());
    ++offset;
    return e;
  }
}
