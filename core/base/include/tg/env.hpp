#pragma once
// Environment knobs with tinygrad's meaning (DEBUG, SPEC, TRACK_MATCH_STATS, ...).
#include <cstdint>
#include <string>

namespace tg {

// Integer value of an environment variable, or `fallback` when unset or empty.
// A value that is not an integer raises tg::Error naming the variable.
int64_t getenv_int(const char* name, int64_t fallback = 0);
std::string getenv_str(const char* name, const std::string& fallback = "");

} // namespace tg
