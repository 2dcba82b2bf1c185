// In-process micro-benchmarks (issue 8, bench/run.sh): rule classify, entropy decision and a full
// JSON-RPC tools/call classify_text through a Session (parse + dispatch + classify + serialize),
// each timed per call (median, p99) with its heap allocations per call (a replaced operator new
// counts them), and reported as ratios against two baselines measured in the same run on the same
// request text: memcpy of it, and Boost.JSON parse + serialize of it. Also footprint figures:
// RSS after setup and after 10k requests, main()-to-first-response time.
// Output: one JSON object on stdout. Usage: mcpclass_bench [--iterations N]
// Scaling mode (bench/run.sh, cost vs categories and text length): mcpclass_bench --config FILE
// --text-file FILE [--iterations N] times only rule_classify and session_tools_call for that
// configuration and text.
#include "mcpclass/classify/entropy.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"
#include "mcpclass/service/mcp_tools.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

// --- Allocation counting: every global operator new goes through here ---------------------------
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

namespace json = boost::json;
using namespace mcpclass;
using Clock = std::chrono::steady_clock;

const auto g_start = Clock::now();

constexpr std::string_view kText =
    "Can you help me solve this integral and explain the derivative of x^2 * sin(x) step by step?";
// Issue 16's rule-classify goal is stated for a 40-character query: the HTTP benchmark's text.
constexpr std::string_view kShortText = "What is the integral of x^2 from 0 to 3?";

std::string tools_call_request(std::int64_t id, std::string_view text = kText) {
  json::object params{{"name", "classify_text"},
                      {"arguments", json::object{{"text", text}, {"with_probabilities", true}}}};
  return json::serialize(json::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", std::move(params)}});
}

// A stream that serializes what it receives, as a transport would before writing it.
class SerializingStream final : public server::Stream {
 public:
  void send(json::value message) override { last = json::serialize(message); }
  void close(std::optional<json::value> final_message) override {
    if (final_message) last = json::serialize(*final_message);
    closed = true;
  }
  std::string last;
  bool closed = false;
};

struct Stats {
  std::string name;
  double median_ns = 0;
  double p99_ns = 0;
  double allocations_per_call = 0;
  std::size_t iterations = 0;
};

template <typename F>
Stats measure(std::string name, std::size_t iterations, F&& body) {
  for (std::size_t i = 0; i < iterations / 10 + 1; ++i) body(i);  // warm-up
  std::vector<double> ns(iterations);
  const auto allocs_before = g_allocations.load();
  for (std::size_t i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    body(i);
    ns[i] = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  const auto allocs = g_allocations.load() - allocs_before;
  std::sort(ns.begin(), ns.end());
  Stats s;
  s.name = std::move(name);
  s.iterations = iterations;
  s.median_ns = ns[iterations / 2];
  s.p99_ns = ns[std::min(iterations - 1, iterations * 99 / 100)];
  s.allocations_per_call = static_cast<double>(allocs) / static_cast<double>(iterations);
  return s;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

volatile std::size_t g_sink = 0;

json::object to_json(const Stats& s) {
  return {{"name", s.name},
          {"iterations", s.iterations},
          {"median_ns", s.median_ns},
          {"p99_ns", s.p99_ns},
          {"allocations_per_call", s.allocations_per_call}};
}

// The default classifier, or the one of a configuration file, behind a server with one
// initialized session and an inline executor.
struct Setup {
  std::shared_ptr<const classify::Classifier> classifier;
  std::shared_ptr<server::Server> server;
  std::shared_ptr<server::Session> session;

  explicit Setup(const config::Config& cfg) : classifier(config::make_classifier(cfg)) {
    server::ServerOptions options;
    options.name = "mcpclass-bench";
    options.version = "0";
    server = server::Server::create(options, [](std::function<void()> job) { job(); });
    service::register_classification(*server, classifier,
                                     {.max_text_length = cfg.server.max_text_length,
                                      .on_classified = {},
                                      .metrics = {},
                                      .admission = {},
                                      .provenance = {}});
    session = server->create_session();
    session->handle(
        std::string_view{
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}})"},
        std::make_shared<SerializingStream>());
    session->handle(std::string_view{R"({"jsonrpc":"2.0","method":"notifications/initialized"})"},
                    std::make_shared<SerializingStream>());
  }

  // tools/call requests with distinct ids (an id may not be reused while in flight).
  static std::vector<std::string> requests(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < 64; ++i)
      out.push_back(tools_call_request(static_cast<std::int64_t>(i + 2), text));
    return out;
  }

  Stats tools_call(std::size_t iterations, const std::vector<std::string>& requests) {
    return measure("session_tools_call", iterations, [&](std::size_t i) {
      auto s = std::make_shared<SerializingStream>();
      session->handle(std::string_view{requests[i % requests.size()]}, s);
      g_sink = g_sink + s->last.size();
    });
  }
};

