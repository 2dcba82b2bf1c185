// Session table of the HTTP transport.
#include "transport/server/http/sessions.hpp"

#include <openssl/rand.h>

#include <array>
#include <charconv>
#include <stdexcept>

namespace mcpclass::transport::server {

namespace {
// Finished POST streams kept per session for late resumption.
constexpr std::size_t kKeptFinishedChannels = 16;

// The session's standalone stream as the engine sees it.
class ChannelStream final : public mcpclass::server::Stream {
 public:
  explicit ChannelStream(std::shared_ptr<SseChannel> channel) : channel_(std::move(channel)) {}
  void send(boost::json::value message) override { channel_->append(message); }
  void close(std::optional<boost::json::value> final_message) override {
    if (final_message) channel_->append(*final_message);
  }

 private:
  std::shared_ptr<SseChannel> channel_;
};
}  // namespace

std::string random_session_id() {
  // From OpenSSL's CSPRNG: the ID is the session's only credential when no token is configured,
  // so it must not be predictable from the IDs other clients see (a mersenne twister's is).
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("session id: the system random generator failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(2 * bytes.size());
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 0xF]);
  }
  return id;
}

std::shared_ptr<SseChannel> HttpSession::open_channel(std::size_t store_limit) {
  std::lock_guard lock(mutex_);
  // Forget the oldest finished streams beyond the count, and while the session's replay stores
  // leave no room for one more stream's budget.
  std::size_t finished = 0;
  for (const auto& [n, c] : channels_) finished += c->finished() ? 1 : 0;
  auto crowded = [&] {
    return finished > kKeptFinishedChannels ||
           (replay_budget &&
            replay_budget->used.load() + replay_budget->per_stream > replay_budget->total);
  };
  for (auto it = channels_.begin(); it != channels_.end() && finished > 0 && crowded();) {
    if (it->second->finished()) {
      it = channels_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
  const std::uint64_t number = next_channel_++;
  auto channel =
      std::make_shared<SseChannel>(std::to_string(number), true, store_limit, replay_budget);
  channels_.emplace(number, channel);
  return channel;
}

std::shared_ptr<SseChannel> HttpSession::find_channel(const std::string& channel_id,
                                                      bool& forgotten) {
  forgotten = false;
  if (standalone && channel_id == standalone->id()) return standalone;
  std::uint64_t number = 0;
  const char* end = channel_id.data() + channel_id.size();
  if (auto [ptr, ec] = std::from_chars(channel_id.data(), end, number);
      ec != std::errc{} || ptr != end)
    return nullptr;
  std::lock_guard lock(mutex_);
  auto it = channels_.find(number);
  if (it != channels_.end()) return it->second;
  forgotten = number >= 1 && number < next_channel_;
  return nullptr;
}

void HttpSession::begin() {
  std::lock_guard lock(mutex_);
  ++active_;
  last_used_ = Clock::now();
}

void HttpSession::end() {
  std::lock_guard lock(mutex_);
  --active_;
  last_used_ = Clock::now();
}

bool HttpSession::idle_since(Clock::time_point cutoff) const {
  std::lock_guard lock(mutex_);
  return active_ == 0 && last_used_ < cutoff && !(standalone && standalone->attached());
}

HttpSession::Clock::time_point HttpSession::last_used() const {
  std::lock_guard lock(mutex_);
  return last_used_;
}

HttpSessionTable::HttpSessionTable(std::shared_ptr<mcpclass::server::Server> server,
                                   std::size_t max_sessions, std::size_t event_store_size,
                                   std::size_t session_replay_bytes,
                                   std::shared_ptr<ReplayBudget> budget, std::string id_prefix)
    : server_(std::move(server)),
      max_sessions_(max_sessions == 0 ? 1 : max_sessions),
      event_store_size_(event_store_size),
      session_replay_bytes_(session_replay_bytes),
      budget_(std::move(budget)),
      id_prefix_(std::move(id_prefix)) {}

std::shared_ptr<HttpSession> HttpSessionTable::create(bool legacy) {
  std::shared_ptr<HttpSession> evicted;
  auto entry = std::make_shared<HttpSession>();
  {
    std::lock_guard lock(mutex_);
    if (closed_) return nullptr;
    if (sessions_.size() >= max_sessions_) {
      // Evict the least recently used session that is idle right now.
      const auto now = HttpSession::Clock::now();
      for (const auto& [id, candidate] : sessions_) {
        if (candidate->legacy || !candidate->idle_since(now)) continue;
        if (!evicted || candidate->last_used() < evicted->last_used()) evicted = candidate;
      }
      if (!evicted) return nullptr;
      sessions_.erase(evicted->id);
    }
    do {
      entry->id = id_prefix_ + random_session_id();
    } while (sessions_.contains(entry->id));
    entry->legacy = legacy;
    entry->session = server_->create_session();
    // Legacy streams carry no ids: the 2024-11-05 transport has no resumption.
    entry->replay_budget = budget_ ? std::make_shared<ReplayBudget>(budget_->per_stream,
                                                                    session_replay_bytes_, budget_)
                                   : nullptr;
    entry->standalone =
        std::make_shared<SseChannel>("0", !legacy, event_store_size_, entry->replay_budget);
    entry->session->set_notification_stream(std::make_shared<ChannelStream>(entry->standalone));
    sessions_.emplace(entry->id, entry);
  }
  if (evicted) close_entry(evicted);
  return entry;
}

std::shared_ptr<HttpSession> HttpSessionTable::find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

std::shared_ptr<HttpSession> HttpSessionTable::acquire(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second->begin();
  return it->second;
}

bool HttpSessionTable::remove(const std::string& id) {
  std::shared_ptr<HttpSession> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    entry = it->second;
    sessions_.erase(it);
  }
  close_entry(entry);
  return true;
}

std::size_t HttpSessionTable::evict_idle(HttpSession::Clock::time_point cutoff) {
  std::vector<std::shared_ptr<HttpSession>> victims;
  {
    std::lock_guard lock(mutex_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (!it->second->legacy && it->second->idle_since(cutoff)) {
        victims.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& v : victims) close_entry(v);
  return victims.size();
}

std::size_t HttpSessionTable::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void HttpSessionTable::add_transient(const std::shared_ptr<mcpclass::server::Session>& session) {
  std::lock_guard lock(mutex_);
  transient_.insert(session);
}

void HttpSessionTable::remove_transient(const std::shared_ptr<mcpclass::server::Session>& session) {
  std::lock_guard lock(mutex_);
  transient_.erase(session);
}

void HttpSessionTable::end_streams() {
  std::vector<std::shared_ptr<HttpSession>> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, entry] : sessions_) all.push_back(entry);
  }
  for (auto& entry : all) entry->standalone->end_sink();
}

void HttpSessionTable::close_all() {
  std::map<std::string, std::shared_ptr<HttpSession>> all;
  std::set<std::shared_ptr<mcpclass::server::Session>> transient;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    all.swap(sessions_);
    transient.swap(transient_);
  }
  for (auto& [id, entry] : all) close_entry(entry);
  for (const auto& s : transient) s->close();
}

void HttpSessionTable::close_entry(const std::shared_ptr<HttpSession>& entry) {
  entry->session->close();
  entry->standalone->finish();
}

}  // namespace mcpclass::transport::server
