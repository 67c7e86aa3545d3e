package dev.sluice.peers.flink;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.util.function.SerializableFunction;

/**
 * Writes one text line per record to DIR/part-SUBTASK-ATTEMPT, the layout of Sluice's file sink (`part-*` files
 * of "a,b,c" lines), so that the answers compare file by file. Not transactional: a restarted attempt writes a
 * new file beside the old one, which is enough for the answer comparisons (no failures) and the benchmarks
 * (which use the discarding sink when recovery is measured).
 */
public final class LineFileSink<T> implements Sink<T> {
  private static final long serialVersionUID = 1L;

  private final String dir;
  private final SerializableFunction<T, String> format;

  public LineFileSink(String dir, SerializableFunction<T, String> format) {
    this.dir = dir;
    this.format = format;
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) throws IOException {
    Path directory = Paths.get(dir);
    Files.createDirectories(directory);
    String name = "part-" + context.getTaskInfo().getIndexOfThisSubtask() + "-"
        + context.getTaskInfo().getAttemptNumber();
    Writer out = new BufferedWriter(Files.newBufferedWriter(directory.resolve(name), StandardCharsets.UTF_8), 1 << 16);
    return new SinkWriter<T>() {
      @Override
      public void write(T record, Context ctx) throws IOException {
        out.write(format.apply(record));
        out.write('\n');
      }

      @Override
      public void flush(boolean endOfInput) throws IOException {
        out.flush();
      }

      @Override
      public void close() throws IOException {
        out.close();
      }
    };
  }
}
