#include "mcpclass/util/admission_gate.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace mcpclass::util {

namespace {

// The estimate follows the recent run times: a fifth of each new one.
constexpr int kEstimateWeight = 5;

}  // namespace

AdmissionGate::Admission AdmissionGate::admit(std::optional<Clock::time_point> deadline) {
  std::lock_guard lock(mutex_);
  ++counts_.offered;
  if (deadline && Clock::now() >= *deadline) {
    ++counts_.expired;
    return {nullptr, AdmissionRefusal::expired};
  }
  if (options_.max_concurrent > 0 && places_ >= options_.max_concurrent + options_.max_queue) {
    ++counts_.rejected;
    return {nullptr, AdmissionRefusal::rejected};
  }
  ++places_;
  ++counts_.admitted;
  return {std::unique_ptr<Ticket>(new Ticket(shared_from_this(), deadline)),
          AdmissionRefusal::none};
}

AdmissionRefusal AdmissionGate::Ticket::start() {
  auto& gate = *gate_;
  std::unique_lock lock(gate.mutex_);
  const auto latest = deadline_ ? std::optional(*deadline_ - gate.estimate_) : std::nullopt;
  const auto expire = [&] {
    done_ = true;
    --gate.places_;
    ++gate.counts_.expired;
    return AdmissionRefusal::expired;
  };
  if (latest && Clock::now() >= *latest) return expire();
  const bool bounded = gate.options_.max_concurrent > 0;
  if (bounded && (gate.running_ >= gate.options_.max_concurrent || !gate.waiters_.empty())) {
    Waiter waiter;
    gate.waiters_.push_back(&waiter);
    const auto granted = [&] { return waiter.granted; };
    if (latest) {
      waiter.cv.wait_until(lock, *latest, granted);
    } else {
      waiter.cv.wait(lock, granted);
    }
    if (!waiter.granted) {
      gate.waiters_.erase(std::find(gate.waiters_.begin(), gate.waiters_.end(), &waiter));
      return expire();
    }
  } else {
    ++gate.running_;
  }
  running_ = true;
  started_ = Clock::now();
  ++gate.counts_.started;
  return AdmissionRefusal::none;
}

void AdmissionGate::Ticket::succeeded() {
  std::lock_guard lock(gate_->mutex_);
  ++gate_->counts_.classified;
}

AdmissionGate::Ticket::~Ticket() {
  gate_->release(*this);
}

void AdmissionGate::release(Ticket& ticket) {
  if (ticket.done_) return;
  std::lock_guard lock(mutex_);
  --places_;
  if (!ticket.running_) return;
  const auto took = Clock::now() - ticket.started_;
  estimate_ = estimate_.count() == 0 ? took : estimate_ + (took - estimate_) / kEstimateWeight;
  --running_;
  grant_next();
}

void AdmissionGate::grant_next() {
  while (!waiters_.empty() && running_ < options_.max_concurrent) {
    Waiter* next = waiters_.front();
    waiters_.pop_front();
    next->granted = true;
    ++running_;
    next->cv.notify_one();
  }
}

std::string AdmissionGate::limits_text() const {
  return std::to_string(options_.max_concurrent) + " running and " +
         std::to_string(options_.max_queue) + " queued";
}

AdmissionGate::Counts AdmissionGate::counts() const {
  std::lock_guard lock(mutex_);
  Counts out = counts_;
  out.running = running_;
  out.queued = waiters_.size();
  out.estimated_run_time = estimate_;
  return out;
}

std::string retry_after_header(std::chrono::milliseconds wait) {
  return std::to_string(
      std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::seconds>(wait).count()));
}

std::optional<std::uint64_t> request_timeout_ms(std::string_view header) {
  std::uint64_t ms = 0;
  const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), ms);
  if (header.empty() || ec != std::errc() || end != header.data() + header.size() ||
      ms > 86'400'000)
    return std::nullopt;
  return ms;
}

std::optional<std::string> request_timeout_error(std::string_view header) {
  if (header.empty() || request_timeout_ms(header)) return std::nullopt;
  return std::string(kRequestTimeoutHeader) +
         " must be a whole number of milliseconds from 0 to 86400000";
}

std::optional<AdmissionGate::Clock::time_point> deadline_after_ms(std::string_view header) {
  const auto ms = request_timeout_ms(header);
  if (!ms) return std::nullopt;
  return AdmissionGate::Clock::now() + std::chrono::milliseconds(*ms);
}

std::string admission_prometheus(const AdmissionGate::Counts& c, std::string_view prefix,
                                 std::string_view what) {
  std::string out;
  const auto series = [&](std::string_view name, std::string_view type, std::string_view help,
                          const std::string& value) {
    out.append("# HELP ").append(prefix).append("_").append(name).append(" ").append(help);
    out.append("\n# TYPE ").append(prefix).append("_").append(name).append(" ").append(type);
    out.append("\n").append(prefix).append("_").append(name).append(" ").append(value);
    out.append("\n");
  };
  const std::string w(what);
  series("offered_total", "counter", w + " offered to admission control.",
         std::to_string(c.offered));
  series("admitted_total", "counter", w + " given a running slot or a queue place.",
         std::to_string(c.admitted));
  series("rejected_total", "counter",
         w + " refused at once: every running slot and queue place was taken.",
         std::to_string(c.rejected));
  series("expired_total", "counter",
         w + " dropped unrun: their deadline passed (or would have) before they started.",
         std::to_string(c.expired));
  series("classified_total", "counter", w + " that ran and were answered.",
         std::to_string(c.classified));
  series("running", "gauge", w + " running now.", std::to_string(c.running));
  series("queued", "gauge", w + " waiting for a running slot now.", std::to_string(c.queued));
  const double ratio =
      c.offered == 0 ? 1.0 : static_cast<double>(c.classified) / static_cast<double>(c.offered);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", ratio);
  series("classified_ratio", "gauge", w + " classified / offered (1 before any).", buf);
  return out;
}

}  // namespace mcpclass::util
