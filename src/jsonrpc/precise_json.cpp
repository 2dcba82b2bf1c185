#include "jsonrpc/precise_json.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/value_stack.hpp>

#include <charconv>
#include <string>

namespace mcpclass::jsonrpc::detail {

namespace json = boost::json;
using boost::system::error_code;

namespace {

// Boost.JSON's own value-building handler (detail::handler), but a double is taken from the
// number's text rather than from Boost's approximation.
struct PreciseHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack st;
  std::string number;  // the parts of a number that arrived before its last one

  explicit PreciseHandler(json::storage_ptr sp) { st.reset(std::move(sp)); }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(std::size_t n, error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t n, error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view s, error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, error_code&) {
    number.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, error_code&) {
    number.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view tail, error_code&) {
    number.append(tail.data(), tail.size());
    double nearest = 0;
    const auto [end, err] = std::from_chars(number.data(), number.data() + number.size(), nearest);
    // Out of range (1e999, 1e-999): Boost's ±infinity or 0 stays, and parse_json judges it.
    if (err == std::errc() && end == number.data() + number.size()) d = nearest;
    number.clear();
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }
};

}  // namespace

json::value parse_precise(std::string_view text, error_code& ec, json::storage_ptr storage,
                          const json::parse_options& options) {
  json::basic_parser<PreciseHandler> parser(options, std::move(storage));
  const auto used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = json::error::extra_data;
  if (ec) return nullptr;
  return parser.handler().st.release();
}

}  // namespace mcpclass::jsonrpc::detail
