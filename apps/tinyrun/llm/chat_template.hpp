#pragma once
// Chat templates of the llama-2, llama-3 and ChatML (Qwen) families, chosen by the shape of a
// GGUF's tokenizer.chat_template (its marker tokens), so a conversation becomes the prompt text
// the model was trained on. An unknown template falls back to ChatML with a warning.
#include <string>
#include <vector>

namespace tg::llm {

struct ChatMessage {
  std::string role; // "system", "user", "assistant"
  std::string content;
};

enum class ChatFormat { Llama2, Llama3, ChatML };

struct ChatTemplate {
  ChatFormat format = ChatFormat::ChatML;
  bool recognized = true; // false: fell back to ChatML
  // The prompt for `messages`, ending with the assistant's header when `add_generation_prompt`.
  // BOS is not included (the tokenizer adds it).
  std::string apply(const std::vector<ChatMessage>& messages,
                    bool add_generation_prompt = true) const;
  const char* name() const;
};

// From a Jinja template's text ("" when the model has none: ChatML, recognized).
ChatTemplate detect_chat_template(const std::string& jinja);

} // namespace tg::llm
