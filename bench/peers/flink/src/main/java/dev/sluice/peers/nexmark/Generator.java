package dev.sluice.peers.nexmark;

import java.io.Serializable;
import java.math.BigInteger;

/**
 * A port of Sluice's Nexmark generator (src/connectors/nexmark/generator.cc), bit for bit: a pure function from
 * (config, event number) to an event. The contract both sides follow is written out in
 * src/connectors/nexmark/README.md ("The stream, precisely") and docs/benchmarks.md; the golden checksum
 * (GoldenChecksum) and the peers_nexmark_generator_identical test pin it.
 *
 * <p>Immutable after construction: one instance may serve many threads.
 */
public final class Generator implements Serializable {
  private static final long serialVersionUID = 1L;

  static final long PERSON_PROPORTION = 1;
  static final long AUCTION_PROPORTION = 3;
  static final long TOTAL_PROPORTION = 50;
  static final long FIRST_PERSON_ID = 1000;
  static final long FIRST_AUCTION_ID = 1000;
  static final long FIRST_CATEGORY_ID = 10;
  static final long NUM_CATEGORIES = 5;
  static final long HOT_BATCH_SIZE = 100;
  static final long ID_LEAD = 10;
  static final long NUM_CHANNELS = 10_000;
  static final long URL_SALT = 0x75726CL; // "url"

  // Sluice's word lists (generator.cc): the same words in the same order.
  private static final String[] FIRST_NAMES = {
    "Alice", "Bruno", "Chen", "Dana", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas"
  };
  private static final String[] LAST_NAMES = {
    "Adler", "Baker", "Costa", "Diaz", "Evans", "Fischer", "Garcia", "Hansen", "Ito", "Jensen"
  };
  private static final String[] CITIES = {
    "Phoenix", "Tucson", "Sacramento", "San Diego", "Boise", "Eugene", "Salem", "Spokane", "Tacoma", "Laramie"
  };
  private static final String[] STATES = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  private static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
  private static final String URL_PREFIX = "https://www.nexmark.com/";
  private static final String URL_SUFFIX = "item.htm?query=1";
  private static final String CHANNEL_ID_PARAM = "&channel_id=";

  private final GeneratorConfig config;
  private final long seedKey;
  private final long urlKey;
  private final long interEventDelayPs;
  private final long maxExactAdjusted;
  private final long eventsPerInFlight;
  private final String[] hotUrls = new String[4];

  public Generator(GeneratorConfig config) {
    config.validate();
    this.config = config;
    seedKey = EventRandom.mix64(config.seed);
    urlKey = EventRandom.mix64(seedKey ^ URL_SALT);
    // IEEE division is correctly rounded in both languages; Math.round is llround for positive values.
    interEventDelayPs = Math.round(1e12 / config.declaredRatePerS);
    maxExactAdjusted = Long.MAX_VALUE / Math.max(interEventDelayPs, 1);
    eventsPerInFlight = (long) config.numInFlightAuctions * TOTAL_PROPORTION / AUCTION_PROPORTION;
    for (int h = 0; h < 4; ++h) hotUrls[h] = url(NUM_CHANNELS + h, true);
  }

  public GeneratorConfig config() {
    return config;
  }

  public boolean isBounded() {
    return config.maxEvents >= 0;
  }

  // --- id formulas ---------------------------------------------------------------------------------------

  static int kindForId(long id) {
    long rem = id % TOTAL_PROPORTION;
    if (rem < PERSON_PROPORTION) return Event.PERSON;
    if (rem < PERSON_PROPORTION + AUCTION_PROPORTION) return Event.AUCTION;
    return Event.BID;
  }

  static long lastBase0PersonId(long id) {
    long epoch = id / TOTAL_PROPORTION;
    long offset = id % TOTAL_PROPORTION;
    if (offset >= PERSON_PROPORTION) offset = PERSON_PROPORTION - 1;
    return epoch * PERSON_PROPORTION + offset;
  }

