#!/usr/bin/python3
"""Trains the shipped base policy `models/spindle-base` on the expert transcripts written by
`scripts/base-model/transcripts.ts` (Spindle's own experts through its real sandbox).

PyTorch on the CPU is only the builder: it runs the same transformer step several times faster than
tfjs-wasm on this machine. What it writes is Spindle's format (HF layout: config.json,
model.safetensors in float32), the same Llama formulas as src/model/transformer.ts, and
`reference-logits.json`, which tests/model/shipped-model.test.ts checks Spindle's forward against.

    /usr/bin/python3 scripts/base-model/train.py                 # train; resumes from .build/state.pt
    /usr/bin/python3 scripts/base-model/train.py --steps 3000    # train longer (the cosine schedule stretches)
    /usr/bin/python3 scripts/base-model/train.py --init models/spindle-base/model.safetensors --steps 900 --lr 1e-3
                                                                  # fine-tune the shipped weights on a new mix
    /usr/bin/python3 scripts/base-model/train.py --config scripts/base-model/bpe-config.json --data … --out …
                                                                  # another shape and tokenizer (the BPE build)

Resumable: every --save-every steps the weights, optimizer, step and data order go to
models/spindle-base/.build/state.pt, and the weights to models/spindle-base/ (so an interrupted build
still leaves a loadable model). Needs Debian's python3-torch (apt-get install python3-torch).
"""
import argparse
import json
import math
import os
import struct
import time

import torch
import torch.nn.functional as F

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 266, "hidden_size": 128,
    "intermediate_size": 384, "num_hidden_layers": 5, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 32, "max_position_embeddings": 1024, "rope_theta": 10000, "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False, "hidden_act": "silu",
    "rope_scaling": None, "torch_dtype": "float32", "eos_token_id": 265, "pad_token_id": 264,
    "spindle_tokenizer": "byte",
}


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def attention(q, k, v):
    """Causal softmax attention, [B, H, T, D]. PyTorch 2's fused kernel computes the same formula without
    holding the [T, T] scores: 4-6x faster at 2,048 positions on 2 cores."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # [B, H, T, T]
    return att.masked_fill(future, float("-inf")).softmax(-1) @ v


class Llama(torch.nn.Module):
    """The decoder of src/model/transformer.ts: RMSNorm, RoPE, grouped-query attention, SwiGLU, tied head."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        C, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
        H, Hkv, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
        shapes = {"model.embed_tokens.weight": (V, C), "model.norm.weight": (C,)}
        for i in range(cfg["num_hidden_layers"]):
            pre = f"model.layers.{i}"
            shapes.update({
                f"{pre}.input_layernorm.weight": (C,), f"{pre}.post_attention_layernorm.weight": (C,),
                f"{pre}.self_attn.q_proj.weight": (H * D, C), f"{pre}.self_attn.k_proj.weight": (Hkv * D, C),
                f"{pre}.self_attn.v_proj.weight": (Hkv * D, C), f"{pre}.self_attn.o_proj.weight": (C, H * D),
                f"{pre}.mlp.gate_proj.weight": (I, C), f"{pre}.mlp.up_proj.weight": (I, C), f"{pre}.mlp.down_proj.weight": (C, I),
            })
        self.names = list(shapes)
        self.params = torch.nn.ParameterList()
        for name, shape in shapes.items():
            init = torch.ones(shape) if len(shape) == 1 else torch.randn(shape) * 0.02
            self.params.append(torch.nn.Parameter(init))

    def weights(self):
        return dict(zip(self.names, self.params))

    def forward(self, ids):
        cfg, p = self.cfg, self.weights()
        B, T = ids.shape
        H, Hkv, D, eps = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["rms_norm_eps"]
        inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
        freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv)
        cos, sin = torch.cat([freqs, freqs], -1).cos(), torch.cat([freqs, freqs], -1).sin()
        x = p["model.embed_tokens.weight"][ids]  # [B, T, C]
        for i in range(cfg["num_hidden_layers"]):
            pre = f"model.layers.{i}"
            h = rms_norm(x, p[f"{pre}.input_layernorm.weight"], eps)
            q = (h @ p[f"{pre}.self_attn.q_proj.weight"].T).view(B, T, H, D).transpose(1, 2)  # [B, H, T, D]
            k = (h @ p[f"{pre}.self_attn.k_proj.weight"].T).view(B, T, Hkv, D).transpose(1, 2)
            v = (h @ p[f"{pre}.self_attn.v_proj.weight"].T).view(B, T, Hkv, D).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            k, v = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
            o = attention(q, k, v).transpose(1, 2).reshape(B, T, H * D)
            x = x + o @ p[f"{pre}.self_attn.o_proj.weight"].T
            h = rms_norm(x, p[f"{pre}.post_attention_layernorm.weight"], eps)
            g, u = h @ p[f"{pre}.mlp.gate_proj.weight"].T, h @ p[f"{pre}.mlp.up_proj.weight"].T
            x = x + (F.silu(g) * u) @ p[f"{pre}.mlp.down_proj.weight"].T
        x = rms_norm(x, p["model.norm.weight"], eps)
        return x @ p["model.embed_tokens.weight"].T  # [B, T, V]


