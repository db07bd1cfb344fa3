#pragma once
// BERT as Hugging Face's BertModel / BertForPreTraining (and tinygrad's extra/models/bert.py):
// embeddings (words + positions + token types, LayerNorm), post-LayerNorm encoder layers
// (self-attention with an additive padding mask, dense + residual + LayerNorm, GELU MLP, dense
// + residual + LayerNorm), the pooler (dense + tanh of [CLS]), and for pretraining the heads:
// masked-LM (dense, GELU, LayerNorm, the word embeddings transposed as decoder, a bias) and
// next-sentence (Linear(hidden, 2) on the pooled output). State dict keys are Hugging Face's
// (`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, ...;
// BertForPreTraining under `bert.` plus `cls.`). Dropout (hidden and attention) acts only in
// tg::Train mode.
#include <array>
#include <memory>
#include <vector>

#include "bert_config.hpp"
#include "tg/nn.hpp"

namespace tinyrun {

class BertLayer : public tg::nn::Module {
public:
  BertLayer(const BertConfig& c, double dropout);
  // x (B, S, H); mask: additive (B, 1, 1, S).
  tg::Tensor operator()(const tg::Tensor& x, const tg::Tensor& mask) const;

private:
  tg::nn::Linear &query, &key, &value, &attn_out;
  tg::nn::LayerNorm& attn_norm;
  tg::nn::Linear &intermediate, &out;
  tg::nn::LayerNorm& out_norm;
  int64_t heads_;
  double dropout_;
  bool tanh_gelu_;
};

class BertModel : public tg::nn::Module {
public:
  BertModel(const BertConfig& c, double dropout = 0.1, bool pooler = true);
  // input_ids, token_type_ids (B, S) integers; attention_mask (B, S) 1 for tokens, 0 for
  // padding. Returns the last hidden states (B, S, H).
  tg::Tensor operator()(const tg::Tensor& input_ids, const tg::Tensor& token_type_ids,
                        const tg::Tensor& attention_mask) const;
  tg::Tensor pool(const tg::Tensor& hidden) const; // tanh(dense(hidden[:, 0]))
  const BertConfig& config() const { return config_; }
  tg::nn::Embedding& word_embeddings;

private:
  BertConfig config_;
  tg::nn::Embedding &position_embeddings, &token_type_embeddings;
  tg::nn::LayerNorm& embeddings_norm;
  std::vector<BertLayer*> layers_;
  tg::nn::Linear* pooler_ = nullptr;
  double dropout_;
};

struct PretrainingOutput {
  tg::Tensor mlm_logits; // (B, M, vocab) at the masked positions
  tg::Tensor nsp_logits; // (B, 2)
};

class BertForPreTraining : public tg::nn::Module {
public:
  BertForPreTraining(const BertConfig& c, double dropout = 0.1);
  // masked_positions (B, M) integers: the positions whose tokens the MLM head predicts.
  PretrainingOutput operator()(const tg::Tensor& input_ids, const tg::Tensor& token_type_ids,
                               const tg::Tensor& attention_mask,
                               const tg::Tensor& masked_positions) const;
  // The MLPerf loss: masked-LM cross entropy over the positions whose weight is > 0, divided
  // by (their weight sum + 1e-5) as the reference, plus next-sentence cross entropy (mean).
  // Returns (total, mlm, nsp).
  std::array<tg::Tensor, 3> loss(const PretrainingOutput& out, const tg::Tensor& masked_lm_ids,
                                 const tg::Tensor& masked_lm_weights,
                                 const tg::Tensor& next_sentence_labels) const;
  BertModel& bert;

private:
  tg::nn::Linear& transform;
  tg::nn::LayerNorm& transform_norm;
  tg::Tensor decoder_bias_;
  tg::nn::Linear& seq_relationship;
};

// BERT's GELU: exact (erf) for "gelu", the tanh form for "gelu_new"/"gelu_pytorch_tanh".
tg::Tensor bert_gelu(const tg::Tensor& x, bool tanh_form);

} // namespace tinyrun
