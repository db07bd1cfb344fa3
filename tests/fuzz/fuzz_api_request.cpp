// libFuzzer target: the llm server's request handling (apps/tinyrun/llm/api_request.hpp) on
// arbitrary bodies: the first byte picks the endpoint, the rest is the body. Every input must
// give either a request within the documented limits or an ApiError with a 4xx status and a
// JSON error body; anything else (a crash, a sanitizer report, an exception) is a finding.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "llm/api_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace tg::llm;
  const Endpoint ep = data[0] & 1 ? Endpoint::ChatCompletions : Endpoint::Completions;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const ParsedRequest p = parse_api_request(ep, body);
  if (p.request.has_value() == p.error.has_value()) std::abort();
  if (p.error) {
    if (p.error->status != 400 && p.error->status != 413) std::abort();
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(p.error->body(), ec);
    if (ec || !v.is_object() || !v.as_object().contains("error")) std::abort();
    return 0;
  }
  const ApiRequest& r = *p.request;
  if (r.max_tokens < 0 || r.max_tokens > kMaxTokens) std::abort();
  if (r.stop.size() > kMaxStops || r.messages.size() > kMaxMessages) std::abort();
  if (ep == Endpoint::ChatCompletions && r.messages.empty()) std::abort();
  if (!(r.sampling.temperature >= 0 && r.sampling.temperature <= 2)) std::abort();
  if (!(r.sampling.top_p > 0 && r.sampling.top_p <= 1)) std::abort();
  for (const std::string& s : r.stop)
    if (s.empty()) std::abort();
  (void)endpoint_of(body);
  return 0;
}
