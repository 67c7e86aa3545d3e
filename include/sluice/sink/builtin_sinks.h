// Built-in sinks: print (stdout/stderr, Flink's "subtask> record" format), discarding (blackhole), and
// collect (records into a shared, thread-safe list; for tests and small results).
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sluice/sink/sink.h"

namespace sluice {

namespace detail {
template <class T>
concept Streamable = requires(std::ostream& os, const T& v) { os << v; };
}  // namespace detail

// Writes one line per record. The formatter defaults to operator<< when T has one; otherwise pass one.
// With parallelism > 1 each line is prefixed "<subtask+1>> " as Flink's PrintSink does.
template <class T>
class PrintSink final : public Sink<T> {
 public:
  using Formatter = std::function<std::string(const T&)>;
  explicit PrintSink(Formatter formatter = default_formatter(), bool to_stderr = false)
      : formatter_(std::move(formatter)), to_stderr_(to_stderr) {}

  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext& ctx) const override {
    std::string prefix = ctx.parallelism() > 1 ? std::to_string(ctx.subtask_index() + 1) + "> " : "";
    return std::make_unique<Writer>(formatter_, std::move(prefix), to_stderr_ ? stderr : stdout);
  }

 private:
  static Formatter default_formatter() {
    if constexpr (detail::Streamable<T>) {
      return [](const T& v) {
        std::ostringstream os;
        os << v;
        return os.str();
      };
    } else {
      return nullptr;
    }
  }
  class Writer final : public SinkWriter<T> {
   public:
    Writer(Formatter f, std::string prefix, FILE* out) : f_(std::move(f)), prefix_(std::move(prefix)), out_(out) {
      if (!f_) throw std::invalid_argument("PrintSink: the record type has no operator<<; pass a formatter");
    }
    void write(T&& record) override {
      line_ = prefix_;
      line_ += f_(record);
      line_ += '\n';
      std::fwrite(line_.data(), 1, line_.size(), out_);  // one call per line: lines of subtasks don't interleave
    }
    void flush(bool) override { std::fflush(out_); }
    void close() override { std::fflush(out_); }

   private:
    Formatter f_;
    std::string prefix_;
    FILE* out_;
    std::string line_;
  };
  Formatter formatter_;
  bool to_stderr_;
};

// Drops every record (Flink's DiscardingSink; Nexmark's blackhole).
template <class T>
class DiscardingSink final : public Sink<T> {
 public:
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext&) const override { return std::make_unique<Writer>(); }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    void write(T&&) override {}
    void flush(bool) override {}
  };
};

// Records collected from every subtask, in arrival order per subtask. Thread-safe.
template <class T>
class CollectedRecords {
 public:
  void add(std::vector<T>&& batch) {
    std::lock_guard lock(mu_);
    for (auto& r : batch) records_.push_back(std::move(r));
  }
  std::vector<T> snapshot() const {
    std::lock_guard lock(mu_);
    return records_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return records_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<T> records_;
};

// Appends every record to a CollectedRecords (batched per subtask, so the lock is not per record).
template <class T>
class CollectSink final : public Sink<T> {
 public:
  explicit CollectSink(std::shared_ptr<CollectedRecords<T>> target) : target_(std::move(target)) {}
  std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext&) const override {
    return std::make_unique<Writer>(target_);
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    explicit Writer(std::shared_ptr<CollectedRecords<T>> t) : target_(std::move(t)) {}
    void write(T&& record) override {
      batch_.push_back(std::move(record));
      if (batch_.size() >= 1024) flush(false);
    }
    void flush(bool) override {
      target_->add(std::move(batch_));
      batch_.clear();
    }
    void close() override { flush(false); }

   private:
    std::shared_ptr<CollectedRecords<T>> target_;
    std::vector<T> batch_;
  };
  std::shared_ptr<CollectedRecords<T>> target_;
};

}  // namespace sluice
