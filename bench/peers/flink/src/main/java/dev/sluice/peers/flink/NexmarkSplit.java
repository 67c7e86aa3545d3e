package dev.sluice.peers.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Split `index` of `numSplits` of the Nexmark stream (event numbers index, index + numSplits, ...) and how many
 * of its events were emitted: Sluice's NexmarkSplit. The split count is fixed per job, so every event has the
 * same id and time at any parallelism.
 */
public final class NexmarkSplit implements SourceSplit {
  public final int index;
  public final int numSplits;
  public final long offset;

  public NexmarkSplit(int index, int numSplits, long offset) {
    this.index = index;
    this.numSplits = numSplits;
    this.offset = offset;
  }

  @Override
  public String splitId() {
    return index + "/" + numSplits;
  }

  /** The split serializer: three fixed-width fields. */
  public static final class Serializer implements SimpleVersionedSerializer<NexmarkSplit> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(NexmarkSplit s) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(16);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeInt(s.index);
      out.writeInt(s.numSplits);
      out.writeLong(s.offset);
      out.flush();
      return bytes.toByteArray();
    }

    @Override
    public NexmarkSplit deserialize(int version, byte[] serialized) throws IOException {
      if (version != 1) throw new IOException("nexmark split: unknown serializer version " + version);
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized));
      return new NexmarkSplit(in.readInt(), in.readInt(), in.readLong());
    }
  }
}
