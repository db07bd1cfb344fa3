#pragma once
// `tinyrun llm generate|chat|bench|serve|quantize|random`: see docs/LLM.md.
#include <string>
#include <vector>

namespace tinyrun {

int llm_command(const std::vector<std::string>& args);

} // namespace tinyrun
