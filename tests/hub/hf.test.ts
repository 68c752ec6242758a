/** safetensors and Hugging Face layout: round trips through a real HTTP server on 127.0.0.1, files and a directory. */
import * as tf from '@tensorflow/tfjs';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { loadHfModel, saveModel, saveModelToDir } from '../../src/hub/hf.ts';
import { readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';
import { TransformerModel, type HostTensors } from '../../src/model/transformer.ts';
import { expectClose, useBackend } from '../model/helpers.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

const qwenLike: ModelConfig = {
  vocabSize: 264,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
  maxPositions: 64,
  ropeTheta: 1e6,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: false,
  attentionBias: true,
  family: 'qwen2',
};
const tokens = [[259, 104, 101, 108, 108, 111, 260]];

let root: string;
let server: Server;
let baseUrl: string;
const requested: string[] = [];

beforeAll(async () => {
  await useBackend('wasm');
  root = mkdtempSync(join(tmpdir(), 'spindle-hf-'));
  server = createServer((req, res) => {
    const path = join(root, decodeURIComponent((req.url ?? '/').split('?')[0]));
    requested.push(req.url ?? '');
    if (!path.startsWith(root) || !existsSync(path)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(path));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  baseUrl = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

function logits(model: TransformerModel, ids = tokens): Float32Array {
  return tf.tidy(() => model.forward(ids).logits.dataSync() as Float32Array);
}

describe('safetensors', () => {
  it('writes an 8-byte aligned, space-padded header with metadata and reads it back', () => {
    const tensors: HostTensors = new Map([
      ['a', { shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) }],
      ['b', { shape: [1], data: Float32Array.from([-0.5]) }],
    ]);
    const bytes = writeSafetensors(tensors, { format: 'pt' });
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerLength % 8).toBe(0);
    const header = new TextDecoder().decode(bytes.subarray(8, 8 + headerLength));
    expect(header).toMatch(/^\{.*\} *$/);
    expect(JSON.parse(header)).toMatchObject({
      __metadata__: { format: 'pt' },
      a: { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] },
    });
    const back = readSafetensors(bytes);
    expect(back.metadata).toEqual({ format: 'pt' });
    expect([...back.tensors.get('a')!.data]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(back.tensors.get('b')!.shape).toEqual([1]);
  });

  it('reads F16 and BF16', () => {
    const header = JSON.stringify({
      h: { dtype: 'F16', shape: [3], data_offsets: [0, 6] },
      b: { dtype: 'BF16', shape: [2], data_offsets: [6, 10] },
    });
    const headerBytes = new TextEncoder().encode(header);
    const bytes = new Uint8Array(8 + headerBytes.length + 10);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, BigInt(headerBytes.length), true);
    bytes.set(headerBytes, 8);
    const at = 8 + headerBytes.length;
    [0x3c00, 0xc000, 0x3555].forEach((h, i) => view.setUint16(at + 2 * i, h, true)); // 1, -2, ≈0.33325
    [0x3f80, 0xc0a0].forEach((h, i) => view.setUint16(at + 6 + 2 * i, h, true)); // 1, -5
    const { tensors } = readSafetensors(bytes);
    expect(tensors.get('h')!.data[0]).toBe(1);
    expect(tensors.get('h')!.data[1]).toBe(-2);
    expect(tensors.get('h')!.data[2]).toBeCloseTo(0.33325, 4);
    expect([...tensors.get('b')!.data]).toEqual([1, -5]);
  });

  it('names the tensor when the dtype or offsets are wrong', () => {
    const make = (entry: object) => {
      const h = new TextEncoder().encode(JSON.stringify({ w: entry }));
      const bytes = new Uint8Array(8 + h.length + 8);
      new DataView(bytes.buffer).setBigUint64(0, BigInt(h.length), true);
      bytes.set(h, 8);
      return bytes;
    };
    expect(() => readSafetensors(make({ dtype: 'I64', shape: [1], data_offsets: [0, 8] }))).toThrow(
      /tensor "w" has dtype I64; supported: F32, F16, BF16/,
    );
    expect(() => readSafetensors(make({ dtype: 'F32', shape: [4], data_offsets: [0, 8] }))).toThrow(
      /tensor "w" offsets \[0, 8\] do not fit shape \[4\]/,
    );
    expect(() => readSafetensors(new Uint8Array(4))).toThrow(/too short/);
  });
});

describe('Hugging Face layout', () => {
  it('round-trips a Qwen2-style model with an HF tokenizer over HTTP, as shards, as picked files and from a directory', async () => {
    const tokenizer = HfTokenizer.fromJson(tinyTokenizerJson(), { eos_token: '<|endoftext|>' });
    expect(tokenizer.encode('<|im_start|>hello<|im_end|>')).toEqual(tokens[0].slice(0, 1).concat([258, 111, 260]));
    expect(tokenizer.imEndId).toBe(260);
    const model = TransformerModel.create(qwenLike, 21);
    const expected = logits(model);
    const files = await saveModel(model, tokenizer);
    expect([...files.keys()].sort()).toEqual([
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const config = JSON.parse(new TextDecoder().decode(files.get('config.json')));
    expect(config).toMatchObject({
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      num_key_value_heads: 2,
      tie_word_embeddings: false,
    });

    // Over HTTP.
    await saveModelToDir(model, tokenizer, join(root, 'qwen'));
    const viaHttp = await loadHfModel(`${baseUrl}/qwen`);
    expect(requested).toContain('/qwen/config.json');
    expectClose(logits(viaHttp.model), expected, 'HTTP round trip', 1e-6, 0);
    expect(viaHttp.tokenizer.decode(viaHttp.tokenizer.encode('<|im_start|>hello é<|im_end|>'))).toBe(
      '<|im_start|>hello é<|im_end|>',
    );

    // Sharded, over HTTP.
    const all = readSafetensors(files.get('model.safetensors')!).tensors;
    const names = [...all.keys()];
    const shards = [names.slice(0, 7), names.slice(7)];
    const sharded = new Map(files);
    sharded.delete('model.safetensors');
    const weightMap: Record<string, string> = {};
    shards.forEach((group, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      sharded.set(file, writeSafetensors(new Map(group.map((n) => [n, all.get(n)!]))));
      for (const n of group) weightMap[n] = file;
    });
    sharded.set(
      'model.safetensors.index.json',
      new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap })),
    );
    const shardDir = join(root, 'sharded');
    await saveModelToDir(model, tokenizer, shardDir);
    rmSync(join(shardDir, 'model.safetensors'));
    for (const [name, bytes] of sharded) writeFileSync(join(shardDir, name), bytes);
    const viaShards = await loadHfModel(`${baseUrl}/sharded/`);
    expectClose(logits(viaShards.model), expected, 'sharded round trip', 1e-6, 0);

    // Picked files (Blobs) and a Node directory.
    const viaBlobs = await loadHfModel(Object.fromEntries([...files].map(([n, b]) => [n, new Blob([b as BlobPart])])));
    expectClose(logits(viaBlobs.model), expected, 'Blob round trip', 1e-6, 0);
    const viaDir = await loadHfModel(join(root, 'qwen'));
    expectClose(logits(viaDir.model), expected, 'directory round trip', 1e-6, 0);

    for (const m of [model, viaHttp.model, viaShards.model, viaBlobs.model, viaDir.model]) m.dispose();
  });

  it('saves a byte-tokenizer model with an AutoTokenizer-loadable tokenizer.json and loads it back as the byte tokenizer', async () => {
    const tok = new ByteTokenizer();
    const model = TransformerModel.create(
      { ...qwenLike, vocabSize: tok.vocabSize, family: 'llama', attentionBias: false, tieWordEmbeddings: true },
      2,
    );
    const files = await saveModel(model, tok);
    const asHf = HfTokenizer.fromJson(
      JSON.parse(new TextDecoder().decode(files.get('tokenizer.json'))),
      JSON.parse(new TextDecoder().decode(files.get('tokenizer_config.json'))),
    );
    expect(asHf.encode('<|im_start|>hé<|im_end|>')).toEqual(tok.encode('<|im_start|>hé<|im_end|>'));
    expect(readSafetensors(files.get('model.safetensors')!).tensors.has('lm_head.weight')).toBe(false);
    const loaded = await loadHfModel(Object.fromEntries([...files].map(([n, b]) => [n, new Blob([b as BlobPart])])));
    expect(loaded.tokenizer).toBeInstanceOf(ByteTokenizer);
    expectClose(logits(loaded.model, [[1, 2, 3]]), logits(model, [[1, 2, 3]]), 'byte model round trip', 1e-6, 0);
    model.dispose();
    loaded.model.dispose();
  });

  it('explains missing files, missing tensors, wrong shapes and unsupported architectures', async () => {
    const tokenizer = HfTokenizer.fromJson(tinyTokenizerJson(), { eos_token: '<|endoftext|>' });
    const model = TransformerModel.create(qwenLike, 3);
    const files = await saveModel(model, tokenizer);
    model.dispose();
    const blobs = (over: Map<string, Uint8Array>) =>
      Object.fromEntries([...over].map(([n, b]) => [n, new Blob([b as BlobPart])]));
    const weights = readSafetensors(files.get('model.safetensors')!).tensors;

    const missing = new Map(weights);
    missing.delete('model.layers.1.mlp.up_proj.weight');
    await expect(
      loadHfModel(blobs(new Map(files).set('model.safetensors', writeSafetensors(missing)))),
    ).rejects.toThrow(/tensor "model\.layers\.1\.mlp\.up_proj\.weight" is missing \(expected shape \[24, 16\]\)/);
    const reshaped = new Map(weights).set('model.norm.weight', { shape: [8], data: new Float32Array(8) });
    await expect(
      loadHfModel(blobs(new Map(files).set('model.safetensors', writeSafetensors(reshaped)))),
    ).rejects.toThrow(/tensor "model\.norm\.weight" has shape \[8\], expected \[16\]/);
    const extra = new Map(weights).set('model.layers.0.mlp.experts.0.weight', {
      shape: [1],
      data: new Float32Array(1),
    });
    await expect(loadHfModel(blobs(new Map(files).set('model.safetensors', writeSafetensors(extra))))).rejects.toThrow(
      /unexpected tensor "model\.layers\.0\.mlp\.experts\.0\.weight"/,
    );
    // Qwen2 has no o_proj bias: one in the file is refused, not dropped (a Llama attention_bias file saved as qwen2 would be off).
    const oBias = new Map(weights).set('model.layers.0.self_attn.o_proj.bias', {
      shape: [16],
      data: new Float32Array(16),
    });
    await expect(loadHfModel(blobs(new Map(files).set('model.safetensors', writeSafetensors(oBias))))).rejects.toThrow(
      /unexpected tensor "model\.layers\.0\.self_attn\.o_proj\.bias" for a qwen2 model .* \(config\.json declares no such bias: check attention_bias \/ mlp_bias\)/,
    );
    const gpt2 = new TextEncoder().encode(JSON.stringify({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'] }));
    await expect(loadHfModel(blobs(new Map(files).set('config.json', gpt2)))).rejects.toThrow(
      /model_type "gpt2".*expected one of llama, qwen2, qwen3/,
    );
    const noConfig = new Map(files);
    noConfig.delete('config.json');
    await expect(loadHfModel(blobs(noConfig))).rejects.toThrow(/config\.json is missing/);
    await expect(loadHfModel(`${baseUrl}/nothing-here`)).rejects.toThrow(
      /config\.json is missing in http:\/\/127\.0\.0\.1/,
    );
  });
});
