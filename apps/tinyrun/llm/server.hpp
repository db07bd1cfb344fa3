#pragma once
// An OpenAI-compatible HTTP server over one loaded model (Boost.Beast, Boost.JSON):
// GET /health, GET /v1/models, POST /v1/completions and /v1/chat/completions, with
// `"stream": true` answered as server-sent events. Each connection has its own thread; the
// model runs one generation at a time, so concurrent requests queue on it in arrival order
// (llama.cpp's server with one slot behaves the same). A malformed or oversized request gets a
// 4xx with OpenAI's error body; a client that disconnects mid-stream ends its generation and
// nothing else.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "chat_template.hpp"
#include "session.hpp"
#include "tokenizer.hpp"

namespace tg::llm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080; // 0: any free port (printed when listening)
  std::string model_name = "model";
  int64_t default_max_tokens = 256;
};

// Serves until the process ends. Prints "listening on http://HOST:PORT" on stdout once ready.
void serve(Session& session, const Tokenizer& tokenizer, const ChatTemplate& chat,
           const ServerOptions& options);

} // namespace tg::llm
