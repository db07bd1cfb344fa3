// Chat templates; see chat_template.hpp.
#include "chat_template.hpp"

#include "tg/error.hpp"

namespace tg::llm {

namespace {

// Each family is recognized by a marker its templates always contain.
struct Family {
  const char* marker;
  ChatFormat format;
};
const Family kFamilies[] = {
    {"<|start_header_id|>", ChatFormat::Llama3},
    {"<|im_start|>", ChatFormat::ChatML},
    {"[INST]", ChatFormat::Llama2},
};

} // namespace

ChatTemplate detect_chat_template(const std::string& jinja) {
  ChatTemplate t;
  if (jinja.empty()) return t;
  for (const Family& f : kFamilies)
    if (jinja.find(f.marker) != std::string::npos) {
      t.format = f.format;
      return t;
    }
  t.recognized = false;
  return t;
}

const char* ChatTemplate::name() const {
  switch (format) {
  case ChatFormat::Llama2:
    return "llama2";
  case ChatFormat::Llama3:
    return "llama3";
  default:
    return "chatml";
  }
}

std::string ChatTemplate::apply(const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt) const {
  for (const ChatMessage& m : messages)
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      throw Error("chat: unknown role '" + m.role + "' (system, user or assistant)");
  std::string out;
  switch (format) {
  case ChatFormat::Llama3:
    for (const ChatMessage& m : messages)
      out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
    if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
  case ChatFormat::ChatML:
    for (const ChatMessage& m : messages)
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
  case ChatFormat::Llama2: {
    // [INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] assistant </s><s>[INST] user [/INST]
    std::string system;
    bool first = true;
    for (const ChatMessage& m : messages) {
      if (m.role == "system") {
        system = m.content;
      } else if (m.role == "user") {
        out += first ? "[INST] " : "<s>[INST] ";
        if (!system.empty()) out += "<<SYS>>\n" + system + "\n<</SYS>>\n\n";
        system.clear();
        out += m.content + " [/INST]";
        first = false;
      } else {
        out += " " + m.content + " </s>";
      }
    }
    return out;
  }
  }
  return out;
}

} // namespace tg::llm
