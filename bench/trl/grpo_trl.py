"""TRL's side of the whole-loop benchmark (bench/trl-loop.bench.ts runs it; not meant to be run alone).

    SPINDLE_TRL_PYTHON bench/trl/grpo_trl.py SPEC.json OUT.json

SPEC.json (written by the TypeScript side) holds the model folder, the train prompts as the text Spindle's
agent loop renders, the held-out prompts as the token ids Spindle's episodes started from, completions
Spindle scored (for the reward-parity check) and the shared hyperparameters. This script:

1. checks the parity the comparison rests on: transformers' logits on models/spindle-base/reference-logits.json
   (the builder's PyTorch logits, which tests/model/shipped-model.test.ts pins Spindle's forward to), the
   tokenizer's round trip of every prompt, and this file's reward against the scores Spindle's js verifier gave;
2. measures greedy held-out success of the base model on the same items as Spindle;
3. trains with trl.GRPOTrainer (PEFT LoRA, PyTorch CPU as installed) for the same number of updates,
   timing each update and the generation inside it;
4. measures greedy held-out success again, and writes everything to OUT.json.

The reward is the score Spindle's GRPO trains on, computed from the completion text alone:
- the verdict `calls_calc` (the task file's js verifier, REWARD_SOURCE in the bench): 1 when the completion,
  whitespace removed, contains {"name":"calc","arguments":{"expression":E}} with E the question's expression,
  whitespace removed; else 0;
- Spindle's rule judge (src/judge/rule.ts): 0.8 × verdict + 0.2 × the share of its three format checks passed
  (src/judge/format-checks.ts: tool calls are JSON naming a tool, a final answer is present, think blocks closed);
- the verifier gate (src/judge/verifier-gate.ts): rules 3-4 leave a rule-judge score as it is, rule 5 lowers the
  failures of a group with a success to just under the group's mean.
The parity check runs it on every group Spindle trained on and compares with the scores Spindle gave.
Held-out success is the verdict alone (score 1), on both sides.
"""
import json
import os
import re
import sys
import time


def calls_calc(text, expression):
    want = '{"name":"calc","arguments":{"expression":"' + re.sub(r"\s+", "", expression) + '"}}'
    return 1.0 if want in re.sub(r"\s+", "", text) else 0.0


def final_answer(text):
    """src/format/parse.ts's answer for a turn without calls: the text outside think blocks ('' with a call)."""
    if "<tool_call>" in text:
        return ""
    answer, thought, in_think, saw, pos = [], [], False, False, 0
    while True:
        tags = ["</think>"] if in_think else ["<think>", "</think>"]
        found = [(text.find(t, pos), t) for t in tags if text.find(t, pos) != -1]
        target = thought if in_think else answer
        if not found:
            target.append(text[pos:])
            break
        at, tag = min(found)
        target.append(text[pos:at])
        pos = at + len(tag)
        if tag == "<think>":
            saw, in_think = True, True
        else:
            if not in_think and not saw:
                thought, answer = answer, []
            saw, in_think = True, False
    return "\n".join(p.strip() for p in answer if p.strip()).replace("</tool_call>", "").strip()


