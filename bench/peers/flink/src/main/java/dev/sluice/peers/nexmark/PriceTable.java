package dev.sluice.peers.nexmark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Prices without floating point: Sluice's table B[i] = round(100 * 10^(6i/1024)), i = 0..1024, read from the
 * very file the C++ build compiles in (src/connectors/nexmark/price_table.inc, packaged as a resource by
 * pom.xml), so the two sides cannot drift apart. price = B[i] + (((x & 0xFFFFFFFF) * (B[i+1] - B[i])) >> 32)
 * with i = x >>> 54.
 */
final class PriceTable {
  static final int BUCKETS = 1024;
  private static final long[] BOUNDARIES = load();

  private PriceTable() {}

  static long priceFromDraw(long x) {
    int i = (int) (x >>> 54);
    long lo = BOUNDARIES[i];
    long width = BOUNDARIES[i + 1] - lo; // < 2^21: the product below stays under 2^53
    return lo + (((x & 0xFFFFFFFFL) * width) >>> 32);
  }

  private static long[] load() {
    long[] b = new long[BUCKETS + 1];
    int n = 0;
    try (InputStream in = PriceTable.class.getResourceAsStream("/price_table.inc")) {
      if (in == null) throw new IllegalStateException("price_table.inc is not on the classpath");
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      for (String line; (line = r.readLine()) != null; ) {
        if (line.startsWith("//")) continue;
        for (String token : line.split(",")) {
          String t = token.trim();
          if (t.isEmpty()) continue;
          if (n > BUCKETS) throw new IllegalStateException("price_table.inc: more than 1025 entries");
          b[n++] = Long.parseLong(t);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read price_table.inc", e);
    }
    if (n != BUCKETS + 1 || b[0] != 100 || b[BUCKETS / 2] != 100_000 || b[BUCKETS] != 100_000_000) {
      throw new IllegalStateException("price_table.inc: expected 1025 boundaries 100 .. 1e8, got " + n);
    }
    return b;
  }
}
