// Window functions: what the window operator computes from a window's contents when its trigger fires (Flink's
// ProcessWindowFunction, and the internal wrappers behind reduce / aggregate / process).
//
// - process(F), F derives from ProcessWindowFunction<IN, OUT, K, W>: the window keeps every element (ListState)
//   and F gets them all, with a Context giving the window, the time and side outputs.
// - reduce(R): R is (const T&, const T&) -> T; the window keeps one reduced value (ReducingState), emitted as is.
// - aggregate(A): A derives from AggregateFunction<IN, ACC, R>; the window keeps one accumulator
//   (AggregatingState) and emits get_result.
// - reduce(R, F) / aggregate(A, F): incremental as above, and F (a ProcessWindowFunction of the reduced value /
//   the aggregate result) gets the single value with the window's Context.
//
// The contents policies below (WindowContents concept) are the operator's plumbing: the state descriptor of the
// window contents ("window-contents", namespaced by the window), how an element is added, and how a firing
// emits. A firing of an empty window (purged, or never filled) emits nothing, as in Flink.
// Thread-safety: the task thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/functions/functions.h"
#include "sluice/functions/output.h"
#include "sluice/operators/internal_timer_service.h"
#include "sluice/state/aggregate_function.h"
#include "sluice/state/internal_kv_state.h"
#include "sluice/state/state_descriptor.h"

namespace sluice {

// What a ProcessWindowFunction sees of the firing window. Valid during process() / clear().
template <class K, class W>
class ProcessWindowContext {
 public:
  ProcessWindowContext(const SideOutputs* side, const KeyedStateBackend<K>* backend,
                       const InternalTimerService<K, W>* timers)
      : side_(side), backend_(backend), timers_(timers) {}
  const K& current_key() const { return backend_->current_key(); }
  const W& window() const { return *window_; }
  int64_t current_watermark() const { return timers_->current_watermark(); }
  int64_t current_processing_time() const { return timers_->current_processing_time(); }
  // Emits `value` to the side output `tag` (dropped if nobody reads it).
  template <class X>
  void output(const OutputTag<X>& tag, X value) const {
    side_->emit(tag.id(), std::move(value));
  }
  void set_window(const W* w) { window_ = w; }

 private:
  const SideOutputs* side_;
  const KeyedStateBackend<K>* backend_;
  const InternalTimerService<K, W>* timers_;
  const W* window_ = nullptr;
};

template <class IN, class OUT, class K, class W>
class ProcessWindowFunction : public RichFunction {
 public:
  using input_type = IN;
  using output_type = OUT;
  using key_type = K;
  using window_type = W;
  using Context = ProcessWindowContext<K, W>;
  // The window fired: `elements` are its contents (all elements; or the single reduced / aggregated value).
  virtual void process(const K& key, Context& ctx, const std::vector<IN>& elements, Collector<OUT>& out) = 0;
  // The window is dropped (after its allowed lateness). Default: nothing.
  virtual void clear(Context& /*ctx*/) {}
};

namespace detail {
// Calls open/close of rich functions held by a contents policy.
template <class F>
void open_window_fn(F& fn, RuntimeContext& ctx) {
  if constexpr (std::is_base_of_v<RichFunction, F>) fn.open(ctx);
}
template <class F>
void close_window_fn(F& fn) {
  if constexpr (std::is_base_of_v<RichFunction, F>) fn.close();
}
// No post-processing: the incremental result is the output.
struct PassThroughWindowFunction {};

// Emits one incremental result: as is, or through the ProcessWindowFunction F.
template <class V, class OUT, class K, class W, class F>
void emit_single(F& fn, V&& value, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
  if constexpr (std::is_same_v<F, PassThroughWindowFunction>) {
    out.collect(std::forward<V>(value));
  } else {
    std::vector<std::decay_t<V>> one;
    one.push_back(std::forward<V>(value));
    fn.process(ctx.current_key(), ctx, one, out);
  }
}
template <class F, class K, class W>
void clear_window_fn(F& fn, ProcessWindowContext<K, W>& ctx) {
  if constexpr (!std::is_same_v<F, PassThroughWindowFunction>) fn.clear(ctx);
}
}  // namespace detail

// All elements in ListState; F: ProcessWindowFunction<IN, OUT, K, W>.
template <class IN, class OUT, class F>
class ListWindowContents {
 public:
  using descriptor_type = ListStateDescriptor<IN>;
  using input_type = IN;
  using output_type = OUT;
  explicit ListWindowContents(F fn) : fn_(std::move(fn)) {}
  descriptor_type descriptor() const { return descriptor_type("window-contents"); }
  template <class S>
  void add(S& state, IN value) {
    state.add(std::move(value));
  }
  template <class S, class K, class W>
  void emit(S& state, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
    std::vector<IN> elements = state.get();
    if (elements.empty()) return;
    fn_.process(ctx.current_key(), ctx, elements, out);
  }
  template <class K, class W>
  void clear(ProcessWindowContext<K, W>& ctx) {
    fn_.clear(ctx);
  }
  void open(RuntimeContext& ctx) { detail::open_window_fn(fn_, ctx); }
  void close() { detail::close_window_fn(fn_); }

