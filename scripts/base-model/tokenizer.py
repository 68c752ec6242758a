#!/usr/bin/env python3
"""Trains the base model's byte-level BPE tokenizer on the build's corpus (scripts/base-model/corpus.ts)
and writes an HF `tokenizer.json` that `tokenizers`, transformers and Spindle (src/tokenizer/hf-tokenizer.ts)
load. The chat and tool markers are special tokens, one id each, so no merge crosses them; every byte
has an id, so any text encodes.

Needs the `tokenizers` package (the build's venv, scripts/base-model/build.ts); CI never runs this.

    python3 scripts/base-model/tokenizer.py --corpus <build>/corpus.txt --out <build>/tokenizer.json --vocab 2048
"""
import argparse

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIAL_TOKENS = ["<|pad|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
                  "<tool_response>", "</tool_response>", "<tools>", "</tools>"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=2048)
    a = ap.parse_args()
    records = open(a.corpus, encoding="utf-8").read().split("\n\u0000\n")
    tok = Tokenizer(models.BPE())
    # Split on the markers first (they are special), then every space on its own, so a word is the same tokens in a
    # sentence, at the start of a JSON string and after a newline: a name is copied token for token (with GPT-2's
    # leading-space words, "hollow lamp" in a question was " hollow", and in the call's arguments "hollow", and the
    # base wrote "large lamp"); it costs 20% more tokens. Then every digit on its own (with merged digits the base
    # wrote "61 + 71" for "44 + 71"), then GPT-2's byte-level pre-tokenization without a prefix space.
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(" ", "isolated"), pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=a.vocab, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  min_frequency=2, show_progress=False)
    tok.train_from_iterator(records, trainer)
    tok.save(a.out)
    print(f"{tok.get_vocab_size()} tokens -> {a.out}")


if __name__ == "__main__":
    main()
