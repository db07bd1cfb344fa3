// The knob registry: definitions of every knob of TG_FOR_EACH_KNOB, the project's one read of
// the environment, value checking, and Context's overrides.
#include "tg/knobs.hpp"

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "tg/error.hpp"

namespace tg {

namespace knobs {
#define TG_DEFINE_INT_KNOB(name, fallback, min, max, accepts, doc)                                 \
  constinit IntKnob name(#name, fallback, min, max, accepts, doc);
#define TG_DEFINE_STRING_KNOB(name, fallback, accepts, doc)                                        \
  constinit StringKnob name(#name, fallback, accepts, doc);
TG_FOR_EACH_KNOB(TG_DEFINE_INT_KNOB, TG_DEFINE_STRING_KNOB)
#undef TG_DEFINE_INT_KNOB
#undef TG_DEFINE_STRING_KNOB
} // namespace knobs

namespace {
#define TG_KNOB_ADDRESS(name, ...) &knobs::name,
Knob* const g_all[] = {TG_FOR_EACH_KNOB(TG_KNOB_ADDRESS, TG_KNOB_ADDRESS)};
#undef TG_KNOB_ADDRESS
} // namespace

std::span<Knob* const> all_knobs() { return g_all; }

Knob& find_knob(std::string_view name) {
  std::string names;
  for (Knob* k : g_all) {
    if (k->name() == name) return *k;
    names += (names.empty() ? "" : ", ") + std::string(k->name());
  }
  throw Error("unknown knob '" + std::string(name) + "'; the knobs are " + names);
}

const char* Knob::env() const {
  const char* v = std::getenv(name_);
  return v == nullptr || *v == '\0' ? nullptr : v;
}

std::string Knob::text() const {
  if (type_ == Type::Int) return std::to_string(static_cast<const IntKnob*>(this)->get());
  return static_cast<const StringKnob*>(this)->get();
}

int64_t IntKnob::parse(std::string_view text, std::string_view origin) const {
  const std::string s(text);
  const std::string takes = "; " + std::string(name()) + " takes " + std::string(accepts()) + " (" +
                            std::string(doc()) + ")";
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || end == s.c_str() || *end != '\0')
    throw Error(std::string(origin) + " " + std::string(name()) + "='" + s + "' is not an integer" +
                takes);
  if (x < min_ || x > max_)
    throw Error(std::string(origin) + " " + std::string(name()) + "='" + s + "' is out of range" +
                takes);
  return x;
}

int64_t IntKnob::load() const {
  const char* v = env();
  const int64_t x = v == nullptr ? default_ : parse(v, "environment variable");
  value_.store(x, std::memory_order_relaxed);
  set_.store(true, std::memory_order_release);
  return x;
}

std::string StringKnob::load() const {
  const char* v = env();
  auto* fresh = new std::string(v == nullptr ? default_ : v);
  const std::string* expected = nullptr;
  // Another thread may have read it first; keep the first value (both are the same text).
  if (!value_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;
    return *expected;
  }
  return *fresh;
}

namespace {
// A string knob's value set by a Context stays allocated after the Context ends: another thread
// may still be reading it (readers take no lock). Kept here, reachable for the whole process,
// so that a leak checker (make test-asan) does not report it.
const std::string* keep_string(std::string text) {
  static auto* mu = new std::mutex;
  static auto* kept = new std::vector<std::unique_ptr<const std::string>>;
  std::lock_guard lock(*mu);
  kept->push_back(std::make_unique<const std::string>(std::move(text)));
  return kept->back().get();
}
} // namespace

Context::Context(std::initializer_list<Setting> settings) {
  // Check everything before changing anything, so a bad setting leaves no half-applied scope.
  std::vector<int64_t> parsed;
  for (const Setting& s : settings) {
    Knob& k = find_knob(s.name);
    if (k.type() != Knob::Type::Int) continue;
    auto& ik = static_cast<IntKnob&>(k);
    parsed.push_back(s.text.empty() ? ik.fallback() : ik.parse(s.text, "Context"));
  }
  auto next = parsed.begin();
  for (const Setting& s : settings) {
    Knob& k = find_knob(s.name);
    if (k.type() == Knob::Type::Int) {
      auto& ik = static_cast<IntKnob&>(k);
      saved_.push_back({&k, ik.set_.load(), ik.value_.load(), nullptr});
      ik.value_.store(*next++, std::memory_order_relaxed);
      ik.set_.store(true, std::memory_order_release);
    } else {
      auto& sk = static_cast<StringKnob&>(k);
      saved_.push_back({&k, false, 0, sk.value_.load()});
      sk.value_.store(keep_string(s.text.empty() ? sk.default_ : s.text),
                      std::memory_order_release);
    }
  }
}

Context::~Context() {
  // Restored in reverse, so a knob set twice in one Context ends as it was before.
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->knob->type() == Knob::Type::Int) {
      auto& ik = static_cast<IntKnob&>(*it->knob);
      ik.value_.store(it->int_value, std::memory_order_relaxed);
      ik.set_.store(it->int_set, std::memory_order_release);
    } else {
      static_cast<StringKnob&>(*it->knob).value_.store(it->string_value, std::memory_order_release);
    }
  }
}

} // namespace tg
