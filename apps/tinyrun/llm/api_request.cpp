// Parsing OpenAI API requests; see api_request.hpp.
#include "api_request.hpp"

#include <boost/json.hpp>
#include <cmath>

namespace tg::llm {

namespace json = boost::json;

std::string ApiError::body() const {
  json::object e{{"message", message}, {"type", type}, {"code", nullptr}};
  e["param"] = param.empty() ? json::value(nullptr) : json::value(param);
  return json::serialize(json::object{{"error", e}});
}

std::optional<Endpoint> endpoint_of(std::string_view target) {
  const size_t q = target.find('?');
  if (q != std::string_view::npos) target = target.substr(0, q);
  if (target == "/v1/completions" || target == "/completions") return Endpoint::Completions;
  if (target == "/v1/chat/completions" || target == "/chat/completions")
    return Endpoint::ChatCompletions;
  return std::nullopt;
}

namespace {

struct Bad {
  ApiError e;
};

[[noreturn]] void bad(const std::string& param, const std::string& why) {
  throw Bad{ApiError{400, why, "invalid_request_error", param}};
}

double number(const json::value& v, const std::string& name, double lo, double hi) {
  double d = 0;
  if (v.is_int64())
    d = static_cast<double>(v.as_int64());
  else if (v.is_uint64())
    d = static_cast<double>(v.as_uint64());
  else if (v.is_double())
    d = v.as_double();
  else
    bad(name, "'" + name + "' must be a number");
  if (!std::isfinite(d) || d < lo || d > hi)
    bad(name, "'" + name + "' must be between " + json::serialize(json::value(lo)) + " and " +
                  json::serialize(json::value(hi)));
  return d;
}

int64_t integer(const json::value& v, const std::string& name, int64_t lo, int64_t hi) {
  const double d = number(v, name, static_cast<double>(lo), static_cast<double>(hi));
  if (d != std::floor(d)) bad(name, "'" + name + "' must be an integer");
  return static_cast<int64_t>(d);
}

std::string text(const json::value& v, const std::string& name) {
  if (!v.is_string()) bad(name, "'" + name + "' must be a string");
  return std::string(v.as_string());
}

// Message content: a string, or OpenAI's list of parts of which the text parts count.
std::string content(const json::value& v, const std::string& name) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_null()) return "";
  if (!v.is_array()) bad(name, "'" + name + "' must be a string or a list of text parts");
  std::string out;
  for (const json::value& part : v.as_array()) {
    const json::object* o = part.if_object();
    if (!o) bad(name, "'" + name + "' parts must be objects");
    const json::value* t = o->if_contains("text");
    if (t) out += text(*t, name + ".text");
  }
  return out;
}

