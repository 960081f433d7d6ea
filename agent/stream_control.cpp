// The model stream in flight and its controls.
#include "agent/stream_control.h"

#include "agent/rule_watch.h"

namespace lousho::agent {

StreamControl::StreamControl(std::mutex& mu, const RuleWatch& rules) : mu_(mu), rules_(rules) {}

const rules::RuleSet* StreamControl::rules() const { return rules_.set(); }

void StreamControl::Interrupt(StreamInterrupt interrupt) {
  std::shared_ptr<CancelSource> source;
  const CancelCause cause = interrupt.cause;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stream_ || stream_->cancelled()) return;
    source = stream_;
    interrupt_ = std::move(interrupt);
  }
  source->Cancel(cause);  // outside the lock: callbacks never run under it
}

void StreamControl::SetAutoRetry(bool enabled) {
  std::lock_guard<std::mutex> lock(mu_);
  auto_retry_ = enabled;
}

bool StreamControl::auto_retry() const {
  std::lock_guard<std::mutex> lock(mu_);
  return auto_retry_;
}

void StreamControl::AbortRetry() {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    source = retry_abort_;
  }
  if (source) source->Cancel();  // outside the lock: callbacks never run under it
}

StreamControl::Flight StreamControl::Begin() {
  Flight f;
  f.stream = std::make_shared<CancelSource>();
  f.retry_abort = std::make_shared<CancelSource>();
  std::lock_guard<std::mutex> lock(mu_);
  stream_ = f.stream;
  interrupt_.reset();
  retry_abort_ = f.retry_abort;
  f.retry = auto_retry_;
  return f;
}

std::optional<StreamInterrupt> StreamControl::End() {
  std::lock_guard<std::mutex> lock(mu_);
  stream_.reset();
  retry_abort_.reset();
  std::optional<StreamInterrupt> out = std::move(interrupt_);
  interrupt_.reset();
  return out;
}

}  // namespace lousho::agent
