// RingQueue<T>: a FIFO over a power-of-two ring that grows by doubling and never shrinks, so a queue in
// steady state allocates nothing (std::deque allocates and frees a block every few elements).
// Supports insertion near the head for priority elements. T must be default-constructible and movable.
// Thread-safety: none; the owner locks.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace sluice::runtime {

template <class T>
class RingQueue {
 public:
  explicit RingQueue(size_t min_capacity = 8) {
    size_t capacity = 1;
    while (capacity < min_capacity) capacity <<= 1;
    slots_.resize(capacity);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return slots_.size(); }

  // The i-th element from the head (0 = front).
  T& operator[](size_t i) {
    assert(i < size_);
    return slots_[(head_ + i) & mask()];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return slots_[(head_ + i) & mask()];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & mask()] = std::move(value);
    ++size_;
  }

  void push_front(T value) {
    if (size_ == slots_.size()) grow();
    head_ = (head_ + slots_.size() - 1) & mask();
    slots_[head_] = std::move(value);
    ++size_;
  }

  // Inserts so that the new element ends up at index `pos` (0 = front); O(pos).
  void insert_near_front(size_t pos, T value) {
    assert(pos <= size_);
    push_front(std::move(value));
    for (size_t i = 0; i < pos; ++i) std::swap((*this)[i], (*this)[i + 1]);
  }

  // Removes and returns the element at index `pos`; O(pos) (rare: promoting a queued event).
  T erase_at(size_t pos) {
    assert(pos < size_);
    for (size_t i = pos; i > 0; --i) std::swap((*this)[i], (*this)[i - 1]);
    return pop_front();
  }

  T pop_front() {
    assert(size_ > 0);
    T value = std::move(slots_[head_]);
    slots_[head_] = T();
    head_ = (head_ + 1) & mask();
    --size_;
    return value;
  }

  void clear() {
    while (!empty()) pop_front();
  }

 private:
  size_t mask() const { return slots_.size() - 1; }

  void grow() {
    std::vector<T> bigger(slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice::runtime
