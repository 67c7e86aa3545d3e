package dev.sluice.peers.nexmark;

import java.nio.charset.StandardCharsets;

/**
 * Two renderings of an event that both engines produce the same way (bench/peers/sluice_peer.cc is the C++ side):
 *
 * <ul>
 *   <li>a text line, the kind letter then every field in declaration order, comma-separated (the generator's
 *       strings never hold a comma or a newline): {@code P,id,name,email,credit_card,city,state,date_time,extra},
 *       {@code A,id,item_name,description,initial_bid,reserve,date_time,expires,seller,category,extra},
 *       {@code B,auction,bidder,price,channel,url,date_time,extra};
 *   <li>Sluice's serialized form (TypeSerializer&lt;Event&gt;: a kind byte, int64 little-endian, strings as LEB128
 *       length + bytes) folded into an FNV-1a 64 hash: the golden checksum of src/connectors/nexmark/README.md.
 * </ul>
 */
public final class EventText {
  public static final long FNV_BASIS = 0xCBF29CE484222325L;
  private static final long FNV_PRIME = 0x100000001B3L;

  private EventText() {}

  public static String line(Event e) {
    StringBuilder s = new StringBuilder(256);
    switch (e.kind) {
      case Event.PERSON: {
        Person p = e.person;
        s.append("P,").append(p.id).append(',').append(p.name).append(',').append(p.emailAddress).append(',')
            .append(p.creditCard).append(',').append(p.city).append(',').append(p.state).append(',')
            .append(p.dateTime).append(',').append(p.extra);
        break;
      }
      case Event.AUCTION: {
        Auction a = e.auction;
        s.append("A,").append(a.id).append(',').append(a.itemName).append(',').append(a.description).append(',')
            .append(a.initialBid).append(',').append(a.reserve).append(',').append(a.dateTime).append(',')
            .append(a.expires).append(',').append(a.seller).append(',').append(a.category).append(',')
            .append(a.extra);
        break;
      }
      default: {
        Bid b = e.bid;
        s.append("B,").append(b.auction).append(',').append(b.bidder).append(',').append(b.price).append(',')
            .append(b.channel).append(',').append(b.url).append(',').append(b.dateTime).append(',').append(b.extra);
        break;
      }
    }
    return s.toString();
  }

  /** Folds the event's serialized bytes into FNV-1a hash h. */
  public static long fnv1a(long h, Event e) {
    h = fnvByte(h, e.kind);
    switch (e.kind) {
      case Event.PERSON: {
        Person p = e.person;
        h = fnvLong(h, p.id);
        h = fnvString(h, p.name);
        h = fnvString(h, p.emailAddress);
        h = fnvString(h, p.creditCard);
        h = fnvString(h, p.city);
        h = fnvString(h, p.state);
        h = fnvLong(h, p.dateTime);
        return fnvString(h, p.extra);
      }
      case Event.AUCTION: {
        Auction a = e.auction;
        h = fnvLong(h, a.id);
        h = fnvString(h, a.itemName);
        h = fnvString(h, a.description);
        h = fnvLong(h, a.initialBid);
        h = fnvLong(h, a.reserve);
        h = fnvLong(h, a.dateTime);
        h = fnvLong(h, a.expires);
        h = fnvLong(h, a.seller);
        h = fnvLong(h, a.category);
        return fnvString(h, a.extra);
      }
      default: {
        Bid b = e.bid;
        h = fnvLong(h, b.auction);
        h = fnvLong(h, b.bidder);
        h = fnvLong(h, b.price);
        h = fnvString(h, b.channel);
        h = fnvString(h, b.url);
        h = fnvLong(h, b.dateTime);
        return fnvString(h, b.extra);
      }
    }
  }

  private static long fnvByte(long h, int b) {
    return (h ^ (b & 0xFF)) * FNV_PRIME;
  }

  private static long fnvLong(long h, long v) {
    for (int i = 0; i < 8; ++i) h = fnvByte(h, (int) (v >>> (8 * i)));
    return h;
  }

  private static long fnvString(long h, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    long n = bytes.length;
    while (n >= 0x80) {
      h = fnvByte(h, (int) (n | 0x80));
      n >>>= 7;
    }
    h = fnvByte(h, (int) n);
    for (byte b : bytes) h = fnvByte(h, b);
    return h;
  }
}
