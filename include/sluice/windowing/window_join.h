// Window joins and co-groups of two streams (Flink's JoinedStreams / CoGroupedStreams):
//
//   auto rows = persons.join(auctions)
//                   .where([](const Person& p) { return p.id; })
//                   .equal_to([](const Auction& a) { return a.seller; })
//                   .window(TumblingEventTimeWindows::of(10'000))
//                   .apply([](const Person& p, const Auction& a) { return Row{p.id, a.id}; });
//   auto groups = persons.co_group(auctions).where(...).equal_to(...).window(...)
//                     .apply(F);  // F: (const std::vector<A>&, const std::vector<B>&, Collector<OUT>&)
//
// Built as Flink builds them, from the one-input window machinery (no operator of its own): each input is mapped
// to a TaggedUnion<A, B> (the other side empty), the two are unioned, keyed by the side's key selector, windowed
// with the ordinary WindowOperator and a ProcessWindowFunction that splits the window's elements by tag and hands
// both lists to the co-group function. A join is the co-group that emits the cross product per key and window:
// for every window in which a key has elements on both sides, `fn(a, b)` for every pair (a inner join; a key with
// one side empty emits nothing). Any window assigner works (an element of a sliding window joins once per window it
// belongs to, as in Flink). Elements of one side keep their arrival order within a window.
//
// Join and co-group functions are values called directly (no virtual dispatch): a lambda or a class with
// operator(), or a class deriving from JoinFunction / FlatJoinFunction / CoGroupFunction (called through their
// `join` / `co_group`, non-virtually when the class is final). Accepted shapes:
//   join:     (const A&, const B&) -> OUT          or  (const A&, const B&, Collector<OUT>&) -> void  (flat join;
//             give OUT explicitly: apply<OUT>(fn), unless fn derives from FlatJoinFunction<A, B, OUT>)
//   co_group: (const std::vector<A>&, const std::vector<B>&, Collector<OUT>&) -> void  (apply<OUT>(fn), unless
//             fn derives from CoGroupFunction<A, B, OUT>)
// Keys: both selectors must return the same type K (hashable for key_by). State: every element is kept in the
// window's ListState until the window fires (the contents of a process() window), checkpointed like any keyed
// state. Lateness: allowed lateness 0 (Flink's default for joins): elements of closed windows are counted in
// numLateRecordsDropped. Errors: invalid assigners throw std::invalid_argument while the program is built.
// Thread-safety: build a program from one thread.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/windowing/windowed_stream.h"

namespace sluice {

// One element of either input of a window join: exactly one of `first` and `second` is set.
template <class A, class B>
struct TaggedUnion {
  std::optional<A> first;
  std::optional<B> second;

  bool is_first() const { return first.has_value(); }
  SLUICE_FIELDS(TaggedUnion, first, second)
};

// Optional base classes, for readable user functions (Flink's JoinFunction, FlatJoinFunction, CoGroupFunction).
template <class A, class B, class OUT>
class JoinFunction {
 public:
  using output_type = OUT;
  virtual ~JoinFunction() = default;
  virtual OUT join(const A& first, const B& second) = 0;
};
template <class A, class B, class OUT>
class FlatJoinFunction {
 public:
  using output_type = OUT;
  virtual ~FlatJoinFunction() = default;
  virtual void join(const A& first, const B& second, Collector<OUT>& out) = 0;
};
template <class A, class B, class OUT>
class CoGroupFunction {
 public:
  using output_type = OUT;
  virtual ~CoGroupFunction() = default;
  // One call per key and window with elements on at least one side.
  virtual void co_group(const std::vector<A>& first, const std::vector<B>& second, Collector<OUT>& out) = 0;
};

namespace detail {

// OUT of a join function: given explicitly, else the class's output_type, else the return type of fn(a, b).
template <class OUT, class A, class B, class F>
struct JoinOutput {
  using type = OUT;
};
template <class A, class B, class F>
  requires requires { typename F::output_type; }
struct JoinOutput<void, A, B, F> {
  using type = typename F::output_type;
};
template <class A, class B, class F>
  requires(!requires { typename F::output_type; } && std::is_invocable_v<F&, const A&, const B&>)
struct JoinOutput<void, A, B, F> {
  using type = std::decay_t<std::invoke_result_t<F&, const A&, const B&>>;
};

// Calls a join function on one pair, emitting its result(s).
template <class A, class B, class OUT, class F>
void call_join(F& fn, const A& a, const B& b, Collector<OUT>& out) {
  if constexpr (std::is_base_of_v<FlatJoinFunction<A, B, OUT>, F>) {
    fn.join(a, b, out);
  } else if constexpr (std::is_base_of_v<JoinFunction<A, B, OUT>, F>) {
    out.collect(fn.join(a, b));
  } else if constexpr (std::is_invocable_v<F&, const A&, const B&, Collector<OUT>&>) {
    fn(a, b, out);
  } else {
    static_assert(std::is_invocable_v<F&, const A&, const B&>,
                  "join apply(fn): fn must take (const A&, const B&) or (const A&, const B&, Collector<OUT>&)");
    out.collect(fn(a, b));
  }
}

// The cross product per key and window, as a co-group function.
template <class A, class B, class OUT, class F>
struct CrossProduct {
  F fn;
  void operator()(const std::vector<A>& first, const std::vector<B>& second, Collector<OUT>& out) {
    for (const A& a : first) {
      for (const B& b : second) call_join<A, B, OUT>(fn, a, b, out);
    }
  }
};

// The window function behind join / co_group: splits the window's tagged elements by side and calls the co-group
// function (skipping it when both sides are empty, which a fired window never is). The two lists are members,
// reused across firings.
template <class K, class W, class A, class B, class OUT, class F>
class CoGroupWindowFunction final : public ProcessWindowFunction<TaggedUnion<A, B>, OUT, K, W> {
 public:
  using Base = ProcessWindowFunction<TaggedUnion<A, B>, OUT, K, W>;
  explicit CoGroupWindowFunction(F fn) : fn_(std::move(fn)) {}
  CoGroupWindowFunction(const CoGroupWindowFunction& o) : Base(o), fn_(o.fn_) {}

