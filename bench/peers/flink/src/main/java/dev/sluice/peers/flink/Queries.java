package dev.sluice.peers.flink;

import dev.sluice.peers.flink.Rows.AuctionUpdate;
import dev.sluice.peers.flink.Rows.HighestBids;
import dev.sluice.peers.flink.Rows.Hottest;
import dev.sluice.peers.flink.Rows.Q1Row;
import dev.sluice.peers.flink.Rows.Q2Row;
import dev.sluice.peers.flink.Rows.Q5Row;
import dev.sluice.peers.flink.Rows.Q7Row;
import dev.sluice.peers.flink.Rows.Q8Row;
import dev.sluice.peers.nexmark.Bid;
import dev.sluice.peers.nexmark.Event;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.CoGroupFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * The jobs Sluice runs, written as a Flink user writes them with the DataStream API: the demo
 * (examples/per_auction) and Nexmark q0, q1, q2, q5, q7, q8 (docs/nexmark.md; Sluice's examples/nexmark/q*.cc).
 * Same operators, keys, windows and state as the Sluice versions, so the work compared is the same.
 */
public final class Queries {
  private Queries() {}

  static final long WINDOW_MS = 10_000;
  static final long SLIDE_MS = 2_000;
  static final long Q7_SHARDS = 64;

  static DataStream<Bid> bids(DataStream<Event> events) {
    return events.filter(Event::isBid).name("only-bids").map(e -> e.bid).returns(Bid.class).name("to-bid");
  }

  static long windowStart(long t, long size) {
    return t - Math.floorMod(t, size);
  }

  // --- the demo: per auction a running count, sum and max of the bid prices, one update per bid ---------------

  public static DataStream<AuctionUpdate> demo(DataStream<Event> events) {
    return bids(events).keyBy(b -> b.auction).process(new CountSumMax()).name("per-auction").uid("per-auction");
  }

  static final class CountSumMax extends KeyedProcessFunction<Long, Bid, AuctionUpdate> {
    private transient ValueState<AuctionUpdate> state;

    @Override
    public void open(OpenContext ctx) {
      state = getRuntimeContext().getState(new ValueStateDescriptor<>("per-auction", AuctionUpdate.class));
    }

    @Override
    public void processElement(Bid bid, Context ctx, Collector<AuctionUpdate> out) throws Exception {
      AuctionUpdate u = state.value();
      if (u == null) {
        u = new AuctionUpdate();
        u.auction = bid.auction;
      }
      u.count += 1;
      u.sum += bid.price;
      u.max = Math.max(u.max, bid.price);
      state.update(u);
      out.collect(u);
    }
  }

  // --- q0 - q2: stateless ---------------------------------------------------------------------------------

  public static DataStream<Bid> q0(DataStream<Event> events) {
    return bids(events);
  }

  public static DataStream<Q1Row> q1(DataStream<Event> events) {
    return bids(events)
        .map(b -> {
          Q1Row r = new Q1Row();
          r.auction = b.auction;
          r.bidder = b.bidder;
          r.priceMilli = b.price * 908; // 0.908 * price in thousandths of a cent: exact
          r.dateTime = b.dateTime;
          r.extra = b.extra;
          return r;
        })
        .returns(Q1Row.class)
        .name("q1-currency");
  }

  public static DataStream<Q2Row> q2(DataStream<Event> events) {
    return events
        .filter(e -> e.isBid() && e.bid.auction % 123 == 0)
        .name("q2-select")
        .map(e -> {
          Q2Row r = new Q2Row();
          r.auction = e.bid.auction;
          r.price = e.bid.price;
          return r;
        })
        .returns(Q2Row.class)
        .name("q2-project");
  }

  // --- q5: hot items, sliding 10 s windows every 2 s --------------------------------------------------------

  public static DataStream<Q5Row> q5(DataStream<Event> events) {
    DataStream<Q5Row> counts = events
        .filter(Event::isBid)
        .name("q5-bids")
        .map(e -> e.bid.auction)
        .returns(Long.class)
        .name("q5-bid-auctions")
        .keyBy(a -> a)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS), Duration.ofMillis(SLIDE_MS)))
        .aggregate(new CountBids(), new WithWindow())
        .name("q5-count-per-window");
    // A count of window [s, s + 10 s) carries the timestamp s + 10 s - 1: all counts of one window fall in the
    // same 2 s tumbling window, keyed by the window start.
    return counts
        .keyBy(r -> r.windowStartMs)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(SLIDE_MS)))
        .aggregate(new KeepHottest())
        .name("q5-max-per-window")
        .flatMap((List<Q5Row> rows, Collector<Q5Row> out) -> rows.forEach(out::collect))
        .returns(Q5Row.class)
        .name("q5-rows");
  }

  static final class CountBids implements AggregateFunction<Long, Long, Long> {
    @Override
    public Long createAccumulator() {
      return 0L;
    }

    @Override
    public Long add(Long value, Long acc) {
      return acc + 1;
    }

    @Override
    public Long getResult(Long acc) {
      return acc;
    }

    @Override
    public Long merge(Long a, Long b) {
      return a + b;
    }
  }

  static final class WithWindow extends ProcessWindowFunction<Long, Q5Row, Long, TimeWindow> {
    @Override
    public void process(Long auction, Context ctx, Iterable<Long> counts, Collector<Q5Row> out) {
      Q5Row r = new Q5Row();
      r.windowStartMs = ctx.window().getStart();
      r.windowEndMs = ctx.window().getEnd();
      r.auction = auction;
      r.num = counts.iterator().next();
      out.collect(r);
    }
  }

  static final class KeepHottest implements AggregateFunction<Q5Row, Hottest, List<Q5Row>> {
    @Override
    public Hottest createAccumulator() {
      return new Hottest();
    }

    @Override
    public Hottest add(Q5Row row, Hottest acc) {
      if (row.num > acc.num) {
        acc.num = row.num;
        acc.rows.clear();
      }
      if (row.num == acc.num) acc.rows.add(row);
      return acc;
    }

    @Override
    public List<Q5Row> getResult(Hottest acc) {
      return acc.rows;
    }

    @Override
    public Hottest merge(Hottest a, Hottest b) {
      for (Q5Row r : b.rows) add(r, a);
      return a;
    }
  }

  // --- q7: the highest bids per tumbling 10 s window --------------------------------------------------------

  public static DataStream<Q7Row> q7(DataStream<Event> events) {
    DataStream<Q7Row> bids = bids(events)
        .map(b -> {
          Q7Row r = new Q7Row();
          r.auction = b.auction;
          r.bidder = b.bidder;
          r.price = b.price;
          r.dateTime = b.dateTime;
          r.extra = b.extra;
          return r;
        })
        .returns(Q7Row.class)
        .name("q7-bids");
    // Two steps, as Sluice's q7: the highest bids per shard of auctions and window, then per window.
    return bids
        .keyBy(b -> b.auction % Q7_SHARDS)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
        .aggregate(new AddBid())
        .name("q7-max-per-shard")
        .keyBy(h -> h.windowStartMs)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
        .aggregate(new MergeHighest())
        .name("q7-max-per-window")
        .flatMap((HighestBids h, Collector<Q7Row> out) -> h.bids.forEach(out::collect))
        .returns(Q7Row.class)
        .name("q7-rows");
  }

  static final class AddBid implements AggregateFunction<Q7Row, HighestBids, HighestBids> {
    @Override
    public HighestBids createAccumulator() {
      return new HighestBids();
    }

    @Override
    public HighestBids add(Q7Row bid, HighestBids acc) {
      if (bid.price < acc.price) return acc;
      if (bid.price > acc.price) {
        acc.price = bid.price;
        acc.windowStartMs = windowStart(bid.dateTime, WINDOW_MS);
        acc.bids.clear();
      }
      acc.bids.add(bid);
      return acc;
    }

    @Override
    public HighestBids getResult(HighestBids acc) {
      return acc;
    }

    @Override
    public HighestBids merge(HighestBids a, HighestBids b) {
      for (Q7Row r : b.bids) add(r, a);
      return a;
    }
  }

  static final class MergeHighest implements AggregateFunction<HighestBids, HighestBids, HighestBids> {
    @Override
    public HighestBids createAccumulator() {
      return new HighestBids();
    }

    @Override
    public HighestBids add(HighestBids in, HighestBids acc) {
      return merge(acc, in);
    }

    @Override
    public HighestBids getResult(HighestBids acc) {
      return acc;
    }

    @Override
    public HighestBids merge(HighestBids acc, HighestBids in) {
      if (in.price < acc.price) return acc;
      if (in.price > acc.price) {
        acc.price = in.price;
        acc.windowStartMs = in.windowStartMs;
        acc.bids.clear();
      }
      acc.bids.addAll(in.bids);
      return acc;
    }
  }

  // --- q8: people who opened an auction in the 10 s window they registered in -------------------------------

  public static DataStream<Q8Row> q8(DataStream<Event> events) {
    // Only the columns the join needs go into the window state (as Sluice's q8 does).
    DataStream<NewPerson> persons = events
        .filter(Event::isPerson)
        .name("q8-person-events")
        .map(e -> {
          NewPerson p = new NewPerson();
          p.id = e.person.id;
          p.name = e.person.name;
          p.dateTime = e.person.dateTime;
          return p;
        })
        .returns(NewPerson.class)
        .name("q8-persons");
    DataStream<Long> sellers =
        events.filter(Event::isAuction).name("q8-auction-events").map(e -> e.auction.seller).returns(Long.class)
            .name("q8-auctions");
    return persons
        .coGroup(sellers)
        .where(p -> p.id)
        .equalTo(seller -> seller)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
        .apply(new PersonsWithAuctions())
        .returns(Q8Row.class)
        .name("q8-new-users");
  }

  /** A registered person, the columns q8 keeps. */
  public static final class NewPerson {
    public long id;
    public String name;
    public long dateTime;

    public NewPerson() {}
  }

  static final class PersonsWithAuctions implements CoGroupFunction<NewPerson, Long, Q8Row> {
    @Override
    public void coGroup(Iterable<NewPerson> persons, Iterable<Long> sellers, Collector<Q8Row> out) {
      if (!sellers.iterator().hasNext()) return;
      for (NewPerson p : persons) {
        Q8Row r = new Q8Row();
        r.personId = p.id;
        r.name = p.name;
        r.windowStartMs = windowStart(p.dateTime, WINDOW_MS);
        out.collect(r);
      }
    }
  }
}
