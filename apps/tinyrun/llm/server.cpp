// The OpenAI-compatible server; see server.hpp.
#include "server.hpp"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "api_request.hpp"
#include "sampler.hpp"
#include "tg/error.hpp"

namespace tg::llm {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

// Writes of a closed connection: generation for it stops.
struct ClientGone {};

class Server {
public:
  Server(Session& s, const Tokenizer& t, const ChatTemplate& c, const ServerOptions& o)
      : session_(s), tok_(t), chat_(c), opt_(o) {}

  void run() {
    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::make_address(opt_.host), opt_.port});
    std::printf("listening on http://%s:%u\n", opt_.host.c_str(),
                static_cast<unsigned>(acceptor.local_endpoint().port()));
    std::fflush(stdout);
    for (;;) {
      tcp::socket socket(io);
      beast::error_code ec;
      acceptor.accept(socket, ec);
      if (ec) continue;
      std::thread([this, s = std::move(socket)]() mutable { connection(std::move(s)); }).detach();
    }
  }

private:
  using Request = http::request<http::string_body>;

  void connection(tcp::socket socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxBodyBytes);
      parser.header_limit(64 * 1024);
      beast::error_code ec;
      http::read(socket, buffer, parser, ec);
      if (ec == http::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::error::connection_reset)
        break;
      if (ec == http::error::body_limit) {
        send_error(socket, 11,
                   ApiError{413, "the request body is larger than " +
                                     std::to_string(kMaxBodyBytes) + " bytes"},
                   false);
        break;
      }
      if (ec) {
        send_error(socket, 11, ApiError{400, "malformed HTTP request (" + ec.message() + ")"},
                   false);
        break;
      }
      const Request& req = parser.get();
      bool keep = req.keep_alive();
      try {
        keep = handle(socket, req) && keep;
      } catch (const ClientGone&) {
        keep = false;
      } catch (const std::exception& e) {
        try {
          send_error(socket, req.version(),
                     ApiError{500, std::string("server error: ") + e.what(), "server_error"},
                     false);
        } catch (...) {
        }
        keep = false;
      }
      if (!keep) break;
    }
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }

  void send(tcp::socket& socket, unsigned version, http::status status, const std::string& body,
            bool keep_alive, const char* type = "application/json") {
    http::response<http::string_body> res{status, version};
    res.set(http::field::server, "tinyrun");
    res.set(http::field::content_type, type);
    res.keep_alive(keep_alive);
    res.body() = body;
    res.prepare_payload();
    beast::error_code ec;
    http::write(socket, res, ec);
    if (ec) throw ClientGone{};
  }

  void send_error(tcp::socket& socket, unsigned version, const ApiError& e, bool keep_alive) {
    send(socket, version, static_cast<http::status>(e.status), e.body(), keep_alive);
  }

  // Returns whether the connection may stay open.
  bool handle(tcp::socket& socket, const Request& req) {
    const std::string target(req.target());
    if (target == "/health" || target == "/v1/health") {
      send(socket, req.version(), http::status::ok, R"({"status":"ok"})", req.keep_alive());
      return true;
    }
    if (target == "/v1/models" || target == "/models") {
      const json::object model{{"id", opt_.model_name},
                               {"object", "model"},
                               {"created", now()},
                               {"owned_by", "tinyrun"}};
      send(socket, req.version(), http::status::ok,
           json::serialize(json::object{{"object", "list"}, {"data", json::array{model}}}),
           req.keep_alive());
      return true;
    }
    const std::optional<Endpoint> ep = endpoint_of(target);
    if (!ep) {
      send_error(socket, req.version(),
                 ApiError{404, "no such endpoint: " + target, "invalid_request_error"},
                 req.keep_alive());
      return true;
    }
    if (req.method() != http::verb::post) {
      send_error(socket, req.version(), ApiError{405, target + " takes POST"}, req.keep_alive());
      return true;
    }
    ParsedRequest p = parse_api_request(*ep, req.body());
    if (p.error) {
      send_error(socket, req.version(), *p.error, req.keep_alive());
      return true;
    }
    return generate(socket, req, *p.request);
  }

  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  // One generation, under the model's lock (requests queue here).
  bool generate(tcp::socket& socket, const Request& req, ApiRequest& r) {
    const bool chat = r.endpoint == Endpoint::ChatCompletions;
    if (r.max_tokens == 0) r.max_tokens = opt_.default_max_tokens;
    const std::string prompt_text = chat ? chat_.apply(r.messages) : r.prompt;
    const std::vector<int32_t> prompt = tok_.encode(prompt_text, true, chat);
    if (prompt.empty()) {
      send_error(socket, req.version(),
                 ApiError{400, "the prompt is empty", "invalid_request_error", "prompt"},
                 req.keep_alive());
      return true;
    }
    const std::string id = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(++next_id_);
    const int64_t created = now();
    const char* object =
        chat ? (r.stream ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    auto chunk = [&](const std::string& piece, const char* finish) {
      json::object choice{{"index", 0}};
      choice["finish_reason"] = finish ? json::value(finish) : json::value(nullptr);
      if (chat) {
        json::object delta;
        if (!piece.empty()) delta["content"] = piece;
        choice["delta"] = delta;
      } else {
        choice["text"] = piece;
        choice["logprobs"] = nullptr;
      }
      return json::serialize(json::object{{"id", id},
                                          {"object", object},
                                          {"created", created},
                                          {"model", opt_.model_name},
                                          {"choices", json::array{choice}}});
    };

    std::unique_lock<std::mutex> lock(model_);
    if (static_cast<int64_t>(prompt.size()) >= session_.context()) {
      lock.unlock();
      send_error(socket, req.version(),
                 ApiError{400,
                          "the prompt has " + std::to_string(prompt.size()) +
                              " tokens; the context holds " + std::to_string(session_.context()),
                          "invalid_request_error", chat ? "messages" : "prompt"},
                 req.keep_alive());
      return true;
    }
    if (r.stream) {
      http::response<http::empty_body> res{http::status::ok, req.version()};
      res.set(http::field::server, "tinyrun");
      res.set(http::field::content_type, "text/event-stream");
      res.set(http::field::cache_control, "no-cache");
      res.chunked(true);
      res.keep_alive(false);
      http::response_serializer<http::empty_body> sr{res};
      beast::error_code ec;
      http::write_header(socket, sr, ec);
      if (ec) throw ClientGone{};
      if (chat) write_event(socket, role_chunk(id, created));
    }
    Sampler sampler(r.sampling);
    session_.rewind(0);
    std::vector<int32_t> history = prompt;
    std::vector<float> logits = session_.feed(prompt);
    StreamDecoder dec(tok_);
    std::string text, pending; // pending: held back while it could start a stop sequence
    const char* finish = "length";
    bool hit_stop = false;
    int64_t produced = 0;
    for (; produced < r.max_tokens; ++produced) {
      const int32_t t = sampler.sample(logits, history);
      if (tok_.is_eog(t)) {
        finish = "stop";
        break;
      }
      history.push_back(t);
      pending += dec.push(t);
      bool stopped = false;
      for (const std::string& s : r.stop)
        if (const size_t at = pending.find(s); at != std::string::npos) {
          pending.resize(at);
          stopped = true;
        }
      // Emit what cannot be the start of a stop sequence.
      size_t keep = 0;
      if (!stopped)
        for (const std::string& s : r.stop)
          for (size_t k = std::min(s.size() - 1, pending.size()); k > keep; --k)
            if (pending.compare(pending.size() - k, k, s, 0, k) == 0) {
              keep = k;
              break;
            }
      const std::string out = pending.substr(0, pending.size() - keep);
      pending.erase(0, pending.size() - keep);
      text += out;
      if (r.stream && !out.empty()) write_event(socket, chunk(out, nullptr));
      if (stopped) {
        finish = "stop";
        hit_stop = true;
        ++produced;
        break;
      }
      if (session_.position() >= session_.context()) {
        ++produced;
        break;
      }
      logits = session_.feed(std::span<const int32_t>(&t, 1));
    }
    if (!hit_stop) {
      const std::string rest = pending + dec.flush();
      text += rest;
      if (r.stream && !rest.empty()) write_event(socket, chunk(rest, nullptr));
    }
    lock.unlock();
    if (r.stream) {
      write_event(socket, chunk("", finish));
      write_event(socket, "[DONE]");
      write_raw(socket, http::make_chunk_last());
      return false;
    }
    json::object choice{{"index", 0}, {"finish_reason", finish}};
    if (chat)
      choice["message"] = json::object{{"role", "assistant"}, {"content", text}};
    else {
      choice["text"] = text;
      choice["logprobs"] = nullptr;
    }
    const json::object usage{{"prompt_tokens", prompt.size()},
                             {"completion_tokens", produced},
                             {"total_tokens", static_cast<int64_t>(prompt.size()) + produced}};
    send(socket, req.version(), http::status::ok,
         json::serialize(json::object{{"id", id},
                                      {"object", object},
                                      {"created", created},
                                      {"model", opt_.model_name},
                                      {"choices", json::array{choice}},
                                      {"usage", usage}}),
         req.keep_alive());
    return true;
  }

  std::string role_chunk(const std::string& id, int64_t created) const {
    const json::object choice{{"index", 0},
                              {"delta", json::object{{"role", "assistant"}, {"content", ""}}},
                              {"finish_reason", nullptr}};
    return json::serialize(json::object{{"id", id},
                                        {"object", "chat.completion.chunk"},
                                        {"created", created},
                                        {"model", opt_.model_name},
                                        {"choices", json::array{choice}}});
  }

  template <class Chunk> void write_raw(tcp::socket& socket, const Chunk& c) {
    beast::error_code ec;
    asio::write(socket, c, ec);
    if (ec) throw ClientGone{};
  }

  void write_event(tcp::socket& socket, const std::string& data) {
    const std::string event = "data: " + data + "\n\n";
    write_raw(socket, http::make_chunk(asio::buffer(event)));
  }

  Session& session_;
  const Tokenizer& tok_;
  const ChatTemplate& chat_;
  ServerOptions opt_;
  std::mutex model_;
  std::atomic<int64_t> next_id_{0};
};

} // namespace

void serve(Session& session, const Tokenizer& tokenizer, const ChatTemplate& chat,
           const ServerOptions& options) {
  Server(session, tokenizer, chat, options).run();
}

} // namespace tg::llm
