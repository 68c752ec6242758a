import { describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { renderChatML } from '../../src/format/chatml.ts';
import { ByteTokenizer, SPECIAL_TOKENS, StreamDecoder } from '../../src/tokenizer/byte-tokenizer.ts';
import { byteTokenizerConfig, byteTokenizerJson } from '../../src/tokenizer/byte-tokenizer-json.ts';
import { tokenizerFiles } from '../../src/hub/hf.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';

const tok = new ByteTokenizer();

describe('ByteTokenizer', () => {
  it('has 256 byte ids and the special tokens after them', () => {
    expect(tok.vocabSize).toBe(256 + SPECIAL_TOKENS.length);
    expect(tok.imStartId).toBe(256);
    expect(tok.imEndId).toBe(257);
    expect(new Set([tok.imEndId, tok.padId, tok.eosId]).size).toBe(3);
  });

  it('encodes every special token as one id and round-trips mixed text', () => {
    const text =
      '<|im_start|>assistant\n<think>ok</think><tool_call>{"name":"calc"}</tool_call><tool_response>4</tool_response>héllo 🌍<|im_end|><|pad|><|endoftext|>';
    const ids = tok.encode(text);
    for (const s of SPECIAL_TOKENS) expect(ids).toContain(tok.specialId(s));
    expect(ids[0]).toBe(tok.imStartId);
    expect(ids.filter((id) => id >= 256)).toHaveLength(10);
    expect(tok.decode(ids)).toBe(text);
  });

  it('encodes plain text as its UTF-8 bytes', () => {
    expect(tok.encode('aé')).toEqual([97, 0xc3, 0xa9]);
  });

  it('never throws on invalid UTF-8 and marks broken bytes with U+FFFD', () => {
    expect(tok.decode([0xf0, 0x9f])).toBe('\uFFFD');
    expect(tok.decode([0xff, 97])).toBe('\uFFFDa');
    expect(tok.decode([0xc3, tok.imEndId])).toBe('\uFFFD<|im_end|>');
  });

  it('streams a multi-byte character only once it is complete', () => {
    const stream = new StreamDecoder(tok);
    const pieces = tok.encode('a🌍b').map((id) => stream.push(id));
    expect(pieces).toEqual(['a', '', '', '', '🌍', 'b']);
    expect(stream.flush()).toBe('');
  });
});

describe('the tokenizer.json a saved byte model carries', () => {
  const files = tokenizerFiles(new ByteTokenizer());
  const json = JSON.parse(new TextDecoder().decode(files.get('tokenizer.json')));
  const config = JSON.parse(new TextDecoder().decode(files.get('tokenizer_config.json')));

  it('is the byte tokenizer in the form transformers loads', () => {
    expect(json).toEqual(byteTokenizerJson());
    expect(config).toEqual(byteTokenizerConfig());
  });

  it('gives the byte tokenizer ids for text, special tokens and any Unicode, and decodes back', () => {
    const bytes = new ByteTokenizer();
    const hf = HfTokenizer.fromJson(json, config);
    expect([hf.vocabSize, hf.eosId, hf.padId, hf.imEndId]).toEqual([
      bytes.vocabSize,
      bytes.eosId,
      bytes.padId,
      bytes.imEndId,
    ]);
    for (const text of [
      'hello world',
      ' two  spaces\n\ttab',
      '<|im_start|>user\nhé 你好 🎉<|im_end|>\n<think>x</think><tool_call>{"a": 1}</tool_call>',
      '\u0000\u007f\u00ad',
    ]) {
      expect(hf.encode(text)).toEqual(bytes.encode(text));
      expect(hf.decode(bytes.encode(text))).toBe(text);
    }
  });

  it('its chat template renders what Spindle renders', () => {
    const messages = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: 'yo' },
    ];
    expect(ChatTemplate.fromTokenizerConfig(config)!.render(messages, { addGenerationPrompt: true })).toBe(
      renderChatML(messages, { addGenerationPrompt: true }),
    );
  });
});
