package dev.sluice.peers.nexmark;

/**
 * One Nexmark event: exactly one of person, auction, bid is set (kind says which). A Flink POJO, so that
 * Flink serializes it field by field without Kryo.
 */
public final class Event {
  public static final int PERSON = 0;
  public static final int AUCTION = 1;
  public static final int BID = 2;

  public int kind;
  public Person person;
  public Auction auction;
  public Bid bid;

  public Event() {}

  public boolean isPerson() {
    return kind == PERSON;
  }

  public boolean isAuction() {
    return kind == AUCTION;
  }

  public boolean isBid() {
    return kind == BID;
  }

  /** The event time of whichever kind this is, ms. */
  public long eventTimeMs() {
    switch (kind) {
      case PERSON:
        return person.dateTime;
      case AUCTION:
        return auction.dateTime;
      default:
        return bid.dateTime;
    }
  }
}
