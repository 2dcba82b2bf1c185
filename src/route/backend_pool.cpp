#include "route/backend_pool.hpp"

#include "route/request_api.hpp"
#include "util/env_reference.hpp"

#include <algorithm>
#include <utility>

namespace mcpclass::route {

namespace {

std::vector<std::uint32_t> weights_of(const config::RouteUpstream& settings) {
  std::vector<std::uint32_t> weights;
  for (const auto& b : settings.backend_refs) weights.push_back(b.weight);
  return weights;
}

// A lane with a thread of its own (`context` null) or on a server I/O thread's context.
std::unique_ptr<Lane> make_lane(const LaneSettings& s,
                                const std::shared_ptr<boost::asio::io_context>& context) {
  auto engine = context ? std::make_unique<net::HttpEngine>(context, s.connect_timeout, s.ca_file,
                                                            SIZE_MAX, s.keep_alive)
                        : std::make_unique<net::HttpEngine>(s.connect_timeout, s.ca_file, SIZE_MAX,
                                                            s.keep_alive);
  if (s.tls) engine->prepare_tls();
  return std::make_unique<Lane>(std::move(engine), s.keep_alive, s.budget);
}

}  // namespace

Lane& Endpoint::lane_on(const std::shared_ptr<boost::asio::io_context>& context) {
  std::lock_guard lock(context_mutex_);
  for (const auto& [owner, lane] : context_lanes_)
    if (owner == context.get()) return *lane;
  auto& lane =
      *context_lanes_.emplace_back(context.get(), make_lane(lane_settings, context)).second;
  if (context_lanes_stopped_) lane.engine().stop();  // its start() refuses: the proxy is stopping
  return lane;
}

void Endpoint::stop_context_lanes() {
  std::lock_guard lock(context_mutex_);
  context_lanes_stopped_ = true;
  for (const auto& [owner, lane] : context_lanes_) lane->engine().stop();
}

BackendPool::BackendPool(const config::RouteUpstream& settings, const std::string& path,
                         std::size_t threads, std::size_t keep_alive,
                         const std::shared_ptr<util::DescriptorBudget>& budget)
    : policy_(settings.reliability), picker_(weights_of(settings)) {
  // "/v1" + "/chat/completions": the base URL names the API root.
  const bool anthropic = settings.api_format == config::ApiFormat::anthropic;
  const std::string main_path(
      upstream_path(anthropic ? RequestApi::messages : RequestApi::chat_completions));
  const std::string responses_path(upstream_path(RequestApi::responses));
  const std::string model_key = util::resolve_env_reference(settings.api_key, path + ".api_key");
  for (std::size_t i = 0; i < settings.backend_refs.size(); ++i) {
    const auto& b = settings.backend_refs[i];
    auto e = std::make_unique<Endpoint>();
    e->name = b.name;
    e->url = net::parse_http_url(b.base_url + main_path);
    e->responses_target = net::parse_http_url(b.base_url + responses_path).target;
    e->api_key = b.api_key.empty()
                     ? model_key
                     : util::resolve_env_reference(
                           b.api_key, path + ".backend_refs[" + std::to_string(i) + "].api_key");
    e->lane_settings = {.connect_timeout = settings.connect_timeout,
                        .ca_file = settings.ca_file,
                        .keep_alive = keep_alive,
                        .budget = budget,
                        .tls = e->url.tls};
    for (std::size_t t = 0; t < std::max<std::size_t>(1, threads); ++t)
      e->lanes.push_back(make_lane(e->lane_settings, nullptr));
    endpoints_.push_back(std::move(e));
    health_.emplace_back(policy_);
  }
  if (!policy_.health_check_path.empty())
    for (std::size_t i = 0; i < endpoints_.size(); ++i) schedule_check(i);
}

BackendPool::~BackendPool() {
  stop();
}

void BackendPool::stop() {
  for (const auto& e : endpoints_) {
    e->stop_context_lanes();
    for (const auto& lane : e->lanes) lane->engine().stop();
  }
}

Endpoint* BackendPool::pick(const std::vector<const Endpoint*>& tried,
                            HealthClock::time_point now) {
  std::size_t index = WeightedPicker::npos;
  {
    std::lock_guard lock(mutex_);
    index = picker_.pick([&](std::size_t i) {
      return health_[i].available(now) &&
             std::find(tried.begin(), tried.end(), endpoints_[i].get()) == tried.end();
    });
  }
  if (index == WeightedPicker::npos) return nullptr;
  auto& e = *endpoints_[index];
  e.requests.fetch_add(1, std::memory_order_relaxed);
  return &e;
}

bool BackendPool::may_retry(std::size_t tried) const {
  return policy_.retry_count < 0 || tried <= static_cast<std::size_t>(policy_.retry_count);
}

std::size_t BackendPool::index_of(const Endpoint& e) const {
  return static_cast<std::size_t>(std::find_if(endpoints_.begin(), endpoints_.end(),
                                               [&](const auto& p) { return p.get() == &e; }) -
                                  endpoints_.begin());
}

bool BackendPool::contains(const Endpoint& e) const {
  return index_of(e) < endpoints_.size();
}

void BackendPool::succeeded(Endpoint& e) {
  const auto index = index_of(e);
  std::lock_guard lock(mutex_);
  health_[index].succeeded();
}

void BackendPool::failed(Endpoint& e, HealthClock::time_point now) {
  e.failures.fetch_add(1, std::memory_order_relaxed);
  const auto index = index_of(e);
  std::lock_guard lock(mutex_);
  if (!health_[index].failed(now)) return;
  // Envoy's max_ejection_percent, rounded down: a pool of one endpoint never loses it at 50%.
  const auto out = static_cast<std::size_t>(std::count_if(
      health_.begin(), health_.end(), [&](const auto& h) { return !h.available(now); }));
  if ((out + 1) * 100 <= policy_.max_ejection_percent * health_.size()) health_[index].eject(now);
}

std::vector<EndpointStats> BackendPool::stats(HealthClock::time_point now) const {
  std::vector<EndpointStats> out;
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    const auto& e = *endpoints_[i];
    out.push_back({e.name, e.requests.load(), e.failures.load(), health_[i].ejections(),
                   !health_[i].available(now)});
  }
  return out;
}

