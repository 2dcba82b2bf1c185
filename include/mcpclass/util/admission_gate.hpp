// Bounded admission of slow work (classifications): at most `max_concurrent` run and at most
// `max_queue` wait for their turn; anything beyond is refused at once instead of waiting without
// bound. Each piece of work may carry a deadline: work whose deadline has passed when it would
// start, or that would finish past it by the time such work has been taking lately, is dropped
// unrun ("expired"), so nothing is answered after its deadline because it waited here.
// Thread-safety: every member may be called from any thread; a Ticket belongs to one piece of
// work (start() on the thread that will run it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::util {

struct AdmissionOptions {
  /// Pieces of work running at once; 0 = no gate (everything is admitted at once).
  std::size_t max_concurrent = 0;
  /// Admitted pieces waiting for one of the running slots.
  std::size_t max_queue = 0;
  /// What a refusal tells the caller to wait before trying again (HTTP Retry-After).
  std::chrono::milliseconds retry_after{1000};
};

/// Why work was not run.
enum class AdmissionRefusal {
  none,      ///< admitted (or started)
  rejected,  ///< every running slot and queue place was taken
  expired,   ///< its deadline passed (or would have by the time it finished) before it started
};

class AdmissionGate : public std::enable_shared_from_this<AdmissionGate> {
 public:
  using Clock = std::chrono::steady_clock;

  /// A place taken in the gate, queued until start() returns none, running after; destroying it
  /// frees the place (and the running slot, whose time feeds the estimate of how long work
  /// takes).
  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    /// Waits for a running slot, in the order places were taken, at most until the deadline less
    /// the estimated run time. Returns none once the work may run, expired when it may not (the
    /// place is freed then). Call it once.
    AdmissionRefusal start();
    /// The work ran and gave an answer (counted as classified).
    void succeeded();

   private:
    friend class AdmissionGate;
    Ticket(std::shared_ptr<AdmissionGate> gate, std::optional<Clock::time_point> deadline)
        : gate_(std::move(gate)), deadline_(deadline) {}
    std::shared_ptr<AdmissionGate> gate_;
    std::optional<Clock::time_point> deadline_;
    bool running_ = false;
    bool done_ = false;  // the place was given back (expired)
    Clock::time_point started_;
  };

  struct Admission {
    std::unique_ptr<Ticket> ticket;  ///< null when refused
    AdmissionRefusal refusal = AdmissionRefusal::none;
  };

  /// A gate; create it with make_shared (tickets keep it alive).
  explicit AdmissionGate(AdmissionOptions options) : options_(options) {}

  /// Takes a place for work due by `deadline` (none: no deadline), or says at once why not:
  /// expired when the deadline has passed, rejected when max_concurrent + max_queue places are
  /// taken. Every call is counted as admitted, rejected or expired.
  Admission admit(std::optional<Clock::time_point> deadline);

  const AdmissionOptions& options() const noexcept { return options_; }
  /// "2 running and 8 queued": the limits, for refusals to name.
  std::string limits_text() const;

  /// What the gate has done since it was made. Plain value.
  struct Counts {
    std::uint64_t offered = 0;   ///< admit() calls
    std::uint64_t admitted = 0;  ///< places taken
    std::uint64_t rejected = 0;  ///< refused for want of a place
    /// Dropped unrun because of their deadline: at admit() or while queued.
    std::uint64_t expired = 0;
    std::uint64_t started = 0;     ///< admitted work that ran
    std::uint64_t classified = 0;  ///< work that ran and succeeded()
    std::size_t running = 0;
    std::size_t queued = 0;  ///< waiting in start() for a running slot
    /// The recent run time deadlines are checked against (a moving average; 0 before any).
    Clock::duration estimated_run_time{0};
  };
  Counts counts() const;

 private:
  struct Waiter {
    std::condition_variable cv;
    bool granted = false;
  };
  void release(Ticket& ticket);
  void grant_next();  // with mutex_ held: hands a free slot to the first waiter

  const AdmissionOptions options_;
  mutable std::mutex mutex_;
  std::size_t places_ = 0;  // running + queued (+ admitted not yet started)
  std::size_t running_ = 0;
  std::deque<Waiter*> waiters_;
  Clock::duration estimate_{0};
  Counts counts_;  // the counters; running, queued and the estimate are the members above
};

/// The HTTP Retry-After value for a wait of `wait`: whole seconds, rounded up, at least 1.
std::string retry_after_header(std::chrono::milliseconds wait);

/// The header a request's deadline comes in, as milliseconds from its arrival: the HTTP form of
/// `_meta["io.mcpclass/timeoutMs"]` (mcpclass::server::kMetaRequestTimeout).
inline constexpr std::string_view kRequestTimeoutHeader = "X-Request-Timeout-Ms";

/// The X-Request-Timeout-Ms header's value: a whole number of milliseconds of at most a day
/// (86400000); nullopt when it is anything else (empty included).
std::optional<std::uint64_t> request_timeout_ms(std::string_view header);
/// What is wrong with an X-Request-Timeout-Ms value, for a 400 answer; nullopt when `header` is
/// empty (absent) or valid. Every HTTP endpoint refuses a bad value the same way.
std::optional<std::string> request_timeout_error(std::string_view header);
/// A deadline `header` milliseconds from now (request_timeout_ms); nullopt when absent or bad.
std::optional<AdmissionGate::Clock::time_point> deadline_after_ms(std::string_view header);

/// Prometheus text of `counts` as `<prefix>_{offered,admitted,rejected,expired,classified}_total`,
/// `<prefix>_{running,queued}` and `<prefix>_classified_ratio` (classified / offered: the share
/// of `what` that was really classified, 1 before any).
std::string admission_prometheus(const AdmissionGate::Counts& counts, std::string_view prefix,
                                 std::string_view what);

}  // namespace mcpclass::util