def load_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_safetensors(path):
    """Float32 tensors of a safetensors file (what write_safetensors writes)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        blob = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        out[name] = torch.frombuffer(bytearray(blob[start:end]), dtype=torch.float32).reshape(spec["shape"])
    return out


# Transcripts are batched with others of similar length (up to each bucket's bound), a batch holding
# about --batch-tokens tokens: a multi-step transcript of 900 tokens would otherwise pad fifteen short
# ones to its length and make every step five times slower.
BUCKETS = [384, 704, 1024]


def buckets_for(context):
    """Length bounds of the batches: the byte build's, or doubling from 256 up to the context."""
    if context <= 1024:
        return BUCKETS
    bounds = [256]
    while bounds[-1] < context:
        bounds.append(min(context, bounds[-1] * 2))
    return bounds


def bucket_rows(rows):
    buckets = [[] for _ in BUCKETS]
    for i, r in enumerate(rows):
        buckets[next(b for b, bound in enumerate(BUCKETS) if len(r["tokens"]) <= bound or b == len(BUCKETS) - 1)].append(i)
    return buckets


def batch_of(rows, pad):
    """Token ids, next-token targets and per-target loss weights (assistant tokens; copies weigh more)."""
    T = max(len(r["tokens"]) for r in rows)
    ids = torch.full((len(rows), T), pad, dtype=torch.long)
    assistant = torch.zeros(len(rows), T)
    copy = torch.zeros(len(rows), T)
    for i, r in enumerate(rows):
        n = len(r["tokens"])
        ids[i, :n] = torch.tensor(r["tokens"])
        assistant[i, :n] = torch.tensor(r["assistant"], dtype=torch.float32)
        copy[i, :n] = torch.tensor(r["copy"], dtype=torch.float32)
    # The first token of each assistant turn decides what the turn does (think and call again, or answer):
    # one token in a hundred, and the one a multi-step transcript most often gets wrong.
    decision = assistant * (1 - torch.cat([torch.zeros(len(rows), 1), assistant[:, :-1]], 1))
    return ids, assistant[:, 1:], copy[:, 1:], decision[:, 1:]


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)  # an interrupted write never leaves a torn model behind


