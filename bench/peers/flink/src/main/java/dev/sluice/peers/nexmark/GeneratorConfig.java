package dev.sluice.peers.nexmark;

import java.io.Serializable;

/**
 * The generator's parameters, with Sluice's defaults (include/sluice/connectors/nexmark/generator.h,
 * GeneratorConfig). The same values on both sides give the same stream, event for event.
 */
public final class GeneratorConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  /** 2024-01-01T00:00:00Z. */
  public static final long DEFAULT_BASE_TIME_MS = 1_704_067_200_000L;

  public long seed = 1; // unsigned 64-bit in Sluice; the same bits here
  public long firstEventId = 0;
  public long maxEvents = -1; // -1: unbounded
  public double declaredRatePerS = 10_000_000;
  public long baseTimeMs = DEFAULT_BASE_TIME_MS;
  public int outOfOrderGroupSize = 1;
  public int avgPersonSizeBytes = 200;
  public int avgAuctionSizeBytes = 500;
  public int avgBidSizeBytes = 100;
  public int hotAuctionRatio = 2;
  public int hotBiddersRatio = 4;
  public int hotSellersRatio = 4;
  public int numActivePeople = 1000;
  public int numInFlightAuctions = 100;

  /** Throws IllegalArgumentException naming the first field out of range (Sluice's validate()). */
  public void validate() {
    check(firstEventId >= 0, "firstEventId", ">= 0", firstEventId);
    check(maxEvents >= -1, "maxEvents", "-1 (unbounded) or >= 0", maxEvents);
    check(declaredRatePerS > 0 && declaredRatePerS <= 1e12, "declaredRatePerS", "a rate in (0, 1e12]",
        declaredRatePerS);
    check(1e12 / declaredRatePerS <= 9e18, "declaredRatePerS", "an inter-event delay below 9e18 ps",
        declaredRatePerS);
    check(baseTimeMs >= 0, "baseTimeMs", ">= 0", baseTimeMs);
    check(outOfOrderGroupSize >= 1 && outOfOrderGroupSize % 953 != 0, "outOfOrderGroupSize",
        ">= 1 and not a multiple of 953", outOfOrderGroupSize);
    for (int v : new int[] {avgPersonSizeBytes, avgAuctionSizeBytes, avgBidSizeBytes}) {
      check(v >= 0 && v <= (1 << 20), "avg*SizeBytes", "0 .. 1048576", v);
    }
    for (int v : new int[] {hotAuctionRatio, hotBiddersRatio, hotSellersRatio, numActivePeople,
        numInFlightAuctions}) {
      check(v >= 1, "hot ratios / numActivePeople / numInFlightAuctions", ">= 1", v);
    }
  }

  private static void check(boolean ok, String field, String expected, Object got) {
    if (!ok) {
      throw new IllegalArgumentException(
          "nexmark GeneratorConfig." + field + ": expected " + expected + ", got " + got);
    }
  }
}