// A GET on health_check_path every health_check_interval, on the endpoint's first lane (its
// engine's timer waits the interval): a 2xx answer is a success, anything else a failure that
// counts toward ejection like a request's. The pool stops its engines before it goes, so no
// callback outlives it.
void BackendPool::schedule_check(std::size_t index) {
  auto& e = *endpoints_[index];
  auto& lane = *e.lanes.front();
  net::HttpRequest req;
  req.method = "GET";
  req.target = net::resolve_url(e.url, policy_.health_check_path).target;
  if (!e.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + e.api_key);
  req.delay = policy_.health_check_interval;
  req.timeout = policy_.health_check_timeout;
  auto status = std::make_shared<int>(0);
  net::ExchangeCallbacks cb;
  cb.on_head = [status](const net::HttpHead& head) { *status = head.status; };
  cb.on_data = [](std::string_view) {};
  // A check beyond the descriptor budget still runs (one socket per endpoint and interval):
  // stopping the checks would leave an ejected endpoint's state to requests alone.
  const bool held = lane.take();
  cb.on_end = [this, index, status, held, &lane](const net::HttpError& error) {
    if (held) lane.give_back(!error);
    if (error.kind == net::HttpFailure::cancelled) return;  // stopping
    if (!error && *status >= 200 && *status < 300) {
      succeeded(*endpoints_[index]);
    } else {
      failed(*endpoints_[index]);
    }
    schedule_check(index);
  };
  try {
    lane.engine().start(e.url, std::move(req), std::move(cb));
  } catch (const net::HttpClientError&) {  // stopped
    if (held) lane.give_back(false);
  }
}

}  // namespace mcpclass::route
