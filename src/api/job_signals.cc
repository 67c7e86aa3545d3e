#include "job_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

namespace sluice::api {

struct JobSignalScope::Entry {
  bool armed = true;              // cleared by set_cancel({}): nothing to cancel any more
  std::function<void()> cancel;   // set once the job is submitted
  int received = 0;
};

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};

// The process-wide part: the pipe the handler writes to, the watcher thread and the live scopes.
struct SignalState {
  std::mutex mu;
  std::list<std::shared_ptr<JobSignalScope::Entry>> scopes;
  bool handled[2] = {false, false};       // our handler is installed for kSignals[i]
  struct sigaction previous[2] = {};      // what was there before it
  int received = 0;                       // the first signal since the scopes came; a second one exits
  int pipe_write = -1;
};

SignalState& state() {
  static SignalState* s = new SignalState();  // never destroyed: the watcher thread and handlers may outlive main()
  return *s;
}

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  // A full pipe (thousands of signals unread) drops this one: the watcher has enough to act on already.
  [[maybe_unused]] const ssize_t n = ::write(state().pipe_write, &b, 1);
  errno = saved;
}

void watch(int pipe_read) {
  for (;;) {
    unsigned char b = 0;
    const ssize_t n = ::read(pipe_read, &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;  // cannot happen: the write end is never closed
    const int sig = b;
    SignalState& s = state();
    std::lock_guard lock(s.mu);
    bool any_armed = false;
    for (const auto& e : s.scopes) any_armed = any_armed || e->armed;
    if (s.received != 0 || !any_armed) ::_exit(128 + sig);  // a second signal, or no job to cancel
    s.received = sig;
    // Under the lock, so a job client cannot go away meanwhile (set_cancel({}) waits for it).
    for (const auto& e : s.scopes) {
      if (!e->armed) continue;
      e->received = sig;
      if (e->cancel) e->cancel();
    }
  }
}

// Called with s.mu held, on the first scope.
void install(SignalState& s) {
  if (s.pipe_write < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no handler then: the signals keep their default action
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    s.pipe_write = fds[1];
    std::thread(watch, fds[0]).detach();
  }
  for (int i = 0; i < 2; ++i) {
    struct sigaction ours = {};
    ours.sa_handler = on_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    if (::sigaction(kSignals[i], &ours, &s.previous[i]) == 0) s.handled[i] = true;
  }
}

// Called with s.mu held, when the last scope goes.
void uninstall(SignalState& s) {
  for (int i = 0; i < 2; ++i) {
    if (s.handled[i]) ::sigaction(kSignals[i], &s.previous[i], nullptr);
    s.handled[i] = false;
  }
  s.received = 0;
}

}  // namespace

JobSignalScope::JobSignalScope() : entry_(std::make_shared<Entry>()) {
  SignalState& s = state();
  std::lock_guard lock(s.mu);
  if (s.scopes.empty()) install(s);
  s.scopes.push_back(entry_);
}

JobSignalScope::~JobSignalScope() {
  SignalState& s = state();
  std::lock_guard lock(s.mu);
  s.scopes.remove(entry_);
  if (s.scopes.empty()) uninstall(s);
}

void JobSignalScope::set_cancel(std::function<void()> cancel) {
  SignalState& s = state();
  std::lock_guard lock(s.mu);
  entry_->armed = static_cast<bool>(cancel);
  entry_->cancel = std::move(cancel);
  if (entry_->cancel && entry_->received != 0) entry_->cancel();
}

int JobSignalScope::received() const {
  std::lock_guard lock(state().mu);
  return entry_->received;
}

}  // namespace sluice::api
