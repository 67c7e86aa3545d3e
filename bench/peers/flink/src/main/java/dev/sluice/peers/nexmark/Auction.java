package dev.sluice.peers.nexmark;

/** An auction opening (Sluice's nexmark::Auction; fields in its order). Prices in cents. A Flink POJO. */
public final class Auction {
  public long id;
  public String itemName;
  public String description;
  public long initialBid;
  public long reserve;
  public long dateTime; // event time, ms
  public long expires; // event time, ms
  public long seller;
  public long category;
  public String extra;

  public Auction() {}
}
