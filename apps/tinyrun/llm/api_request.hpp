#pragma once
// The OpenAI-compatible API's requests as data: a pure parse of an endpoint and a JSON body
// (no model, no socket; the fuzz target calls it) into what a generation needs, or an
// ApiError with the HTTP status and OpenAI's error body. The server (server.hpp) does the I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat_template.hpp"
#include "sampler.hpp"

namespace tg::llm {

enum class Endpoint { Completions, ChatCompletions };

struct ApiRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string prompt;                // completions
  std::vector<ChatMessage> messages; // chat completions
  int64_t max_tokens = 0;            // 0: not given (the server's default applies)
  bool stream = false;
  std::vector<std::string> stop;
  SamplingParams sampling; // temperature, top_p, top_k, min_p, seed, repetition penalty
  std::string model;
};

// The largest body accepted (bigger ones get 413 before they are read), the most messages, stop
// sequences and tokens a request may ask for.
inline constexpr size_t kMaxBodyBytes = 1 << 20;
inline constexpr size_t kMaxMessages = 256;
inline constexpr size_t kMaxStops = 4;
inline constexpr int64_t kMaxTokens = 1 << 16;

struct ApiError {
  ApiError(int status_, std::string message_, std::string type_ = "invalid_request_error",
           std::string param_ = "")
      : status(status_), message(std::move(message_)), type(std::move(type_)),
        param(std::move(param_)) {}
  int status;
  std::string message;
  std::string type;
  std::string param; // the offending field, "" when none
  // {"error": {"message", "type", "param", "code"}} as OpenAI sends it.
  std::string body() const;
};

// Parses the body of a POST to `endpoint`. Unknown fields are ignored, as OpenAI's servers do;
// a field of the wrong type or out of range is an ApiError naming it.
struct ParsedRequest {
  std::optional<ApiRequest> request;
  std::optional<ApiError> error;
};
ParsedRequest parse_api_request(Endpoint endpoint, std::string_view body);

// The endpoint of a request target ("/v1/completions"), with or without a query string.
std::optional<Endpoint> endpoint_of(std::string_view target);

} // namespace tg::llm
