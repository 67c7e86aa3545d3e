package dev.sluice.peers.nexmark;

/** A bid (Sluice's nexmark::Bid; fields in its order). Price in cents. A Flink POJO. */
public final class Bid {
  public long auction;
  public long bidder;
  public long price;
  public String channel;
  public String url;
  public long dateTime; // event time, ms
  public String extra;

  public Bid() {}
}
