#!/usr/bin/env python3
"""Checks a packaged base in transformers, as a user would load it: AutoModelForCausalLM reproduces the
builder's logits (reference-logits.json), and for every row of interop-rows.ts `apply_chat_template(messages,
tools=tools)` gives exactly the token ids Spindle trained on, with the assistant mask of its `{% generation %}`
tags equal to Spindle's. Needs torch 2 and transformers (the builder's venv; docs/base-model.md). Exits 1 on
any difference.

    python3 scripts/base-model/hf_check.py --dir <model folder> --rows <rows.jsonl>
"""
import argparse
import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rows", required=True)
    a = ap.parse_args()
    tok = AutoTokenizer.from_pretrained(a.dir)
    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.float32).eval()
    ref = json.load(open(f"{a.dir}/reference-logits.json"))
    with torch.no_grad():
        logits = model(torch.tensor([ref["tokens"]])).logits[0]
    worst = max(float((logits[p] - torch.tensor(ref["logits"][i])).abs().max()) for i, p in enumerate(ref["positions"]))
    failures = []
    if worst > 1e-3:
        failures.append(f"logits differ from the builder's by {worst:.2e}")
    rows = [json.loads(line) for line in open(a.rows) if line.strip()]
    for n, row in enumerate(rows):
        out = tok.apply_chat_template(row["messages"], tools=row["tools"] or None, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        ids, mask = list(out["input_ids"]), list(out["assistant_masks"])
        if ids != row["tokens"]:
            at = next((i for i, (x, y) in enumerate(zip(ids, row["tokens"])) if x != y), min(len(ids), len(row["tokens"])))
            failures.append(f"row {n} ({row['env']} L{row['level']}): tokens part at {at}: transformers {tok.decode(ids[max(0, at - 8):at + 8])!r}, Spindle {tok.decode(row['tokens'][max(0, at - 8):at + 8])!r}")
        elif mask != row["assistant_mask"]:
            failures.append(f"row {n} ({row['env']} L{row['level']}): assistant masks differ in {sum(x != y for x, y in zip(mask, row['assistant_mask']))} positions")
    print(f"logits: largest difference {worst:.2e}; chat rows: {len(rows) - len([f for f in failures if f.startswith('row')])}/{len(rows)} render to Spindle's tokens and mask")
    for f in failures[:20]:
        print("  " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
