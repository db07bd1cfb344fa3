#pragma once
// Shared helpers of the llm tests: finding the data folder's models, reading the greedy
// reference, running greedy decoding through a Session.
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "llm/sampler.hpp"
#include "llm/session.hpp"
#include "tg/data.hpp"

namespace llm_test {

// The folder of the files the tests write for themselves (and for llama.cpp to check them on).
inline std::filesystem::path fixture_dir() {
  const auto d = std::filesystem::temp_directory_path() / "tg_llm_fixtures";
  std::filesystem::create_directories(d);
  return d;
}

// Writes `path` through `write(tmp)` and a rename, so suites running in parallel that write the
// same fixture never read a half-written file.
template <class F> void write_atomically(const std::filesystem::path& path, F&& write) {
  const auto tmp = path.string() + ".tmp" + std::to_string(::getpid());
  write(std::filesystem::path(tmp));
  std::filesystem::rename(tmp, path);
}

inline std::optional<std::filesystem::path> model_file(const std::string& rel) {
  const auto dir = tg::data::data_dir(TG_SOURCE_DIR);
  if (!dir || !std::filesystem::exists(*dir / "models" / rel)) return std::nullopt;
  return *dir / "models" / rel;
}

struct GreedyReference {
  std::vector<int32_t> prompt, generated;
  std::vector<float> logits0;
  std::string text;
};

inline GreedyReference read_reference(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  const boost::json::object o = boost::json::parse(ss.str()).as_object();
  GreedyReference r;
  for (const auto& v : o.at("prompt_ids").as_array())
    r.prompt.push_back(static_cast<int32_t>(v.as_int64()));
  for (const auto& v : o.at("generated_ids").as_array())
    r.generated.push_back(static_cast<int32_t>(v.as_int64()));
  for (const auto& v : o.at("logits_step0").as_array())
    r.logits0.push_back(static_cast<float>(v.to_number<double>()));
  r.text = std::string(o.at("text").as_string());
  return r;
}

// The logits after `prompt`, then `n` greedy tokens.
inline std::pair<std::vector<float>, std::vector<int32_t>>
greedy(tg::llm::Session& s, const std::vector<int32_t>& prompt, size_t n) {
  std::vector<float> logits = s.feed(prompt);
  const std::vector<float> first = logits;
  std::vector<int32_t> out;
  while (out.size() < n) {
    const int32_t t = tg::llm::argmax(logits);
    out.push_back(t);
    if (out.size() < n) logits = s.feed(std::span<const int32_t>(&t, 1));
  }
  return {first, out};
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = a.size() == b.size() ? 0 : 1e30;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(double{a[i]} - b[i]));
  return m;
}

} // namespace llm_test
