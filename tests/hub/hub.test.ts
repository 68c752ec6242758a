/**
 * Loading by hub id from a local stand-in for huggingface.co (127.0.0.1, `/<id>/resolve/<rev>/<file>`
 * with Range support): progress, the disk cache (a second load requests nothing), a download cut off
 * mid-file resumed with a Range request, and a model that will not fit refused before its weights are read.
 */
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHfConfig, type HfConfigJson } from '../../src/model/config.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { loadHfModel, saveModelToDir } from '../../src/hub/hf.ts';
import { diskCache, hubRefText, parseHubRef, type DownloadProgress } from '../../src/hub/hub.ts';
import { assertFits, estimateMemory, IMPORT_CHECK_TOKENS } from '../../src/model/memory.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { expectClose, loadFixture, useBackend } from '../model/helpers.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

let root: string;
let server: Server;
let endpoint: string;
const requests: { url: string; range: string | undefined }[] = [];
/** Files whose next response is cut off halfway (once). */
const cutOnce = new Set<string>();

beforeAll(async () => {
  await useBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'spindle-hub-'));
  server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '/');
    requests.push({ url, range: req.headers.range });
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url);
    const path = m ? join(root, m[1], m[2], m[3]) : '';
    if (!m || !existsSync(path)) return void res.writeHead(404).end();
    const body = readFileSync(path);
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    const part = body.subarray(from);
    const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
    const headers = { 'content-length': String(part.length), etag };
    res.writeHead(
      from ? 206 : 200,
      from ? { ...headers, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` } : headers,
    );
    if (cutOnce.delete(m[3])) {
      res.write(part.subarray(0, part.length >> 1), () => res.destroy());
      return;
    }
    res.end(part);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

/** The qwen3 parity model, saved as the hub would hold it. */
async function publish(id: string, revision: string): Promise<TransformerModel> {
  const c = loadFixture<Record<string, { config: HfConfigJson }>>('model-parity.json').qwen3;
  const config = { ...fromHfConfig(c.config), vocabSize: 264 };
  const model = TransformerModel.create(config, 5);
  await saveModelToDir(
    model,
    HfTokenizer.fromJson(tinyTokenizerJson(), { eos_token: '<|endoftext|>' }),
    join(root, id, revision),
  );
  return model;
}

const logits = (m: TransformerModel) => tf.tidy(() => m.forward([[1, 2, 3, 4]]).logits.dataSync() as Float32Array);

describe('hub ids', () => {
  it('parses hf: ids and huggingface.co URLs, and nothing else', () => {
    expect(parseHubRef('hf:HuggingFaceTB/SmolLM2-135M-Instruct')).toEqual({
      id: 'HuggingFaceTB/SmolLM2-135M-Instruct',
      revision: 'main',
    });
    expect(parseHubRef('hf:Qwen/Qwen3-0.6B@c1899de')).toEqual({ id: 'Qwen/Qwen3-0.6B', revision: 'c1899de' });
    expect(parseHubRef('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/resolve/main/')).toEqual({
      id: 'Qwen/Qwen2.5-0.5B-Instruct',
      revision: 'main',
    });
    expect(parseHubRef('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct')).toEqual({
      id: 'Qwen/Qwen2.5-0.5B-Instruct',
      revision: 'main',
    });
    expect(parseHubRef('models/spindle-base')).toBeNull();
    expect(parseHubRef('http://127.0.0.1:9/x')).toBeNull();
    expect(() => parseHubRef('hf:no-owner')).toThrow(/expected hf:<owner>\/<name>/);
    expect(hubRefText({ id: 'a/b', revision: 'v1' })).toBe('hf:a/b@v1');
  });
});

describe('loading from the hub', () => {
  it('downloads with progress into the cache; a second load requests nothing; a cut-off shard resumes with Range', async () => {
    const model = await publish('org/tiny-qwen3', 'v1');
    const cacheDir = join(root, 'cache');
    const progress: DownloadProgress[] = [];
    cutOnce.add('model.safetensors');
    // One try per load, so the cut is left for the next load to resume (with more tries it resumes at once).
    const hub = {
      endpoint,
      cache: diskCache(cacheDir),
      onProgress: (p: DownloadProgress) => progress.push(p),
      checkpointBytes: 256,
      retry: { attempts: 1 },
    };
    await expect(loadHfModel('hf:org/tiny-qwen3@v1', { hub })).rejects.toThrow(/terminated|cut off|socket/i);
    expect(existsSync(join(cacheDir, 'org/tiny-qwen3/v1/model.safetensors.part'))).toBe(true);

    requests.length = 0;
    const loaded = await loadHfModel('hf:org/tiny-qwen3@v1', { hub });
    const weights = requests.find((r) => r.url.endsWith('model.safetensors'));
    expect(weights?.range).toMatch(/^bytes=\d+-$/); // resumed, not restarted
    expect(requests.filter((r) => r.url.endsWith('config.json'))).toHaveLength(0); // cached by the first try
    expect(loaded.hub).toEqual({ id: 'org/tiny-qwen3', revision: 'v1' });
    expect(loaded.config).toMatchObject({ family: 'qwen3', qkNorm: true });
    expectClose(logits(loaded.model), logits(model), 'hub round trip', 1e-6, 0);
    const last = progress.filter((p) => p.file === 'model.safetensors').at(-1)!;
    expect(last.loaded).toBe(last.total);
    expect(progress.some((p) => p.file === 'model.safetensors' && p.loaded < (p.total ?? 0))).toBe(true);

    requests.length = 0;
    const again = await loadHfModel('hf:org/tiny-qwen3@v1', { hub });
    expect(requests).toEqual([]);
    for (const m of [model, loaded.model, again.model]) m.dispose();
  });

  it('refuses a model that will not fit before reading its weights, naming what it needs', async () => {
    (await publish('org/big', 'main')).dispose();
    requests.length = 0;
    const need = estimateMemory(fromHfConfig(JSON.parse(readFileSync(join(root, 'org/big/main/config.json'), 'utf8'))));
    await expect(loadHfModel('hf:org/big', { hub: { endpoint }, memoryLimitBytes: 1000 })).rejects.toThrow(
      /needs about .* to load and train .* but 1 KiB is available\. Choose a smaller model/,
    );
    expect(requests.some((r) => r.url.endsWith('model.safetensors'))).toBe(false);
    expect(need.trainPeakBytes).toBeGreaterThan(need.weightBytes);
  });

  it("the import check on tfjs-wasm's 4 GiB heap admits SmolLM2-135M and refuses Qwen2.5-0.5B in float32, from config.json alone", () => {
    const smol = fromHfConfig({
      model_type: 'llama',
      hidden_size: 576,
      intermediate_size: 1536,
      num_hidden_layers: 30,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      head_dim: 64,
      vocab_size: 49152,
      max_position_embeddings: 8192,
      rms_norm_eps: 1e-5,
      rope_theta: 100000,
      tie_word_embeddings: true,
      hidden_act: 'silu',
    });
    const qwen = fromHfConfig({
      model_type: 'qwen2',
      vocab_size: 151936,
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      max_position_embeddings: 32768,
      rope_theta: 1e6,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      hidden_act: 'silu',
    });
    const heap = 4 * 2 ** 30;
    // decodeCopies: on wasm, generation's packed copies of the projections and head stay beside the weights.
    const check = (config: ReturnType<typeof fromHfConfig>) => () =>
      assertFits(
        estimateMemory(config, { fileBytesPerParam: 2, sequence: IMPORT_CHECK_TOKENS, decodeCopies: true }),
        heap,
        'it',
      );
    expect(check(smol)).not.toThrow();
    expect(check(qwen)).toThrow(/it has 494M parameters and needs about [\d.]+ GiB to load and train on 128 tokens/);
    // With the base in int8 (quantized as it loads) and blocks recomputed, Qwen2.5-0.5B fits, at 256 tokens too.
    const int8 = (sequence: number) => () =>
      assertFits(
        estimateMemory(qwen, { fileBytesPerParam: 2, sequence, decodeCopies: true, quantization: 'int8' }),
        heap,
        'it',
      );
    expect(int8(IMPORT_CHECK_TOKENS)).not.toThrow();
    expect(int8(256)).not.toThrow();
  });

  it('a missing repository or file reads as missing, naming the hub id', async () => {
    await expect(loadHfModel('hf:org/nothing', { hub: { endpoint } })).rejects.toThrow(
      /config\.json is missing in org\/nothing@main/,
    );
  });
});

describe('memory estimate', () => {
  it('SmolLM2-135M: about 135M parameters, 0.5 GiB of float32 weights', () => {
    const smol = fromHfConfig({
      model_type: 'llama',
      vocab_size: 49152,
      hidden_size: 576,
      intermediate_size: 1536,
      num_hidden_layers: 30,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      max_position_embeddings: 8192,
      rope_theta: 100000,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: true,
      hidden_act: 'silu',
    });
    const e = estimateMemory(smol);
    expect(e.parameters).toBe(134515008);
    expect(e.weightBytes / 2 ** 30).toBeCloseTo(0.5, 1);
    // wasm generation's packed copies: the 30 layers' projections and the 49,152 × 576 head, in float32
    const withCopies = estimateMemory(smol, { decodeCopies: true });
    const projections = 30 * (576 * 64 * (2 * 9 + 2 * 3) + 3 * 576 * 1536);
    expect(e.decodeCopyBytes).toBe(0);
    expect(withCopies.decodeCopyBytes).toBe((projections + 49152 * 576) * 4);
    expect(withCopies.trainPeakBytes - e.trainPeakBytes).toBe(withCopies.decodeCopyBytes);
  });
});
