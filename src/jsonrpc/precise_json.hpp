// Internal: json::parse with correctly rounded doubles. Boost.JSON 1.81's own number parsing is
// not correctly rounded (parse_options::numbers came with 1.83), so a number could change on a
// parse → serialize → parse round trip and a relayed message would not carry the peer's value.
#pragma once

#include <boost/json/parse_options.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <string_view>

namespace mcpclass::jsonrpc::detail {

/// As boost::json::parse, except that every number Boost reads as a double is read again with
/// std::from_chars: the nearest double to the text (unchanged where it is out of range).
boost::json::value parse_precise(std::string_view text, boost::system::error_code& ec,
                                 boost::json::storage_ptr storage,
                                 const boost::json::parse_options& options);

}  // namespace mcpclass::jsonrpc::detail
