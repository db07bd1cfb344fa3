#include "tg/env.hpp"

#include <cerrno>
#include <cstdlib>

#include "tg/error.hpp"

namespace tg {

int64_t getenv_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0')
    throw Error(std::string("environment variable ") + name + "='" + v +
                "' is not an integer; unset it or give a number");
  return x;
}

std::string getenv_str(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v == nullptr || *v == '\0') ? fallback : std::string(v);
}

} // namespace tg
