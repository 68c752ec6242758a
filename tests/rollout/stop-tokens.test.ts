/**
 * A model's every turn-ending token stops generation and closes the turn once: Llama 3.1 ends a turn
 * that calls a tool with `<|eom_id|>` (its template closes turns with `<|eot_id|>`), and config.json may
 * list several end ids. The stop ids are the tokenizer's (TextTokenizer.stopIds), read by the local
 * policy, the engine's batched generation and the episode alike.
 */
import { describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { closeAfterSampled, conversationFormat } from '../../src/format/conversation.ts';
import { tokenizerFromSpec, tokenizerSpec } from '../../src/pipeline/engine/tokenizer-spec.ts';
import { familyTokenizer } from '../format/family-templates.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

describe('stop tokens', () => {
  it("Llama's <|eom_id|> and <|eot_id|> both stop, and a rebuilt worker tokenizer keeps them", () => {
    const tokenizer = familyTokenizer('llama3.1');
    const [eot, eom] = ['<|eot_id|>', '<|eom_id|>'].map((t) => tokenizer.tokenToId(t)!);
    expect(tokenizer.stopIds).toEqual(expect.arrayContaining([eot, eom]));
    expect(tokenizer.stopIds).not.toContain(tokenizer.tokenToId('<|python_tag|>'));
    expect(tokenizerFromSpec(tokenizerSpec(tokenizer))!.stopIds).toEqual(tokenizer.stopIds);
  });

  it('a turn that ends with <|eom_id|> is not closed again with <|eot_id|>', () => {
    const tokenizer = familyTokenizer('llama3.1');
    const format = conversationFormat(tokenizer);
    const call = tokenizer.encode('{"name": "calc", "parameters": {"expression": "1+1"}}');
    const byEot = closeAfterSampled(tokenizer, format, [...call, tokenizer.tokenToId('<|eot_id|>')!]);
    const byEom = closeAfterSampled(tokenizer, format, [...call, tokenizer.tokenToId('<|eom_id|>')!]);
    expect(byEom).toBe(byEot);
    expect(byEom.startsWith('<|eot_id|>')).toBe(false);
    expect(closeAfterSampled(tokenizer, format, call).startsWith('<|eot_id|>')).toBe(true);
  });

  it("config.json's list of end ids all stop", () => {
    const json = tinyTokenizerJson() as { added_tokens: object[] };
    const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|end|>'];
    json.added_tokens = specials.map((content, i) => ({
      id: 259 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    }));
    const tokenizer = HfTokenizer.fromJson(json, { eos_token: '<|endoftext|>' }, { eosTokenId: [259, 262] });
    expect([...tokenizer.stopIds].sort()).toEqual([259, 261, 262]);
  });
});
