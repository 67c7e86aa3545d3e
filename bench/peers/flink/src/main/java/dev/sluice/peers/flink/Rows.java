package dev.sluice.peers.flink;

import dev.sluice.peers.nexmark.Bid;
import java.util.ArrayList;
import java.util.List;

/**
 * The jobs' output rows (Flink POJOs), each with the text line Sluice writes for it: columns in the order of
 * Sluice's include/sluice/connectors/nexmark/reference/rows.h (the demo: examples/per_auction), comma-separated.
 */
public final class Rows {
  private Rows() {}

  /** The demo's running aggregate per auction: "auction,count,sum,max". */
  public static final class AuctionUpdate {
    public long auction;
    public long count;
    public long sum;
    public long max;

    public AuctionUpdate() {}

    public String line() {
      return auction + "," + count + "," + sum + "," + max;
    }
  }

  /** q0: every field of the bid. */
  public static String q0Line(Bid b) {
    return b.auction + "," + b.bidder + "," + b.price + "," + b.channel + "," + b.url + "," + b.dateTime + ","
        + b.extra;
  }

  /** q1: price in thousandths of a cent (price * 908 = 0.908 * price, exact). */
  public static final class Q1Row {
    public long auction;
    public long bidder;
    public long priceMilli;
    public long dateTime;
    public String extra;

    public Q1Row() {}

    public String line() {
      return auction + "," + bidder + "," + priceMilli + "," + dateTime + "," + extra;
    }
  }

  public static final class Q2Row {
    public long auction;
    public long price;

    public Q2Row() {}

    public String line() {
      return auction + "," + price;
    }
  }

  public static final class Q5Row {
    public long windowStartMs;
    public long windowEndMs;
    public long auction;
    public long num;

    public Q5Row() {}

    public String line() {
      return windowStartMs + "," + windowEndMs + "," + auction + "," + num;
    }
  }

  public static final class Q7Row {
    public long auction;
    public long bidder;
    public long price;
    public long dateTime;
    public String extra;

    public Q7Row() {}

    public String line() {
      return auction + "," + bidder + "," + price + "," + dateTime + "," + extra;
    }
  }

  /** q7's partial result: the highest price of a window (or of a shard of it) and every bid at it. */
  public static final class HighestBids {
    public long windowStartMs;
    public long price = -1;
    public List<Q7Row> bids = new ArrayList<>();

    public HighestBids() {}
  }

  /** q5's accumulator: a window's highest count and every row that reaches it. */
  public static final class Hottest {
    public long num;
    public List<Q5Row> rows = new ArrayList<>();

    public Hottest() {}
  }

  public static final class Q8Row {
    public long personId;
    public String name;
    public long windowStartMs;

    public Q8Row() {}

    public String line() {
      return personId + "," + name + "," + windowStartMs;
    }
  }
}
