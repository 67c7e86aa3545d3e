package dev.sluice.peers.nexmark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;

/**
 * Prints Nexmark events for the cross-language check: {@code PrintEvents [--seed S] [--events N] [--rate R]
 * [--splits K] [--digest]}. Without --digest one EventText line per event, split 0's events first, then split
 * 1's, ... (with --splits 1, event numbers 0 .. N-1 in order). With --digest one line "events=N fnv1a=0x...":
 * the FNV-1a hash of the serialized events in that same order. `sluice_peer events` prints the same.
 */
public final class PrintEvents {
  private PrintEvents() {}

  public static void main(String[] args) throws IOException {
    GeneratorConfig config = new GeneratorConfig();
    long events = 1000;
    int splits = 1;
    boolean digest = false;
    for (int i = 0; i < args.length; ++i) {
      switch (args[i]) {
        case "--seed":
          config.seed = Long.parseUnsignedLong(args[++i]);
          break;
        case "--events":
          events = Long.parseLong(args[++i]);
          break;
        case "--rate":
          config.declaredRatePerS = Double.parseDouble(args[++i]);
          break;
        case "--splits":
          splits = Integer.parseInt(args[++i]);
          break;
        case "--digest":
          digest = true;
          break;
        default:
          System.err.println("PrintEvents: unknown argument '" + args[i]
              + "'; expected --seed S --events N --rate R --splits K --digest");
          System.exit(2);
      }
    }
    config.maxEvents = events;
    Generator generator = new Generator(config);
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    long h = EventText.FNV_BASIS;
    for (int s = 0; s < splits; ++s) {
      SplitGenerator split = new SplitGenerator(generator, s, splits, 0);
      for (Event e = split.next(); e != null; e = split.next()) {
        if (digest) {
          h = EventText.fnv1a(h, e);
        } else {
          out.write(EventText.line(e));
          out.write('\n');
        }
      }
    }
    if (digest) out.write(String.format("events=%d fnv1a=0x%016X%n", events, h));
    out.flush();
  }
}