  void process(const K&, typename Base::Context&, const std::vector<TaggedUnion<A, B>>& elements,
               Collector<OUT>& out) override {
    first_.clear();
    second_.clear();
    for (const auto& e : elements) {
      if (e.first) first_.push_back(*e.first);
      else if (e.second) second_.push_back(*e.second);
    }
    if constexpr (std::is_base_of_v<CoGroupFunction<A, B, OUT>, F>) {
      fn_.co_group(first_, second_, out);
    } else {
      fn_(first_, second_, out);
    }
  }

 private:
  F fn_;
  std::vector<A> first_;
  std::vector<B> second_;
};

template <class A, class B>
struct KeyOfTagged {
  template <class KA, class KB>
  struct Selector {
    KA ka;
    KB kb;
    auto operator()(const TaggedUnion<A, B>& e) const { return e.first ? ka(*e.first) : kb(*e.second); }
  };
};

}  // namespace detail

// The last step: the window is set; apply() builds the job and returns the result stream.
template <bool kIsJoin, class A, class B, class KA, class KB, class Assigner>
class WindowedTwoInputStream {
 public:
  using K = std::decay_t<std::invoke_result_t<KA&, const A&>>;
  using W = typename Assigner::window_type;

  WindowedTwoInputStream(DataStream<A> a, DataStream<B> b, KA ka, KB kb, Assigner assigner)
      : a_(std::move(a)), b_(std::move(b)), ka_(std::move(ka)), kb_(std::move(kb)), assigner_(std::move(assigner)) {}

  // join: fn on every pair with equal keys in the same window. co_group: fn on both lists per key and window.
  template <class OUT = void, class F>
  auto apply(F fn) const {
    if constexpr (kIsJoin) {
      using O = typename detail::JoinOutput<OUT, A, B, F>::type;
      static_assert(!std::is_void_v<O>, "join apply(fn): give the output type, apply<OUT>(fn), for a flat join lambda");
      return build<O>(detail::CrossProduct<A, B, O, F>{std::move(fn)});
    } else {
      using O = typename detail::JoinOutput<OUT, A, B, F>::type;
      static_assert(!std::is_void_v<O>, "co_group apply(fn): give the output type, apply<OUT>(fn)");
      return build<O>(std::move(fn));
    }
  }

