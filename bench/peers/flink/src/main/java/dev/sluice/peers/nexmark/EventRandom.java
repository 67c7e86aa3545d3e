package dev.sluice.peers.nexmark;

/**
 * The per-event random stream: SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), as in Sluice's
 * src/connectors/nexmark/event_random.h. Java's long arithmetic wraps mod 2^64 like C++'s uint64_t, and
 * `>>>` is the unsigned shift, so the bits are the same; only the unsigned high product needs care.
 */
final class EventRandom {
  static final long GAMMA = 0x9E3779B97F4A7C15L;

  private long state;

  EventRandom(long state) {
    this.state = state;
  }

  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** High 64 bits of the unsigned 128-bit product a * b (Math.unsignedMultiplyHigh is Java 18+). */
  static long unsignedMulHigh(long a, long b) {
    return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
  }

  long next() {
    state += GAMMA;
    return mix64(state);
  }

  /** U[0, n) for 1 <= n: the high 64 bits of next() * n. */
  long uniform(long n) {
    return unsignedMulHigh(next(), n);
  }

  /** (chunk16 * n) >> 16 on the low 16 bits of chunk. */
  static int chunkToRange(long chunk, int n) {
    return (int) (((chunk & 0xFFFFL) * n) >>> 16);
  }

  static char randomChar(long chunk, char space) {
    int v = chunkToRange(chunk, 338);
    return v < 26 ? space : (char) ('a' + (v - 26) % 26);
  }

  /** A random string of length 3 + U(maxLength - 3), leading and trailing spaces trimmed. */
  String trimmedString(int maxLength, StringBuilder scratch) {
    long len = 3 + uniform(maxLength - 3);
    scratch.setLength(0);
    int i = 0;
    while (i < len) {
      long bits = next();
      for (int k = 0; k < 4 && i < len; ++k, ++i, bits >>>= 16) {
        scratch.append(randomChar(bits, ' '));
      }
    }
    int begin = 0;
    int end = scratch.length();
    while (end > begin && scratch.charAt(end - 1) == ' ') --end;
    while (begin < end && scratch.charAt(begin) == ' ') ++begin;
    return scratch.substring(begin, end);
  }
}
