package dev.sluice.peers.flink;

import dev.sluice.peers.nexmark.Event;
import dev.sluice.peers.nexmark.Generator;
import dev.sluice.peers.nexmark.GeneratorConfig;
import dev.sluice.peers.nexmark.SplitGenerator;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A FLIP-27 source over the Java port of Sluice's Nexmark generator, shaped as Sluice's NexmarkSource: a fixed
 * number of interleaved splits, split i assigned to reader i % parallelism when that reader registers, and one
 * SourceOutput per split so that the WatermarkStrategy given to fromSource() runs per split (Flink combines the
 * split watermarks into the reader's by taking their minimum, as Sluice does).
 */
public final class NexmarkSource implements Source<Event, NexmarkSplit, List<Integer>> {
  private static final long serialVersionUID = 1L;

  private final GeneratorConfig config;
  private final int numSplits;

  public NexmarkSource(GeneratorConfig config, int numSplits) {
    config.validate();
    if (numSplits < 1) throw new IllegalArgumentException("nexmark source: splits must be >= 1, got " + numSplits);
    this.config = config;
    this.numSplits = numSplits;
  }

  @Override
  public Boundedness getBoundedness() {
    return config.maxEvents >= 0 ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
  }

  @Override
  public SplitEnumerator<NexmarkSplit, List<Integer>> createEnumerator(SplitEnumeratorContext<NexmarkSplit> ctx) {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < numSplits; ++i) all.add(i);
    return new Enumerator(ctx, numSplits, all);
  }

  @Override
  public SplitEnumerator<NexmarkSplit, List<Integer>> restoreEnumerator(
      SplitEnumeratorContext<NexmarkSplit> ctx, List<Integer> unassigned) {
    return new Enumerator(ctx, numSplits, new ArrayList<>(unassigned));
  }

  @Override
  public SimpleVersionedSerializer<NexmarkSplit> getSplitSerializer() {
    return new NexmarkSplit.Serializer();
  }

  @Override
  public SimpleVersionedSerializer<List<Integer>> getEnumeratorCheckpointSerializer() {
    return new UnassignedSerializer();
  }

  @Override
  public SourceReader<Event, NexmarkSplit> createReader(SourceReaderContext ctx) {
    return new Reader(new Generator(config));
  }

  /** Hands out the unassigned splits of a reader when it registers; its state is the splits not handed out. */
  private static final class Enumerator implements SplitEnumerator<NexmarkSplit, List<Integer>> {
    private final SplitEnumeratorContext<NexmarkSplit> ctx;
    private final int numSplits;
    private final List<Integer> unassigned;

    Enumerator(SplitEnumeratorContext<NexmarkSplit> ctx, int numSplits, List<Integer> unassigned) {
      this.ctx = ctx;
      this.numSplits = numSplits;
      this.unassigned = unassigned;
    }

    @Override
    public void start() {}

    @Override
    public void addReader(int subtask) {
      int parallelism = ctx.currentParallelism();
      List<Integer> keep = new ArrayList<>();
      for (int i : unassigned) {
        if (i % parallelism == subtask) {
          ctx.assignSplit(new NexmarkSplit(i, numSplits, 0), subtask);
        } else {
          keep.add(i);
        }
      }
      unassigned.clear();
      unassigned.addAll(keep);
      ctx.signalNoMoreSplits(subtask);
    }

    @Override
    public void handleSplitRequest(int subtask, String host) {}

    @Override
    public void addSplitsBack(List<NexmarkSplit> splits, int subtask) {
      // Splits assigned after the last completed checkpoint, from a reader that failed: they are not in any
      // reader's restored state, so they start over (this enumerator only ever assigns offset 0) and go to the
      // reader that registers for them next. The reader is not registered at this point: assigning now fails.
      for (NexmarkSplit s : splits) {
        if (!unassigned.contains(s.index)) unassigned.add(s.index);
      }
    }

    @Override
    public List<Integer> snapshotState(long checkpointId) {
      return new ArrayList<>(unassigned);
    }

    @Override
    public void close() {}
  }

  /** Emits its splits' events round-robin, one per pollNext, each through its split's own output. */
  private static final class Reader implements SourceReader<Event, NexmarkSplit> {
    private final Generator generator;
    private final List<SplitGenerator> active = new ArrayList<>();
    private final List<SourceOutput<Event>> outputs = new ArrayList<>();
    private final List<NexmarkSplit> finished = new ArrayList<>();
    private CompletableFuture<Void> available = new CompletableFuture<>();
    private boolean noMoreSplits;
    private int cursor;

    Reader(Generator generator) {
      this.generator = generator;
    }

    @Override
    public void start() {}

    @Override
    public InputStatus pollNext(ReaderOutput<Event> output) {
      while (!active.isEmpty()) {
        if (cursor >= active.size()) cursor = 0;
        SplitGenerator split = active.get(cursor);
        if (outputs.get(cursor) == null) {
          outputs.set(cursor, output.createOutputForSplit(splitId(split)));
        }
        Event e = split.next();
        if (e != null) {
          outputs.get(cursor).collect(e, e.eventTimeMs());
          ++cursor;
          return InputStatus.MORE_AVAILABLE;
        }
        output.releaseOutputForSplit(splitId(split));
        finished.add(new NexmarkSplit(split.splitIndex(), split.numSplits(), split.offset()));
        active.remove(cursor);
        outputs.remove(cursor);
      }
      if (noMoreSplits) return InputStatus.END_OF_INPUT;
      if (available.isDone()) available = new CompletableFuture<>();
      return InputStatus.NOTHING_AVAILABLE;
    }

    private static String splitId(SplitGenerator s) {
      return s.splitIndex() + "/" + s.numSplits();
    }

    @Override
    public List<NexmarkSplit> snapshotState(long checkpointId) {
      List<NexmarkSplit> state = new ArrayList<>(finished);
      for (SplitGenerator s : active) state.add(new NexmarkSplit(s.splitIndex(), s.numSplits(), s.offset()));
      return state;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return available;
    }

    @Override
    public void addSplits(List<NexmarkSplit> splits) {
      for (NexmarkSplit s : splits) {
        active.add(new SplitGenerator(generator, s.index, s.numSplits, s.offset));
        outputs.add(null);
      }
      available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
      noMoreSplits = true;
      available.complete(null);
    }

    @Override
    public void close() {}
  }

  private static final class UnassignedSerializer implements SimpleVersionedSerializer<List<Integer>> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(List<Integer> splits) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeInt(splits.size());
      for (int i : splits) out.writeInt(i);
      out.flush();
      return bytes.toByteArray();
    }

    @Override
    public List<Integer> deserialize(int version, byte[] serialized) throws IOException {
      if (version != 1) throw new IOException("nexmark enumerator state: unknown version " + version);
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized));
      int n = in.readInt();
      List<Integer> splits = new ArrayList<>(n);
      for (int k = 0; k < n; ++k) splits.add(in.readInt());
      return splits;
    }
  }
}
