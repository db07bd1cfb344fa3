#pragma once
// The pre-tokenizers of byte-level BPE models: the text is cut into words by the model
// family's regular expression before BPE merges run within each word. Each expression is an
// ordered list of alternatives (tables in pretokenize.cpp), tried at every position as a regex
// engine would: the first alternative that matches wins, its quantifiers greedy.
//   gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  llama3's with \p{N} (one digit per word)
#include <string>
#include <string_view>
#include <vector>

namespace tg::llm {

enum class PreTokenizer { Gpt2, Llama3, Qwen2 };

// From GGUF's tokenizer.ggml.pre ("llama-bpe", "qwen2", "gpt-2", ...); unknown names are GPT-2's.
PreTokenizer pre_tokenizer_from_name(const std::string& name);
const char* pre_tokenizer_name(PreTokenizer p);

std::vector<std::string> pretokenize(std::string_view text, PreTokenizer p);

} // namespace tg::llm