def call_reads(body):
    """Both tool-call checks on one <tool_call> body: strict JSON naming a tool, and a call the parser accepts."""
    try:
        value = json.loads(body.strip())
    except ValueError:
        return False
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or value["name"] == "" or value["name"].strip() == "":
        return False
    args = next((value[k] for k in ("arguments", "parameters", "args") if value.get(k) is not None), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return False
    return isinstance(args, dict)


def format_share(text):
    blocks = list(re.finditer(r"<tool_call>([\s\S]*?)(</tool_call>|\Z)", text))
    checks = [
        all(m.group(2) == "</tool_call>" and call_reads(m.group(1)) for m in blocks),
        final_answer(text) != "",
        text.count("<think>") == text.count("</think>"),
    ]
    return sum(checks) / len(checks)


def cap_failures(verdicts, scores, eps=1e-6):
    """The gate's rule 5: in a group with a success, failures above the mean are lowered to just under it."""
    out = list(scores)
    if not any(v >= 1 for v in verdicts):
        return out
    failures = sorted((i for i, v in enumerate(verdicts) if v < 1), key=lambda i: -out[i])
    others = sum(s for i, s in enumerate(out) if verdicts[i] >= 1)
    rest = sum(out[i] for i in failures)
    for k in range(len(failures) + 1):
        c = (others + rest) / (len(out) - k)
        nxt = out[failures[k]] if k < len(failures) else float("-inf")
        if nxt <= c - eps:
            for i in failures[:k]:
                out[i] = min(out[i], max(0.0, c - eps))
            return out
        rest -= nxt
    return out


def spindle_scores(texts, expressions):
    """One GRPO group's scores as Spindle's rule judge and verifier gate give them."""
    verdicts = [calls_calc(t, e) for t, e in zip(texts, expressions)]
    judged = [0.8 * v + 0.2 * format_share(t) for v, t in zip(verdicts, texts)]
    gated = [min(1.0, max(0.8, j)) if v >= 1 else min(0.2, max(0.0, j)) for v, j in zip(verdicts, judged)]
    return cap_failures(verdicts, gated)


def main():
    spec = json.load(open(sys.argv[1]))
    out_path = sys.argv[2]
    cfg = spec["config"]

    import torch
    import transformers
    import trl
    import peft
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(cfg["seed"])
    model_dir = spec["model_dir"]
    tok = AutoTokenizer.from_pretrained(model_dir)
    # Spindle stops a turn at <|im_end|> (or <|endoftext|>); TRL stops and masks at the tokenizer's eos.
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    stops = [im_end, tok.eos_token_id]
    tok.eos_token = "<|im_end|>"
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.generation_config.eos_token_id = stops
    model.generation_config.pad_token_id = tok.pad_token_id

    def text_of(ids):
        """A completion as Spindle's loop reads it: up to its stop token, special tokens kept."""
        cut = len(ids)
        for i, t in enumerate(ids):
            if t in stops or t == tok.pad_token_id:
                cut = i
                break
        return tok.decode(ids[:cut], skip_special_tokens=False)

    # 1. Parity checks.
    ref = json.load(open(os.path.join(model_dir, "reference-logits.json")))
    with torch.no_grad():
        logits = model(torch.tensor([ref["tokens"]])).logits[0]
    logits_diff = max((logits[p] - torch.tensor(ref["logits"][i])).abs().max().item() for i, p in enumerate(ref["positions"]))
    round_trip = sum(tok(p["prompt"], add_special_tokens=False).input_ids == p["prompt_ids"] for p in spec["train"])
    test_round_trip = sum(tok(tok.decode(t["prompt_ids"], skip_special_tokens=False), add_special_tokens=False).input_ids == t["prompt_ids"] for t in spec["test"])
    reward_mismatch, parity_scores = [], 0
    for group in spec["parity"]:
        ours = spindle_scores([text_of(m["completion_ids"]) for m in group], [m["expression"] for m in group])
        for m, score in zip(group, ours):
            parity_scores += 1
            if abs(score - m["score"]) > 1e-9:
                reward_mismatch.append({**m, "ours": score})
    checks = {
        "logits_max_abs_diff": logits_diff,
        "train_prompts_round_trip": f"{round_trip}/{len(spec['train'])}",
        "test_prompts_round_trip": f"{test_round_trip}/{len(spec['test'])}",
        "reward_agrees": f"{parity_scores - len(reward_mismatch)}/{parity_scores}",
        "reward_mismatches": [{"text": text_of(p["completion_ids"]), "expression": p["expression"], "spindle": p["score"], "python": p["ours"]} for p in reward_mismatch[:5]],
    }
    print(f"trl side: parity {json.dumps({k: v for k, v in checks.items() if k != 'reward_mismatches'})}", flush=True)

    def held_out(m):
        """Greedy success on the held-out items; prompts of one length go in one batch (no padding)."""
        m.eval()
        by_len = {}
        for i, t in enumerate(spec["test"]):
            by_len.setdefault(len(t["prompt_ids"]), []).append(i)
        scores = [0.0] * len(spec["test"])
        start = time.perf_counter()
        with torch.no_grad():
            for idx in by_len.values():
                ids = torch.tensor([spec["test"][i]["prompt_ids"] for i in idx])
                gen = m.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=cfg["max_new_tokens"], eos_token_id=stops, pad_token_id=tok.pad_token_id)
                for row, i in enumerate(idx):
                    scores[i] = calls_calc(text_of(gen[row, ids.shape[1]:].tolist()), spec["test"][i]["expression"])
        return {"success": sum(scores) / len(scores), "n": len(scores), "scores": scores, "seconds": time.perf_counter() - start}

    before = held_out(model)
    print(f"trl side: held-out before {before['success']:.3f} of {before['n']} ({before['seconds']:.1f} s)", flush=True)

    # 3. GRPO with TRL.
    group = cfg["group"]

    def reward(prompts, completions, completion_ids, expression, **_):
        # TRL's sampler puts each prompt's G completions next to each other: one group per G.
        scores = []
        for g in range(0, len(completion_ids), group):
            assert len(set(prompts[g:g + group])) == 1, "a group's completions must share their prompt"
            scores += spindle_scores([text_of(ids) for ids in completion_ids[g:g + group]], expression[g:g + group])
        return scores

    reward.__name__ = "spindle_judge"
    dataset = Dataset.from_list([{"prompt": p["prompt"], "expression": p["expression"]} for p in spec["train"]])
    lora = cfg["lora"]
    args = GRPOConfig(
        output_dir=spec["work_dir"],
        use_cpu=True,
        seed=cfg["seed"],
        max_steps=cfg["updates"],
        learning_rate=cfg["learning_rate"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        optim="adamw_torch",
        weight_decay=cfg["weight_decay"],
        max_grad_norm=cfg["grad_clip"],
        per_device_train_batch_size=cfg["batch"] * cfg["group"],
        gradient_accumulation_steps=1,
        num_generations=cfg["group"],
        max_completion_length=cfg["max_new_tokens"],
        temperature=cfg["temperature"],
        top_p=cfg["top_p"],
        top_k=cfg["top_k"],
        beta=0.0,
        epsilon=cfg["clip_epsilon"],
        num_iterations=1,
        loss_type="dapo",
        scale_rewards="group",
        gradient_checkpointing=False,
        bf16=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )

    class Timed(GRPOTrainer):
        generation_seconds = 0.0
        generated_tokens = 0

        def _generate_single_turn(self, *a, **k):
            t0 = time.perf_counter()
            result = super()._generate_single_turn(*a, **k)
            Timed.generation_seconds += time.perf_counter() - t0
            Timed.generated_tokens += sum(len(ids) for ids in result[0])
            return result

    class Clock(TrainerCallback):
        def __init__(self):
            self.marks, self.logs = [], []

        def on_train_begin(self, *_, **__):
            self.marks.append(time.perf_counter())

        def on_step_end(self, *_, **__):
            self.marks.append(time.perf_counter())

        def on_log(self, _a, _s, _c, logs=None, **__):
            if logs and "reward" in logs:
                self.logs.append({k: v for k, v in logs.items() if isinstance(v, (int, float))})
                s = len(self.marks) - 1
                print(f"trl side: update {s} reward {logs['reward']:.3f} ({self.marks[-1] - self.marks[-2]:.2f} s, {self.marks[-1] - self.marks[0]:.1f} s)", flush=True)

    clock = Clock()
    lora_config = peft.LoraConfig(r=lora["r"], lora_alpha=lora["alpha"], lora_dropout=lora["dropout"], target_modules=lora["target_modules"], task_type="CAUSAL_LM")
    trainer = Timed(model=model, reward_funcs=reward, args=args, train_dataset=dataset, processing_class=tok, peft_config=lora_config, callbacks=[clock])
    trainer.remove_callback(PrinterCallback)  # its per-step dicts; the clock prints what matters
    trainer.train()
    steps = [b - a for a, b in zip(clock.marks, clock.marks[1:])]

    after = held_out(trainer.model)
    print(f"trl side: held-out after {after['success']:.3f} of {after['n']}", flush=True)
    result = {
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__, "peft": peft.__version__},
        "torch_threads": torch.get_num_threads(),
        "checks": checks,
        "before": before,
        "after": after,
        "update_seconds": steps,
        "generation_seconds": Timed.generation_seconds,
        "generated_tokens": Timed.generated_tokens,
        "trainable_parameters": sum(p.numel() for p in trainer.model.parameters() if p.requires_grad),
        "logs": clock.logs,
    }
    with open(out_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