int run_scaling(const std::string& config_path, const std::string& text_path,
                std::size_t iterations) {
  std::ifstream in(text_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Setup setup(config::load_config_file(config_path));
  const auto requests = Setup::requests(text);
  {
    auto s = std::make_shared<SerializingStream>();
    setup.session->handle(std::string_view{requests[0]}, s);
    if (s->last.find("\"result\"") == std::string::npos ||
        s->last.find("\"isError\":true") != std::string::npos) {
      std::fprintf(stderr, "mcpclass_bench: tools/call failed: %s\n", s->last.c_str());
      return 1;
    }
  }
  const Stats classify = measure("rule_classify", iterations, [&](std::size_t) {
    g_sink = g_sink + setup.classifier->classify(text).class_index;
  });
  const Stats call = setup.tools_call(iterations, requests);
  json::object out{{"text_chars", text.size()},
                   {"categories", setup.classifier->categories().size()},
                   {"cases", json::array{to_json(classify), to_json(call)}}};
  std::printf("%s\n", json::serialize(out).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t iterations = 20000;
  std::string config_path, text_path;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0)
      iterations = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--config") == 0) config_path = argv[i + 1];
    if (std::strcmp(argv[i], "--text-file") == 0) text_path = argv[i + 1];
  }
  if (!config_path.empty() || !text_path.empty()) {
    if (config_path.empty() || text_path.empty()) {
      std::fprintf(stderr, "mcpclass_bench: --config and --text-file go together\n");
      return 2;
    }
    return run_scaling(config_path, text_path, iterations);
  }

  Setup setup(config::default_config());
  const auto& classifier = setup.classifier;
  const std::string request = tools_call_request(1);
  const auto first = std::make_shared<SerializingStream>();
  setup.session->handle(std::string_view{request}, first);
  const double first_response_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - g_start).count();
  if (!first->closed || first->last.find("\"result\"") == std::string::npos) {
    std::fprintf(stderr, "mcpclass_bench: tools/call failed: %s\n", first->last.c_str());
    return 1;
  }
  const long rss_idle = rss_kib();

  std::vector<Stats> results;
  // Baselines, on the same request text.
  std::string copy(request.size(), '\0');
  results.push_back(measure("baseline_memcpy", iterations, [&](std::size_t) {
    std::memcpy(copy.data(), request.data(), request.size());
    g_sink = g_sink + static_cast<unsigned char>(copy[request.size() / 2]);
  }));
  results.push_back(measure("baseline_json_parse_serialize", iterations, [&](std::size_t) {
    g_sink = g_sink + json::serialize(json::parse(request)).size();
  }));
  // The library.
  results.push_back(measure("rule_classify", iterations, [&](std::size_t) {
    g_sink = g_sink + classifier->classify(kText).class_index;
  }));
  results.push_back(measure("rule_classify_40", iterations, [&](std::size_t) {
    g_sink = g_sink + classifier->classify(kShortText).class_index;
  }));
  const auto classification = classifier->classify(kText);
  const auto names = classifier->categories().names();
  classify::ReasoningFlags flags;
  for (const auto& n : names) flags[n] = n == "math";
  results.push_back(measure("entropy_decision", iterations, [&](std::size_t) {
    g_sink =
        g_sink + classify::make_reasoning_decision(classification.probabilities, names, flags, 0.6)
                     .top_categories.size();
  }));
  const auto requests = Setup::requests(kText);
  results.push_back(setup.tools_call(iterations, requests));
  // Footprint after 10k more requests.
  for (std::size_t i = 0; i < 10000; ++i) {
    auto s = std::make_shared<SerializingStream>();
    setup.session->handle(std::string_view{requests[i % requests.size()]}, s);
  }
  const long rss_10k = rss_kib();

  json::array cases;
  const double memcpy_ns = std::max(1.0, results[0].median_ns);
  const double json_ns = std::max(1.0, results[1].median_ns);
  for (const auto& s : results) {
    json::object c = to_json(s);
    c["median_vs_memcpy"] = s.median_ns / memcpy_ns;
    c["median_vs_json_parse_serialize"] = s.median_ns / json_ns;
    cases.push_back(std::move(c));
  }
  json::object out{{"request_bytes", request.size()},
                   {"cases", std::move(cases)},
                   {"rss_kib_after_setup", rss_idle},
                   {"rss_kib_after_10k_requests", rss_10k},
                   {"main_to_first_response_ms", first_response_ms}};
  std::printf("%s\n", json::serialize(out).c_str());
  return g_sink == 42 ? 2 : 0;
}
