// AggregateFunction<IN, ACC, OUT>: an incremental aggregation with a mutable accumulator (Flink's
// AggregateFunction). Used by AggregatingState and, later, window aggregations.
//
// The accumulator is updated in place (add, merge), which avoids a copy per element. Functions are const:
// one instance may serve many keys and windows, so it must not keep per-key data in members.
// Thread-safety: an instance is called from one task thread at a time.
#pragma once

namespace sluice {

template <class IN, class ACC, class OUT>
class AggregateFunction {
 public:
  using input_type = IN;
  using accumulator_type = ACC;
  using output_type = OUT;

  virtual ~AggregateFunction() = default;
  // A new, empty accumulator (the aggregate of no elements).
  virtual ACC create_accumulator() const = 0;
  // Folds one element into the accumulator.
  virtual void add(const IN& value, ACC& accumulator) const = 0;
  // The result for an accumulator; does not change it.
  virtual OUT get_result(const ACC& accumulator) const = 0;
  // Folds `other` into `target` (merging windows, merging namespaces).
  virtual void merge(ACC& target, const ACC& other) const = 0;
};

}  // namespace sluice