@torch.no_grad()
def heldout_accuracy(model, rows, pad, chunk=32):
    """Teacher-forced greedy accuracy on assistant tokens and on copied tokens, per environment."""
    stats = {}
    for s in range(0, len(rows), chunk):
        part = rows[s:s + chunk]
        ids, assistant, copy, _ = batch_of(part, pad)
        right = (model(ids)[:, :-1].argmax(-1) == ids[:, 1:]).float()
        for i, r in enumerate(part):
            e = stats.setdefault(r["env"], [0.0, 0.0, 0.0, 0.0])
            e[0] += float((right[i] * assistant[i]).sum()); e[1] += float(assistant[i].sum())
            e[2] += float((right[i] * copy[i]).sum()); e[3] += float(copy[i].sum())
    return {env: {"assistant": a / max(n, 1), "copy": c / max(m, 1), "copy_tokens": int(m)} for env, (a, n, c, m) in sorted(stats.items())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="models/spindle-base/.build/transcripts.jsonl")
    ap.add_argument("--heldout", default="models/spindle-base/.build/heldout.jsonl")
    ap.add_argument("--out", default="models/spindle-base")
    ap.add_argument("--steps", type=int, default=1800)
    ap.add_argument("--batch", type=int, default=16, help="rows per batch of the shortest bucket")
    ap.add_argument("--init", default=None, help="start from these weights (a model.safetensors) instead of random ones")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--copy-weight", type=float, default=1.0, help="extra loss weight on copied tokens")
    ap.add_argument("--decision-weight", type=float, default=0.0, help="extra loss weight on the first token of each assistant turn")
    ap.add_argument("--save-every", type=int, default=250)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--heldout-stride", type=int, default=3, help="check every Nth held-out transcript at each save")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--config", default=None, help="the model's config.json (shape, vocabulary, special ids) instead of the byte build's")
    ap.add_argument("--focus", default=None, help="ENV[:LEVEL]=SHARE: that share of the batches drawn from the transcripts of ENV (at LEVEL) only, a pass on one environment that keeps the rest")
    ap.add_argument("--focus-until", type=int, default=None, help="draw --focus batches only before this step (a warm-up), the plain mix after it")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    global CONFIG, BUCKETS
    if args.config:
        with open(args.config) as f:
            CONFIG = json.load(f)
        BUCKETS = buckets_for(CONFIG["max_position_embeddings"])
    rows, heldout = load_rows(args.data), load_rows(args.heldout)
    pad = CONFIG["pad_token_id"]
    model = Llama(CONFIG)
    decay = [p for n, p in zip(model.names, model.params) if not n.endswith("norm.weight")]
    keep = [p for n, p in zip(model.names, model.params) if n.endswith("norm.weight")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": keep, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.98))
    state_path = os.path.join(args.out, ".build", "state.pt")
    step, log = 0, []
    if os.path.exists(state_path):
        state = torch.load(state_path)
        model.load_state_dict(state["model"]); opt.load_state_dict(state["opt"]); step, log = state["step"], state["log"]
        print(f"resumed at step {step}")
    elif args.init:
        weights = read_safetensors(args.init)
        with torch.no_grad():
            for name, p in zip(model.names, model.params):
                p.copy_(weights[name])
        print(f"initialised from {args.init}")
    buckets = bucket_rows(rows)
    focus, focus_share = (args.focus.split("=")[0], float(args.focus.split("=")[1])) if args.focus else ("", 0.0)
    focus_env, _, focus_level = focus.partition(":")
    focused = lambda r: r["env"] == focus_env and (not focus_level or r["level"] == int(focus_level))
    focus_buckets = [[i for i in b if focused(rows[i])] for b in buckets]
    if focus and not any(focus_buckets):
        raise SystemExit(f"--focus {args.focus}: no transcript of {focus} in {args.data}")
    print("buckets (rows ≤ tokens): " + ", ".join(f"{len(b)} ≤ {bound}" for b, bound in zip(buckets, BUCKETS)))

    def lr_at(s):  # linear warm-up, then cosine to 10% over --steps
        if s < args.warmup:
            return args.lr * (s + 1) / args.warmup
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, (s - args.warmup) / max(1, args.steps - args.warmup)))))

    def save():
        os.makedirs(os.path.dirname(state_path), exist_ok=True)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "log": log}, state_path + ".tmp")
        os.replace(state_path + ".tmp", state_path)
        write_safetensors(os.path.join(args.out, "model.safetensors"), model.weights(), {"format": "pt"})
        with open(os.path.join(args.out, "config.json"), "w") as f:
            json.dump(CONFIG, f, indent=2)
        with open(os.path.join(args.out, ".build", "train-log.json"), "w") as f:
            json.dump({"args": vars(args), "log": log}, f, indent=1)
        write_reference(model, heldout, args.out)  # so every saved model can be checked against Spindle's forward

    started, smoothed = time.time(), None
    while step < args.steps:
        # The batch of a step depends only on (seed, step): a resumed run sees the same batches.
        g = torch.Generator().manual_seed(args.seed * 1_000_003 + step)
        # A bucket, then rows of it: as many as fill the shortest bucket's batch in tokens. The bucket is drawn
        # in proportion to its rows over its batch size, so every transcript is as likely to be seen, short
        # or long. (In proportion to rows alone, a short transcript was seen 2-3x as often as a long one: the
        # multi-step mix's direct answers, 10% of its transcripts, made half of the base's first decisions.)
        share = focus_share if args.focus_until is None or step < args.focus_until else 0.0
        source = focus_buckets if float(torch.rand(1, generator=g)) < share else buckets
        sizes = [max(1, args.batch * BUCKETS[0] // bound) for bound in BUCKETS]
        b = int(torch.multinomial(torch.tensor([len(x) / n for x, n in zip(source, sizes)]), 1, generator=g))
        size = sizes[b]
        picks = [source[b][i] for i in torch.randint(0, len(source[b]), (size,), generator=g).tolist()]
        ids, assistant, copy, decision = batch_of([rows[i] for i in picks], pad)
        # A turn's first token is weighed as a decision only, even where it is also a copy (an answer that
        # repeats what a read showed): weighed as both, stopping early outweighed carrying on 8 to 5.
        weight = assistant * (1 + args.copy_weight * copy * (1 - decision) + args.decision_weight * decision)
        logits = model(ids)[:, :-1]
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none").view_as(weight)
        loss = (nll * weight).sum() / weight.sum()
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        step += 1
        smoothed = float(loss.detach()) if smoothed is None else 0.95 * smoothed + 0.05 * float(loss.detach())
        if step % 25 == 0:
            print(f"step {step}/{args.steps} loss {smoothed:.4f} grad_norm {grad_norm:.2f} lr {lr_at(step):.2e} ({(time.time() - started) / 25:.2f} s/step)", flush=True)
            started = time.time()
        if step % args.save_every == 0 or step == args.steps:
            acc = heldout_accuracy(model, heldout[::args.heldout_stride], pad)  # a part of the held-out set: a quick check
            log.append({"step": step, "loss": smoothed, "heldout": acc})
            print("  held-out teacher-forced copy accuracy: " + ", ".join(f"{e} {v['copy']:.3f}" for e, v in acc.items()), flush=True)
            save()


@torch.no_grad()
def write_reference(model, heldout, out):
    """Logits of the trained model on one held-out transcript: Spindle's forward must reproduce them."""
    tokens = heldout[0]["tokens"][:96]
    logits = model(torch.tensor([tokens]))[0]
    positions = list(range(0, len(tokens), 12))
    with open(os.path.join(out, "reference-logits.json"), "w") as f:
        json.dump({"tokens": tokens, "positions": positions, "logits": [[round(v, 5) for v in logits[p].tolist()] for p in positions]}, f)


if __name__ == "__main__":
    main()
