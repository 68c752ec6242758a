/**
 * Hub downloads that can be trusted, against a stand-in hub on 127.0.0.1 that
 * breaks one rule at a time (hub-server.ts): resume only with If-Range on the ETag and a 206 that
 * continues exactly; size, SHA-256 and the shape of the file checked before it counts as cached, and
 * again when it is read back; a revision pinned to its commit once; timeouts, size limits and a retry
 * budget that the errors state; a partial file grown by appending, on disk and in Cache Storage.
 */
import * as tf from '@tensorflow/tfjs';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fromHfConfig, type HfConfigJson } from '../../src/model/config.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { loadHfModel, saveModel } from '../../src/hub/hf.ts';
import {
  browserCache,
  diskCache,
  hubSource,
  parseHubRef,
  type DownloadCache,
  type HubOptions,
} from '../../src/hub/hub.ts';
import { readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { expectClose, loadFixture, useBackend } from '../model/helpers.ts';
import { FakeHub } from './hub-server.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

let hub: FakeHub;
let dir: string;
const ID = 'org/m';
const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
/** A safetensors file of `n` float32 values starting at `first` (about 4n bytes). */
const tensors = (n: number, first: number) =>
  writeSafetensors(new Map([['w', { shape: [n], data: Float32Array.from({ length: n }, (_, i) => first + i) }]]));
const config = encode({ model_type: 'llama', note: 'x'.repeat(5000) });

beforeAll(async () => {
  await useBackend('cpu');
});
beforeEach(async () => {
  hub = await new FakeHub().start();
  dir = mkdtempSync(join(tmpdir(), 'spindle-hubdl-'));
});
afterEach(async () => {
  vi.unstubAllGlobals();
  await hub.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Options with short limits and one try, unless a test says otherwise. */
function options(extra: HubOptions = {}): HubOptions {
  return {
    endpoint: hub.endpoint,
    cache: diskCache(join(dir, 'cache')),
    limits: { connectTimeoutMs: 500, idleTimeoutMs: 300 },
    retry: { attempts: 1 },
    checkpointBytes: 4096,
    ...extra,
  };
}
const source = (extra: HubOptions = {}, ref = `hf:${ID}`) => hubSource(parseHubRef(ref)!, options(extra));
const cdnRequests = () => hub.requests.filter((r) => r.url.startsWith('/cdn/'));
const equal = (a: Uint8Array | null, b: Uint8Array) =>
  expect(a && Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);

/** A disk cache that counts the bytes each method writes. */
function counting(cache: DownloadCache) {
  const written = { put: 0, putPartial: 0, appendPartial: 0 };
  const counted: DownloadCache = {
    ...cache,
    put: (k, b) => {
      if (!k.startsWith('@')) written.put += b.length;
      return cache.put(k, b);
    },
    putPartial: (k, b) => {
      written.putPartial += b.length;
      return cache.putPartial(k, b);
    },
    appendPartial: (k, b) => {
      written.appendPartial += b.length;
      return cache.appendPartial!(k, b);
    },
  };
  return { counted, written };
}

describe('resuming a download', () => {
  it('resumes only with If-Range on the ETag: a file changed between the cut and the resume is downloaded whole, not spliced', async () => {
    hub.hubHeaders = false; // a plain mirror: no commit to pin, so the file can change under "main"
    const v1 = tensors(20_000, 1),
      v2 = tensors(20_000, 5);
    hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    hub.fault('model.safetensors', { kind: 'cut', after: 30_000 });
    const first = source();
    await first.read('config.json');
    await expect(first.read('model.safetensors')).rejects.toThrow(
      /^Downloading model\.safetensors failed: GET http:\/\/127\.0\.0\.1:\d+\/org\/m\/resolve\/main\/model\.safetensors: the connection broke after 29\.3 KiB \(.*\); gave up after 1 try in 0 s \(retry budget: 1 try, 120 s of waiting\)\. 29\.3 KiB are kept; run the same command again to resume from there\.$/,
    );

    hub.publish(ID, { 'config.json': config, 'model.safetensors': v2 });
    const again = await source().read('model.safetensors');
    equal(again, v2);
    const resume = cdnRequests().at(-1)!;
    expect(resume.range).toBe('bytes=30000-');
    expect(resume.ifRange).toMatch(/^"[0-9a-f]{64}"$/); // the ETag the kept bytes came with
  });

  it('does not splice a 206 that resends the whole file: it starts over and gets the file right', async () => {
    const v1 = tensors(20_000, 1);
    hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    hub.fault('model.safetensors', { kind: 'cut', after: 30_000 });
    hub.fault('model.safetensors', { kind: 'whole-206' });
    const bytes = await source({ retry: { attempts: 3, baseDelayMs: 10 } }).read('model.safetensors');
    equal(bytes, v1);
    expect(cdnRequests().map((r) => r.range)).toEqual([undefined, 'bytes=30000-', undefined]);
  });

  it('starts over, instead of HTTP 416 forever, when the kept bytes are as long as the file or longer', async () => {
    const v1 = tensors(20_000, 1);
    hub.hubHeaders = false;
    hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    const files = source();
    await files.read('config.json');
    // A partial file longer than the file, with a record that names the file's own ETag and no size.
    const key = `${ID}/main/model.safetensors`;
    const etag = `"${(await import('node:crypto')).createHash('sha256').update(v1).digest('hex')}"`;
    writeFileSync(join(dir, 'cache', `${key}.part`), Buffer.concat([v1, new Uint8Array(100)]));
    const record = { etag, size: null, sha256: null, url: 'x' };
    await diskCache(join(dir, 'cache')).put(`@partial/${key}`, encode(record));
    equal(await files.read('model.safetensors'), v1);
    expect(cdnRequests().map((r) => r.range)).toEqual([`bytes=${v1.length + 100}-`, undefined]);
  });
});

describe('what counts as cached', () => {
  it("refuses bytes that do not have the hub's SHA-256, and keeps nothing", async () => {
    const v1 = tensors(5_000, 1);
    const commit = hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    hub.fault('model.safetensors', { kind: 'flip-byte' });
    await expect(source().read('model.safetensors')).rejects.toThrow(
      /model\.safetensors has SHA-256 [0-9a-f]{64}, but the hub gives [0-9a-f]{64}; it was not kept\.$/,
    );
    expect(existsSync(join(dir, 'cache', ID, commit, 'model.safetensors'))).toBe(false);
    equal(await source().read('model.safetensors'), v1);
  });

  it('refuses a half-length safetensors and a web page saved as config.json, naming each, and keeps neither', async () => {
    hub.hubHeaders = false;
    hub.publish(ID, { 'config.json': config, 'model.safetensors': tensors(5_000, 1) });
    hub.fault('config.json', { kind: 'html' });
    hub.fault('model.safetensors', { kind: 'truncate' });
    await expect(source().read('config.json')).rejects.toThrow(
      /config\.json cannot be the file: it is a web page \("<!DOCTYPE html><html><body>Sign in to co…"\), not JSON; it was not kept/,
    );
    await expect(source().read('model.safetensors')).rejects.toThrow(
      /model\.safetensors cannot be the file: model\.safetensors: tensor "w" offsets \[0, 20000\] do not fit/,
    );
    expect(readdirSync(join(dir, 'cache', ID, 'main'))).toEqual([]);
  });

  it('removes a damaged cache entry with a message naming it and what to run, and downloads it again next time', async () => {
    const v1 = tensors(5_000, 1);
    const commit = hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    await source().read('config.json');
    await source().read('model.safetensors');
    const weights = join(dir, 'cache', ID, commit, 'model.safetensors');
    appendFileSync(weights, new Uint8Array(8)); // trailing bytes
    await expect(source().read('model.safetensors')).rejects.toThrow(
      new RegExp(
        `^The cached model\\.safetensors of org/m@${commit} \\(.*${commit}/model\\.safetensors\\) is damaged: it has ${v1.length + 8} bytes, not the ${v1.length} downloaded\\. It was removed from the cache; load hf:org/m again \\(the same command\\) to download it anew\\.$`,
      ),
    );
    expect(existsSync(weights)).toBe(false);
    equal(await source().read('model.safetensors'), v1);

    const flipped = readFileSync(weights);
    flipped[flipped.length - 1] ^= 1;
    writeFileSync(weights, flipped);
    await expect(source().read('model.safetensors')).rejects.toThrow(
      /cached model\.safetensors .* is damaged: its SHA-256 is/,
    );

    const cfg = join(dir, 'cache', ID, commit, 'config.json');
    writeFileSync(cfg, '<html>' + ' '.repeat(config.length - 6)); // same size, no hash from the hub: the JSON check finds it
    await expect(source().read('config.json')).rejects.toThrow(
      /cached config\.json .* is damaged: its SHA-256|cached config\.json .* is damaged: it is a web page/,
    );
  });
});

describe('revisions', () => {
  /** The tiny qwen3 parity model as a sharded repository (an index and two shards, no model.safetensors). */
  async function shardedRepo(seed: number): Promise<{ files: Map<string, Uint8Array>; logits: Float32Array }> {
    const c = loadFixture<Record<string, { config: HfConfigJson }>>('model-parity.json').qwen3;
    const model = TransformerModel.create({ ...fromHfConfig(c.config), vocabSize: 264 }, seed);
    const files = await saveModel(model, HfTokenizer.fromJson(tinyTokenizerJson(), { eos_token: '<|endoftext|>' }));
    const all = readSafetensors(files.get('model.safetensors')!).tensors;
    files.delete('model.safetensors');
    const names = [...all.keys()];
    const weightMap: Record<string, string> = {};
    names.forEach(
      (n, i) =>
        (weightMap[n] = i < names.length / 2 ? 'model-00001-of-00002.safetensors' : 'model-00002-of-00002.safetensors'),
    );
    for (const shard of new Set(Object.values(weightMap))) {
      files.set(
        shard,
        writeSafetensors(new Map(names.filter((n) => weightMap[n] === shard).map((n) => [n, all.get(n)!]))),
      );
    }
    files.set('model.safetensors.index.json', encode({ metadata: {}, weight_map: weightMap }));
    const logits = tf.tidy(() => model.forward([[1, 2, 3, 4]]).logits.dataSync() as Float32Array);
    model.dispose();
    return { files, logits };
  }

  it('pins main to its commit once: a sharded model loads again offline with no request, a moved main is taken only with refresh, and the commits stay apart', async () => {
    const v1 = await shardedRepo(5);
    const v2 = await shardedRepo(6);
    const c1 = hub.publish(ID, v1.files);
    const load = async (hubOptions: HubOptions) => {
      const loaded = await loadHfModel(`hf:${ID}`, { hub: hubOptions });
      const logits = tf.tidy(() => loaded.model.forward([[1, 2, 3, 4]]).logits.dataSync() as Float32Array);
      loaded.model.dispose();
      return logits;
    };
    expectClose(await load(options()), v1.logits, 'first load', 1e-6, 0);

    hub.requests.length = 0;
    expectClose(await load(options({ endpoint: 'http://127.0.0.1:9' })), v1.logits, 'offline load', 1e-6, 0); // nothing listens there
    const c2 = hub.publish(ID, v2.files); // main moves on
    expectClose(await load(options()), v1.logits, 'pinned load', 1e-6, 0);
    expect(hub.requests).toEqual([]);

    expectClose(await load(options({ refresh: true })), v2.logits, 'refreshed load', 1e-6, 0);
    expect(
      hub.requests.every(
        (r) =>
          r.url.startsWith('/cdn/') || r.url.includes(`/resolve/${c2}/`) || r.url === `/${ID}/resolve/main/config.json`,
      ),
    ).toBe(true);
    for (const [commit, files] of [
      [c1, v1.files],
      [c2, v2.files],
    ] as const) {
      for (const [name, bytes] of files)
        equal(new Uint8Array(readFileSync(join(dir, 'cache', ID, commit, name))), bytes);
    }
  });

  it('refuses ids, revisions and file names that would leave the cache folder', async () => {
    expect(() => parseHubRef('hf:../..')).toThrow(/not a hub model id/);
    expect(() => parseHubRef('hf:org/m@../../../etc')).toThrow(/not a hub model id/);
    expect(parseHubRef('https://huggingface.co/../x')).toBeNull();
    hub.publish(ID, { 'config.json': config });
    await expect(source().read('../../../outside.json')).rejects.toThrow(
      /Refusing to download "\.\.\/\.\.\/\.\.\/outside\.json" from the hub: a file name may not leave the model's folder/,
    );
    expect(hub.requests).toEqual([]);
  });
});

describe('limits', () => {
  it('refuses a 50 GiB Content-Length and a 100 MB config.json at the headers, naming the file, the size and the limit', async () => {
    hub.hubHeaders = false;
    hub.publish(ID, { 'config.json': config, 'model.safetensors': tensors(100, 1) });
    hub.fault('model.safetensors', { kind: 'announce', length: 50 * 2 ** 30 });
    hub.fault('config.json', { kind: 'announce', length: 100e6 });
    // The server sends the headers and then nothing: only a refusal at the headers ends it with this error
    // (reading on would stall until the idle timeout and fail saying so).
    await expect(
      source({ limits: { connectTimeoutMs: 5000, idleTimeoutMs: 5000 } }).read('config.json'),
    ).rejects.toThrow(
      /GET http:\/\/127\.0\.0\.1:\d+\/org\/m\/resolve\/main\/config\.json: the server announces 95\.4 MiB for config\.json, over the 64\.0 MiB accepted for such a file/,
    );
    await expect(
      source({ limits: { connectTimeoutMs: 5000, idleTimeoutMs: 5000 } }).read('model.safetensors'),
    ).rejects.toThrow(/the server announces 50\.0 GiB for model\.safetensors, over the 8\.0 GiB accepted/);
  });

  it('stops an endless config.json at its 64 MiB limit', async () => {
    hub.hubHeaders = false;
    hub.publish(ID, { 'config.json': config });
    hub.fault('config.json', { kind: 'endless' });
    await expect(
      source({ limits: { connectTimeoutMs: 5000, idleTimeoutMs: 5000 } }).read('config.json'),
    ).rejects.toThrow(
      /config\.json failed: GET .*config\.json: the body passed 64\.0 MiB, the most accepted for this file\.$/,
    );
  });

  /** The cache's files of `name` (the file, its partial file and their records), wherever they are. */
  const cachedFiles = (name: string) =>
    (existsSync(join(dir, 'cache')) ? (readdirSync(join(dir, 'cache'), { recursive: true }) as string[]) : []).filter(
      (f) => f.includes(name),
    );
  /** A safetensors header that declares one float32 tensor of `bytes` bytes (the data is not sent with it). */
  const header = (bytes: number) => {
    const json = Buffer.from(JSON.stringify({ w: { dtype: 'F32', shape: [bytes / 4], data_offsets: [0, bytes] } }));
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    return Buffer.concat([length, json]);
  };

  it('streams an endless chunked body to disk and stops it at the cap or at what its header declares, keeping nothing, with memory bounded', async () => {
    hub.hubHeaders = false; // a plain mirror: no size is announced, the body is chunked
    hub.publish(ID, { 'config.json': config, 'model.safetensors': tensors(100, 1) });
    for (const [file, fault, message] of [
      [
        'config.json',
        { kind: 'endless' },
        /^Downloading config\.json failed: GET .*\/config\.json: the body passed 4\.0 MiB, the most accepted for this file\.$/,
      ],
      [
        'config.json',
        { kind: 'endless', etag: false },
        /config\.json: the body passed 4\.0 MiB, the most accepted for this file\.$/,
      ],
      [
        'model.safetensors',
        { kind: 'endless', prefix: header(3 * 2 ** 20) },
        /^Downloading model\.safetensors failed: GET .*\/model\.safetensors: the server sent more than the 3\.0 MiB the header of model\.safetensors declares\.$/,
      ],
      [
        'model.safetensors',
        { kind: 'endless', prefix: header(3 * 2 ** 20), etag: false },
        /the server sent more than the 3\.0 MiB the header of model\.safetensors declares\.$/,
      ],
    ] as const) {
      hub.fault(file, fault);
      const buffered: number[] = [];
      const { counted, written } = counting(diskCache(join(dir, 'cache')));
      const limits = { connectTimeoutMs: 5000, idleTimeoutMs: 5000 };
      await expect(
        source({
          cache: counted,
          limits,
          maxFileBytes: 4 * 2 ** 20,
          checkpointBytes: 64 * 1024,
          onProgress: (p) => buffered.push(p.buffered),
        }).read(file),
      ).rejects.toThrow(message);
      expect(cachedFiles(file)).toEqual([]);
      expect(written.appendPartial).toBeGreaterThan(2 * 2 ** 20); // on disk as it came, not held
      expect(Math.max(...buffered)).toBeLessThan(2 ** 20); // a checkpoint and a chunk, never the body so far
    }
  });

  it('refuses a safetensors body at its first bytes when its header is foreign or declares more than the cap, with the default limits', async () => {
    hub.hubHeaders = false;
    hub.publish(ID, { 'config.json': config, 'model.safetensors': tensors(100, 1) });
    const limits = { connectTimeoutMs: 5000, idleTimeoutMs: 5000 };
    hub.fault('model.safetensors', { kind: 'endless' }); // spaces: a header length of 2.3e18 bytes
    await expect(source({ limits }).read('model.safetensors')).rejects.toThrow(
      /model\.safetensors: model\.safetensors cannot be the file: its header length 2314885530818453536 is over 100000000 bytes; it is not a safetensors file\.$/,
    );
    hub.fault('model.safetensors', { kind: 'endless', prefix: header(2 * 2 ** 30) });
    await expect(source({ limits, maxFileBytes: 4 * 2 ** 20 }).read('model.safetensors')).rejects.toThrow(
      /: the header of model\.safetensors declares 2\.0 GiB, over the 4\.0 MiB accepted for such a file\.$/,
    );
    expect(cachedFiles('model.safetensors')).toEqual([]);
    equal(await source().read('model.safetensors'), tensors(100, 1));
  });

  // Each error names the limit that ended it; limits ignored for the defaults (30 s each) would run the
  // test past its timeout.
  it('fails a server that hangs after the headers, drips bytes or never answers within the stated time, naming the URL', async () => {
    hub.publish(ID, { 'config.json': config });
    for (const [fault, message] of [
      [
        { kind: 'hang' },
        /config\.json failed: GET http:\/\/127\.0\.0\.1:\d+\/org\/m\/resolve\/[0-9a-f]{40}\/config\.json: no bytes in 0\.3 s after 0 bytes; the server stalled; gave up after 1 try/,
      ],
      [{ kind: 'drip', everyMs: 20 }, /config\.json: only \d+ bytes in 0\.3 s after 0 bytes; the server stalled/],
      [
        { kind: 'silent' },
        /GET http:\/\/127\.0\.0\.1:\d+\/org\/m\/resolve\/[0-9a-f]{40}\/config\.json: no answer within 0\.5 s; gave up after 1 try/,
      ],
    ] as const) {
      hub.fault('config.json', fault);
      await expect(source().read('config.json')).rejects.toThrow(message);
    }
  });

  it('stops at a Ctrl-C (the signal), keeping what arrived and saying how to resume', async () => {
    const v1 = tensors(20_000, 1);
    hub.publish(ID, { 'config.json': config, 'model.safetensors': v1 });
    hub.fault('model.safetensors', { kind: 'stall', after: 30_000 });
    const stop = new AbortController();
    // Ctrl-C once the 30,000 bytes the server sends before it stalls have arrived. The idle timeout is far
    // off: a signal that did not stop the download would end it as stalled, not interrupted.
    const onProgress = (p: { loaded: number }) => {
      if (p.loaded >= 30_000) stop.abort();
    };
    const reading = source({
      signal: stop.signal,
      onProgress,
      limits: { connectTimeoutMs: 5000, idleTimeoutMs: 5000 },
    }).read('model.safetensors');
    await expect(reading).rejects.toThrow(
      /^Downloading model\.safetensors failed: interrupted after 29\.3 KiB\. 29\.3 KiB are kept; run the same command again to resume from there\.$/,
    );
    equal(await source().read('model.safetensors'), v1);
    expect(cdnRequests().at(-1)!.range).toBe('bytes=30000-');
  });

  it('retries with backoff, waits as long as Retry-After says, and stops after the stated budget, saying so', async () => {
    hub.publish(ID, { 'config.json': config });
    hub.fault('config.json', { kind: 'status', status: 503, retryAfter: '1' });
    const waits: number[] = [];
    equal(
      await source({ retry: { attempts: 4, baseDelayMs: 10 }, wait: async (ms) => void waits.push(ms) }).read(
        'config.json',
      ),
      config,
    );
    expect(hub.requests.filter((r) => r.url.endsWith('config.json'))).toHaveLength(2);
    expect(waits).toEqual([1000]); // Retry-After's second, not the 10 ms backoff

    hub.requests.length = 0;
    hub.fault('config.json', { kind: 'status', status: 500 }, 3);
    await expect(source({ cache: null, retry: { attempts: 3, baseDelayMs: 10 } }).read('config.json')).rejects.toThrow(
      /^Downloading config\.json failed: GET http:\/\/.*\/config\.json: HTTP 500 Internal Server Error; gave up after 3 tries in 0 s \(retry budget: 3 tries, 120 s of waiting\)\. Run the same command again to try again\.$/,
    );
    expect(hub.requests).toHaveLength(3);

    hub.fault('config.json', { kind: 'status', status: 429, retryAfter: '3600' });
    await expect(source({ cache: null, retry: { attempts: 5 } }).read('config.json')).rejects.toThrow(
      /HTTP 429 Too Many Requests; gave up after 1 try/,
    );
  });
});

describe('writing the partial file', () => {
  it('appends each checkpoint to the partial file and renames it into place: a file is written once', async () => {
    const big = tensors(256_000, 1); // ~1 MiB
    hub.publish(ID, { 'config.json': config, 'model.safetensors': big });
    const { counted, written } = counting(diskCache(join(dir, 'cache')));
    equal(await source({ cache: counted, checkpointBytes: 64 * 1024 }).read('model.safetensors'), big);
    expect(written).toEqual({ put: 0, putPartial: 0, appendPartial: big.length });
  });

  it('in the browser, keeps the partial file in Cache Storage as appended pieces and resumes from them', async () => {
    const entries = new Map<string, Uint8Array>();
    const bucket = {
      match: async (url: string) => (entries.has(url) ? new Response(entries.get(url)! as BlobPart) : undefined),
      put: async (url: string, response: Response) =>
        void entries.set(url, new Uint8Array(await response.arrayBuffer())),
      delete: async (url: string) => entries.delete(url),
    };
    vi.stubGlobal('caches', { open: async () => bucket });
    const big = tensors(50_000, 1);
    const commit = hub.publish(ID, { 'config.json': config, 'model.safetensors': big });
    hub.fault('model.safetensors', { kind: 'cut', after: 100_000 });
    const browser = () => source({ cache: browserCache(), checkpointBytes: 16 * 1024 });
    await expect(browser().read('model.safetensors')).rejects.toThrow(
      /KiB are kept; run the same command again to resume/,
    );
    const pieces = [...entries.keys()].filter((k) => k.includes(`${commit}/model.safetensors?part=`));
    expect(pieces.length).toBeGreaterThan(1);
    equal(await browser().read('model.safetensors'), big);
    expect(cdnRequests().at(-1)!.range).toMatch(/^bytes=\d+-$/);
    expect([...entries.keys()].filter((k) => k.includes('?part='))).toEqual([]);
    hub.requests.length = 0;
    equal(await browser().read('model.safetensors'), big);
    expect(hub.requests).toEqual([]);
  });
});