  static long lastBase0AuctionId(long id) {
    long epoch = id / TOTAL_PROPORTION;
    long offset = id % TOTAL_PROPORTION;
    if (offset < PERSON_PROPORTION) {
      --epoch;
      offset = AUCTION_PROPORTION - 1;
    } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
      offset = AUCTION_PROPORTION - 1;
    } else {
      offset -= PERSON_PROPORTION;
    }
    return epoch * AUCTION_PROPORTION + offset;
  }

  static long adjustedEventNumber(long n, int groupSize) {
    long g = groupSize;
    if (g == 1) return n;
    return (n / g) * g + ((n % g) * 953) % g;
  }

  public long eventId(long n) {
    return config.firstEventId + adjustedEventNumber(n, config.outOfOrderGroupSize);
  }

  public int eventKind(long n) {
    return kindForId(eventId(n));
  }

  public long eventTimeMs(long n) {
    return timeForAdjusted(adjustedEventNumber(n, config.outOfOrderGroupSize));
  }

  /** A lower bound of the event time of every event numbered >= n (equal to eventTimeMs(n) for G = 1). */
  public long minEventTimeFromMs(long n) {
    long g = config.outOfOrderGroupSize;
    return timeForAdjusted(g == 1 ? n : (n / g) * g);
  }

  long timeForAdjusted(long adjusted) {
    if (adjusted <= maxExactAdjusted) {
      return config.baseTimeMs + adjusted * interEventDelayPs / 1_000_000_000L;
    }
    BigInteger ps = BigInteger.valueOf(adjusted).multiply(BigInteger.valueOf(interEventDelayPs));
    return config.baseTimeMs + ps.divide(BigInteger.valueOf(1_000_000_000L)).longValueExact();
  }

  // --- events --------------------------------------------------------------------------------------------

  /** The event with this number (0 <= n, and n < maxEvents when bounded). */
  public Event eventAt(long n) {
    long adjusted = adjustedEventNumber(n, config.outOfOrderGroupSize);
    long id = config.firstEventId + adjusted;
    long timeMs = timeForAdjusted(adjusted);
    EventRandom r = new EventRandom(EventRandom.mix64(seedKey + id));
    Event e = new Event();
    e.kind = kindForId(id);
    StringBuilder scratch = new StringBuilder(100);
    switch (e.kind) {
      case Event.PERSON:
        e.person = person(id, timeMs, r, scratch);
        break;
      case Event.AUCTION:
        e.auction = auction(id, adjusted, timeMs, r, scratch);
        break;
      default:
        e.bid = bid(id, timeMs, r);
        break;
    }
    return e;
  }

  private static String pick(EventRandom r, String[] words) {
    return words[(int) r.uniform(words.length)];
  }

  private long nextBase0PersonId(long id, EventRandom r) {
    long numPeople = lastBase0PersonId(id) + 1;
    long active = Math.min(numPeople, config.numActivePeople);
    return numPeople - active + r.uniform(active + ID_LEAD);
  }

  private long nextBase0AuctionId(long id, EventRandom r) {
    long last = lastBase0AuctionId(id);
    long first = Math.max(last - config.numInFlightAuctions, 0);
    return first + r.uniform(last - first + 1 + ID_LEAD);
  }

  // Draw order: name (first, last), email (local part, domain), credit card (4 groups), city, state, extra.
  private Person person(long id, long timeMs, EventRandom r, StringBuilder scratch) {
    Person p = new Person();
    p.id = lastBase0PersonId(id) + FIRST_PERSON_ID;
    p.name = pick(r, FIRST_NAMES) + " " + pick(r, LAST_NAMES);
    String local = r.trimmedString(7, scratch);
    String domain = r.trimmedString(5, scratch);
    p.emailAddress = local + "@" + domain + ".com";
    StringBuilder cc = new StringBuilder(19);
    for (int g = 0; g < 4; ++g) {
      if (g > 0) cc.append(' ');
      long v = r.uniform(10_000);
      cc.append((char) ('0' + v / 1000)).append((char) ('0' + v / 100 % 10));
      cc.append((char) ('0' + v / 10 % 10)).append((char) ('0' + v % 10));
    }
    p.creditCard = cc.toString();
    p.city = pick(r, CITIES);
    p.state = pick(r, STATES);
    p.dateTime = timeMs;
    long size = 16 + p.name.length() + p.emailAddress.length() + p.creditCard.length() + p.city.length()
        + p.state.length();
    p.extra = extra(r, size, config.avgPersonSizeBytes);
    return p;
  }

  // Draw order: seller (hot?, then random person if not), category, initial bid, reserve increment, expiry,
  // item name, description, extra.
  private Auction auction(long id, long adjusted, long timeMs, EventRandom r, StringBuilder scratch) {
    Auction a = new Auction();
    a.id = lastBase0AuctionId(id) + FIRST_AUCTION_ID;
    if (r.uniform(config.hotSellersRatio) > 0) {
      a.seller = (lastBase0PersonId(id) / HOT_BATCH_SIZE) * HOT_BATCH_SIZE;
    } else {
      a.seller = nextBase0PersonId(id, r);
    }
    a.seller += FIRST_PERSON_ID;
    a.category = FIRST_CATEGORY_ID + r.uniform(NUM_CATEGORIES);
    a.initialBid = PriceTable.priceFromDraw(r.next());
    a.reserve = a.initialBid + PriceTable.priceFromDraw(r.next());
    long horizonMs = timeForAdjusted(adjusted + eventsPerInFlight) - timeMs;
    a.expires = timeMs + 1 + r.uniform(Math.max(2 * horizonMs, 1));
    a.dateTime = timeMs;
    a.itemName = r.trimmedString(20, scratch);
    a.description = r.trimmedString(100, scratch);
    long size = 56 + a.itemName.length() + a.description.length();
    a.extra = extra(r, size, config.avgAuctionSizeBytes);
    return a;
  }

  // Draw order: auction (hot?, then random auction if not), bidder (hot?, then random person if not), price,
  // channel (hot?, then which one), extra.
  private Bid bid(long id, long timeMs, EventRandom r) {
    Bid b = new Bid();
    if (r.uniform(config.hotAuctionRatio) > 0) {
      b.auction = (lastBase0AuctionId(id) / HOT_BATCH_SIZE) * HOT_BATCH_SIZE;
    } else {
      b.auction = nextBase0AuctionId(id, r);
    }
    b.auction += FIRST_AUCTION_ID;
    if (r.uniform(config.hotBiddersRatio) > 0) {
      b.bidder = (lastBase0PersonId(id) / HOT_BATCH_SIZE) * HOT_BATCH_SIZE + 1;
    } else {
      b.bidder = nextBase0PersonId(id, r);
    }
    b.bidder += FIRST_PERSON_ID;
    b.price = PriceTable.priceFromDraw(r.next());
    if (r.uniform(2) > 0) {
      int h = (int) r.uniform(4);
      b.channel = HOT_CHANNELS[h];
      b.url = hotUrls[h];
    } else {
      long c = r.uniform(NUM_CHANNELS);
      b.channel = "channel-" + c;
      b.url = url(c, false);
    }
    b.dateTime = timeMs;
    long size = 32 + b.channel.length() + b.url.length();
    b.extra = extra(r, size, config.avgBidSizeBytes);
    return b;
  }

  // A channel's url depends on (seed, channel) only; see README.md of src/connectors/nexmark ("Urls").
  private String url(long channel, boolean hot) {
    EventRandom u = new EventRandom(EventRandom.mix64(urlKey + channel));
    long shape = u.next();
    StringBuilder s = new StringBuilder(80).append(URL_PREFIX);
    long bits = 0;
    int chunksLeft = 0;
    for (int seg = 0; seg < 3; ++seg) {
      int len = 3 + (int) ((shape >>> seg) & 1);
      for (int k = 0; k < len; ++k, --chunksLeft, bits >>>= 16) {
        if (chunksLeft == 0) {
          bits = u.next();
          chunksLeft = 4;
        }
        s.append(EventRandom.randomChar(bits, '_'));
      }
      s.append('/');
    }
    s.append(URL_SUFFIX);
    if (!hot && EventRandom.chunkToRange(shape >>> 16, 10) != 0) {
      s.append(CHANNEL_ID_PARAM).append(Integer.toUnsignedString(Integer.reverse((int) channel)));
    }
    return s.toString();
  }

  // Pads to avgSize on average: each byte of a draw (little-endian, eight per draw) becomes 'a' + byte*26/256.
  private static String extra(EventRandom r, long currentSize, int avgSize) {
    if (currentSize > avgSize) return "";
    long d = avgSize - currentSize;
    long delta = (2 * d + 5) / 10;
    int length = (int) (d - delta + (delta == 0 ? 0 : r.uniform(2 * delta)));
    char[] out = new char[length];
    long x = 0;
    for (int i = 0; i < length; ++i) {
      if ((i & 7) == 0) x = r.next();
      int b = (int) ((x >>> (8 * (i & 7))) & 0xFF);
      out[i] = (char) ('a' + ((b * 26) >>> 8));
    }
    return new String(out);
  }
}