ApiRequest parse(Endpoint endpoint, std::string_view body) {
  if (body.size() > kMaxBodyBytes)
    throw Bad{ApiError{413, "the request body is larger than " + std::to_string(kMaxBodyBytes) +
                                " bytes"}};
  boost::system::error_code ec;
  json::parse_options opt;
  opt.max_depth = 16;
  json::value root = json::parse(body, ec, {}, opt);
  if (ec) bad("", "the body is not valid JSON (" + ec.message() + ")");
  const json::object* o = root.if_object();
  if (!o) bad("", "the body must be a JSON object");
  ApiRequest r;
  r.endpoint = endpoint;
  r.sampling.temperature = 1.0; // OpenAI's default
  r.sampling.top_k = 0;
  r.sampling.top_p = 1.0;
  r.sampling.min_p = 0.0;
  if (const json::value* v = o->if_contains("model"); v && !v->is_null())
    r.model = text(*v, "model");
  if (endpoint == Endpoint::Completions) {
    const json::value* p = o->if_contains("prompt");
    if (!p) bad("prompt", "'prompt' is required");
    if (p->is_array()) {
      if (p->as_array().size() != 1)
        bad("prompt", "'prompt' must be one string (batches are not supported)");
      r.prompt = text(p->as_array()[0], "prompt");
    } else {
      r.prompt = text(*p, "prompt");
    }
  } else {
    const json::value* m = o->if_contains("messages");
    if (!m || !m->is_array()) bad("messages", "'messages' must be a list of messages");
    if (m->as_array().empty()) bad("messages", "'messages' must not be empty");
    if (m->as_array().size() > kMaxMessages)
      bad("messages", "at most " + std::to_string(kMaxMessages) + " messages");
    for (const json::value& e : m->as_array()) {
      const json::object* mo = e.if_object();
      if (!mo || !mo->contains("role")) bad("messages", "each message needs a 'role'");
      ChatMessage msg{text(mo->at("role"), "messages.role"), ""};
      if (msg.role == "developer") msg.role = "system";
      if (msg.role != "system" && msg.role != "user" && msg.role != "assistant")
        bad("messages.role", "unknown role '" + msg.role + "' (system, user, assistant)");
      if (const json::value* c = mo->if_contains("content"))
        msg.content = content(*c, "messages.content");
      r.messages.push_back(std::move(msg));
    }
  }
  for (const char* key : {"max_tokens", "max_completion_tokens", "n_predict"})
    if (const json::value* v = o->if_contains(key); v && !v->is_null())
      r.max_tokens = integer(*v, key, 1, kMaxTokens);
  if (const json::value* v = o->if_contains("stream"); v && !v->is_null()) {
    if (!v->is_bool()) bad("stream", "'stream' must be true or false");
    r.stream = v->as_bool();
  }
  if (const json::value* v = o->if_contains("temperature"); v && !v->is_null())
    r.sampling.temperature = number(*v, "temperature", 0, 2);
  if (const json::value* v = o->if_contains("top_p"); v && !v->is_null()) {
    r.sampling.top_p = number(*v, "top_p", 0, 1);
    if (r.sampling.top_p == 0) r.sampling.top_p = 1e-9;
  }
  if (const json::value* v = o->if_contains("top_k"); v && !v->is_null())
    r.sampling.top_k = static_cast<int32_t>(integer(*v, "top_k", 0, 1 << 20));
  if (const json::value* v = o->if_contains("min_p"); v && !v->is_null())
    r.sampling.min_p = number(*v, "min_p", 0, 1);
  if (const json::value* v = o->if_contains("seed"); v && !v->is_null())
    r.sampling.seed = static_cast<uint64_t>(integer(*v, "seed", 0, int64_t{1} << 53));
  if (const json::value* v = o->if_contains("repeat_penalty"); v && !v->is_null())
    r.sampling.repeat_penalty = number(*v, "repeat_penalty", 0.01, 100);
  if (const json::value* v = o->if_contains("frequency_penalty"); v && !v->is_null())
    (void)number(*v, "frequency_penalty", -2, 2);
  if (const json::value* v = o->if_contains("n"); v && !v->is_null())
    if (integer(*v, "n", 1, 1) != 1) bad("n", "only n = 1 is supported");
  if (const json::value* v = o->if_contains("stop"); v && !v->is_null()) {
    if (v->is_string()) {
      r.stop.push_back(std::string(v->as_string()));
    } else if (v->is_array()) {
      if (v->as_array().size() > kMaxStops)
        bad("stop", "at most " + std::to_string(kMaxStops) + " stop sequences");
      for (const json::value& s : v->as_array()) r.stop.push_back(text(s, "stop"));
    } else {
      bad("stop", "'stop' must be a string or a list of strings");
    }
    for (const std::string& s : r.stop)
      if (s.empty()) bad("stop", "stop sequences must not be empty");
  }
  return r;
}

} // namespace

ParsedRequest parse_api_request(Endpoint endpoint, std::string_view body) {
  ParsedRequest out;
  try {
    out.request = parse(endpoint, body);
  } catch (const Bad& b) {
    out.error = b.e;
  } catch (const std::exception& e) {
    out.error = ApiError{400, std::string("malformed request: ") + e.what()};
  }
  return out;
}

} // namespace tg::llm
