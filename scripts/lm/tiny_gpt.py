"""PyTorch twin of src/tutorial/lm/model.ts (TinyGpt) and of one training run through the library.

Reads one JSON request on stdin and writes one JSON answer on stdout, so that a test can train
both models from the same numbers and compare them (test/scripts/lm/tinyGptTorch.test.ts):

    request = {
      "config": {"vocabularySize": 38, "contextLength": 32, "width": 32, "heads": 4, "layers": 2},
      "weights": [{"name": "token_embedding", "shape": [38, 32], "values": [...]}, ...],
      "decayed": ["token_embedding", "blocks.0.qkv.weight", ...],
      "windows": [[{"tokens": [[1, 5, ...], ...], "mask": [[1, 1, ..., 0], ...]}, ...], ...],
      "optimizer": {"learningRates": [...one per update...], "beta1": 0.9, "beta2": 0.999,
                    "epsilon": 1e-8, "weightDecay": 0.1, "clipNorm": 1.0}
    }
    answer = {"torch": "1.13.0", "losses": [...one per update...],
              "gradientNorms": [...], "weights": {"token_embedding": [...flat...], ...}}

The model is written with the weights in tfjs's layout (dense kernels [in, out], multiplied as
x @ W), so the tfjs numbers go in unchanged. Each window follows the library's token-exact rule:
the gradients of the micro-batches' summed losses are added up and divided once by the window's
count of target tokens (after the causal shift); the average is clipped to clipNorm by global
norm; then AdamW (decoupled decay lr * weightDecay on the "decayed" weights, before the Adam step,
as torch.optim.AdamW and the library both do).
"""
import json
import math
import sys

import torch
import torch.nn.functional as F

# The library's GroupNormalization default, and PyTorch's LayerNorm default.
EPSILON = 1e-5
# The additive causal mask of src/tutorial/lm/attention.ts.
MASKED = -1e9


def layer_norm(p, name, x):
    return F.layer_norm(x, (x.shape[-1],), p[f"{name}.weight"], p[f"{name}.bias"], EPSILON)


def dense(p, name, x):
    return x @ p[f"{name}.weight"] + p[f"{name}.bias"]


def logits_of(p, config, tokens):
    batch, time = tokens.shape
    width, heads = config["width"], config["heads"]
    depth = width // heads
    mask = torch.triu(torch.full((time, time), MASKED), diagonal=1)
    x = p["token_embedding"][tokens] + p["position_embedding"][:time]
    for i in range(config["layers"]):
        b = f"blocks.{i}"
        q, k, v = dense(p, f"{b}.qkv", layer_norm(p, f"{b}.attentionNorm", x)).split(width, dim=-1)
        q, k, v = (t.reshape(batch, time, heads, depth).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(depth) + mask
        mixed = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, time, width)
        x = x + dense(p, f"{b}.projection", mixed)
        hidden = F.gelu(dense(p, f"{b}.hidden", layer_norm(p, f"{b}.mlpNorm", x)))
        x = x + dense(p, f"{b}.output", hidden)
    return dense(p, "head", layer_norm(p, "final_norm", x))


def next_token_loss(logits, tokens, mask):
    """Summed cross-entropy of predicting token t+1 at position t, over real targets, and their count."""
    log_probabilities = F.log_softmax(logits[:, :-1], dim=-1)
    picked = log_probabilities.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    weights = mask[:, 1:]
    return -(picked * weights).sum(), weights.sum()


def train(request):
    config = request["config"]
    params = {
        w["name"]: torch.tensor(w["values"], dtype=torch.float32).reshape(w["shape"]).requires_grad_()
        for w in request["weights"]
    }
    o = request["optimizer"]
    decayed = set(request["decayed"])
    groups = [
        {"params": [t for n, t in params.items() if n in decayed], "weight_decay": o["weightDecay"]},
        {"params": [t for n, t in params.items() if n not in decayed], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=o["learningRates"][0], betas=(o["beta1"], o["beta2"]), eps=o["epsilon"])
    losses, norms = [], []
    for update, window in enumerate(request["windows"]):
        sums = {n: torch.zeros_like(t) for n, t in params.items()}
        loss_total, count_total = 0.0, 0.0
        for micro in window:
            tokens = torch.tensor(micro["tokens"], dtype=torch.long)
            mask = torch.tensor(micro["mask"], dtype=torch.float32)
            for t in params.values():
                t.grad = None
            loss, count = next_token_loss(logits_of(params, config, tokens), tokens, mask)
            loss.backward()
            for n, t in params.items():
                sums[n] += t.grad
            loss_total += loss.item()
            count_total += count.item()
        grads = {n: s / count_total for n, s in sums.items()}
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
        if o.get("clipNorm") is not None and norm > o["clipNorm"]:
            grads = {n: g * (o["clipNorm"] / norm) for n, g in grads.items()}
        for n, t in params.items():
            t.grad = grads[n]
        for group in optimizer.param_groups:
            group["lr"] = o["learningRates"][update]
        optimizer.step()
        losses.append(loss_total / count_total)
        norms.append(norm)
    weights = {n: t.detach().reshape(-1).tolist() for n, t in params.items()}
    return {"torch": torch.__version__, "losses": losses, "gradientNorms": norms, "weights": weights}


if __name__ == "__main__":
    torch.set_num_threads(1)
    json.dump(train(json.load(sys.stdin)), sys.stdout)