 private:
  F fn_;
};

// One reduced T in ReducingState; R: (const T&, const T&) -> T; F: PassThrough or ProcessWindowFunction<T, OUT, K, W>.
template <class T, class OUT, class R, class F>
class ReducingWindowContents {
 public:
  using descriptor_type = ReducingStateDescriptor<T>;
  using input_type = T;
  using output_type = OUT;
  ReducingWindowContents(R reducer, F fn) : reducer_(std::move(reducer)), fn_(std::move(fn)) {}
  descriptor_type descriptor() const { return descriptor_type("window-contents", reducer_); }
  template <class S>
  void add(S& state, T value) {
    state.add(std::move(value));
  }
  template <class S, class K, class W>
  void emit(S& state, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
    std::optional<T> v = state.get();
    if (!v) return;
    detail::emit_single(fn_, std::move(*v), ctx, out);
  }
  template <class K, class W>
  void clear(ProcessWindowContext<K, W>& ctx) {
    detail::clear_window_fn(fn_, ctx);
  }
  void open(RuntimeContext& ctx) { detail::open_window_fn(fn_, ctx); }
  void close() { detail::close_window_fn(fn_); }

 private:
  R reducer_;
  F fn_;
};

// One accumulator in AggregatingState; A: AggregateFunction<IN, ACC, RES>; F: PassThrough or
// ProcessWindowFunction<RES, OUT, K, W>.
template <class IN, class ACC, class RES, class OUT, class F>
class AggregatingWindowContents {
 public:
  using descriptor_type = AggregatingStateDescriptor<IN, ACC, RES>;
  using input_type = IN;
  using output_type = OUT;
  AggregatingWindowContents(std::shared_ptr<const AggregateFunction<IN, ACC, RES>> agg, F fn)
      : agg_(std::move(agg)), fn_(std::move(fn)) {}
  descriptor_type descriptor() const { return descriptor_type("window-contents", agg_); }
  template <class S>
  void add(S& state, const IN& value) {
    state.add(value);
  }
  template <class S, class K, class W>
  void emit(S& state, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
    std::optional<RES> r = state.get();
    if (!r) return;
    detail::emit_single(fn_, std::move(*r), ctx, out);
  }
  template <class K, class W>
  void clear(ProcessWindowContext<K, W>& ctx) {
    detail::clear_window_fn(fn_, ctx);
  }
  void open(RuntimeContext& ctx) { detail::open_window_fn(fn_, ctx); }
  void close() { detail::close_window_fn(fn_); }

 private:
  std::shared_ptr<const AggregateFunction<IN, ACC, RES>> agg_;
  F fn_;
};

}  // namespace sluice