 private:
  template <class OUT, class G>
  DataStream<OUT> build(G group_fn) const {
    using U = TaggedUnion<A, B>;
    // The tagging maps are stateless; when both inputs have uids they get uids derived from them, so a program
    // that sets uids on its operators has one on every operator (unless the same pair is joined twice).
    const std::string tag_uid = uids_of(a_) + "," + uids_of(b_);
    DataStream<U> left = a_.map([](A&& x) { return U{std::optional<A>(std::move(x)), std::nullopt}; });
    left.name("join-first-tag");
    set_derived_uid(left, tag_uid, "join-first-tag");
    DataStream<U> right = b_.map([](B&& x) { return U{std::nullopt, std::optional<B>(std::move(x))}; });
    right.name("join-second-tag");
    set_derived_uid(right, tag_uid, "join-second-tag");
    using Sel = typename detail::KeyOfTagged<A, B>::template Selector<KA, KB>;
    return left.union_(right)
        .key_by(Sel{ka_, kb_})
        .window(assigner_)
        .process(detail::CoGroupWindowFunction<K, W, A, B, OUT, G>(std::move(group_fn)));
  }

  // "u1+u2" of the nodes feeding `in`; "" when one of them has no uid.
  template <class T>
  static std::string uids_of(const DataStream<T>& in) {
    std::string out;
    for (const auto& i : in.inputs()) {
      const std::string& u = in.graph()->node(i.node_id).uid;
      if (u.empty()) return "";
      out += (out.empty() ? "" : "+") + u;
    }
    return out;
  }
  // "<inputs' uids>/<suffix>" when both inputs had uids and no node has that uid yet.
  template <class T>
  static void set_derived_uid(DataStream<T>& tag, const std::string& inputs, const char* suffix) {
    if (inputs.front() == ',' || inputs.back() == ',') return;
    const std::string uid = inputs + "/" + suffix;
    for (const StreamNode& n : tag.graph()->nodes) {
      if (n.uid == uid) return;
    }
    tag.uid(uid);
  }

  DataStream<A> a_;
  DataStream<B> b_;
  KA ka_;
  KB kb_;
  Assigner assigner_;
};

template <bool kIsJoin, class A, class B, class KA, class KB>
class KeyedTwoInputStreams {
 public:
  KeyedTwoInputStreams(DataStream<A> a, DataStream<B> b, KA ka, KB kb)
      : a_(std::move(a)), b_(std::move(b)), ka_(std::move(ka)), kb_(std::move(kb)) {}
  template <class Assigner>
  auto window(Assigner assigner) const {
    return WindowedTwoInputStream<kIsJoin, A, B, KA, KB, Assigner>(a_, b_, ka_, kb_, std::move(assigner));
  }

 private:
  DataStream<A> a_;
  DataStream<B> b_;
  KA ka_;
  KB kb_;
};

template <bool kIsJoin, class A, class B, class KA>
class WhereTwoInputStreams {
 public:
  WhereTwoInputStreams(DataStream<A> a, DataStream<B> b, KA ka) : a_(std::move(a)), b_(std::move(b)), ka_(std::move(ka)) {}
  // The second input's key; it must return the same type as the first's.
  template <class KB>
  auto equal_to(KB kb) const {
    using KeyA = std::decay_t<std::invoke_result_t<KA&, const A&>>;
    using KeyB = std::decay_t<std::invoke_result_t<KB&, const B&>>;
    static_assert(std::is_same_v<KeyA, KeyB>, "equal_to: both key selectors must return the same key type");
    return KeyedTwoInputStreams<kIsJoin, A, B, KA, KB>(a_, b_, ka_, std::move(kb));
  }

 private:
  DataStream<A> a_;
  DataStream<B> b_;
  KA ka_;
};

// a.join(b) / a.co_group(b): then .where(key of A).equal_to(key of B).window(assigner).apply(fn).
template <bool kIsJoin, class A, class B>
class TwoInputStreams {
 public:
  TwoInputStreams(DataStream<A> a, DataStream<B> b) : a_(std::move(a)), b_(std::move(b)) {}
  template <class KA>
  auto where(KA ka) const {
    return WhereTwoInputStreams<kIsJoin, A, B, KA>(a_, b_, std::move(ka));
  }

 private:
  DataStream<A> a_;
  DataStream<B> b_;
};

template <class A, class B>
using JoinedStreams = TwoInputStreams<true, A, B>;
template <class A, class B>
using CoGroupedStreams = TwoInputStreams<false, A, B>;

template <class T>
template <class U>
JoinedStreams<T, U> DataStream<T>::join(const DataStream<U>& other) const {
  return JoinedStreams<T, U>(*this, other);
}
template <class T>
template <class U>
CoGroupedStreams<T, U> DataStream<T>::co_group(const DataStream<U>& other) const {
  return CoGroupedStreams<T, U>(*this, other);
}

}  // namespace sluice
