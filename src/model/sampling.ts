/**
 * Batched autoregressive sampling with a KV cache (the last stage after attention → MLP → block →
 * model in transformer.ts).
 *
 * - Prompts of different lengths are left-padded; padding keys are masked and every row gets its
 *   own positions, so a row samples the same tokens alone or in a batch (up to float rounding).
 * - Randomness comes from `seed` only: row b draws from its own stream `deriveSeed(seed, b)`.
 * - The returned log-prob of a sampled token is log softmax(logits / temperature) at that token,
 *   over the full vocabulary (top-k/top-p only restrict what may be drawn). This is what TRL
 *   recomputes for the GRPO ratio; at temperature 0 (greedy) it is the temperature-1 log-prob
 *   (temperature.ts, the rule training recomputes by too).
 * - `useCache: false` recomputes the whole prefix at every step: the reference the cache is tested
 *   and benchmarked against.
 * - Turn caches (`past`, `keepCaches`): a multi-turn episode's next prompt begins with its last prompt
 *   and what it sampled, so a row may bring the keys and values of that beginning (TurnCache) and only
 *   the rest is prefilled. The cached keys are placed so that every real key sits at the same offset
 *   modulo PAD_ALIGN as in a fresh prefill, with whole blocks of masked keys between, so batching still
 *   never changes a row. The cached keys of sampled tokens were made by the decoding step rather than a
 *   prefill, which rounds differently: a reused row's log-probs match a fresh prefill's to about 1e-6
 *   (tested within 1e-5), not bit for bit, and its tokens are the same but for a draw that lands within
 *   that distance of a boundary (none in the tests' episodes). Bit equality would need the decoding
 *   step and the prefill to round alike, and more: keeping only prefilled keys (the sampled tokens
 *   prefilled again with the observation) was tried and is not exact either, as a prefill of the new
 *   positions after cached ones does not round as one over the whole conversation. The drift is harmless
 *   to training: these log-probs are GRPO's old_logp (train/grpo-loss.ts), whose ratio
 *   exp(logp − old_logp) moves by ~1e-6 against a ±0.2 clip and the rounding the trainer's own
 *   recomputation of logp already has.
 */
import * as tf from '@tensorflow/tfjs';
import { createRng, deriveSeed, type Rng } from '../rng.ts';
import { rowsWithinScoreBudget } from './memory.ts';
import { scoringTemperature } from './temperature.ts';
import type { KVCache, TransformerModel } from './transformer.ts';

export interface SamplingOptions {
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** Keep only the k most likely tokens; 0 = off. */
  topK?: number;
  /** Keep the smallest set of tokens whose probability reaches p; 1 = off. */
  topP?: number;
  /** Generation of a row ends after it samples one of these (the stop token is kept). */
  stopTokens?: number[];
  seed: number;
  /**
   * One seed per row instead of `deriveSeed(seed, row)`: requests batched together from different
   * episodes keep their own streams (row b with rowSeeds[b] = deriveSeed(s, 0) samples like a
   * batch of one with seed s).
   */
  rowSeeds?: number[];
  useCache?: boolean;
  /** false samples from the reference policy (LoRA off). */
  useLora?: boolean;
  /** Token fed as left padding (masked, so any id works). */
  padId?: number;
  /** Most attention-score floats (rows × heads × L²) one prefill forward may hold; default defaultPrefillScoreFloats(): 2²⁵ on a GPU, 2²² on wasm. */
  prefillScoreFloats?: number;
  signal?: AbortSignal;
  /** Called for every sampled token, in order, per row. */
  onToken?: (row: number, token: number) => void;
  /**
   * Per row, an earlier turn's cache whose tokens are a proper prefix of that row's prompt (null: the
   * whole prompt is prefilled). Only the rest of the prompt runs through the model; the caller keeps
   * ownership of the caches (they are read, never disposed, here). Needs the cache (useCache).
   */
  past?: (TurnCache | null)[];
  /** Return each row's TurnCache (`caches`): its prompt and every sampled token but the last, for its next turn. */
  keepCaches?: boolean;
}

/**
 * The keys and values of `tokens`, per layer [1, Hkv, tokens.length, D]: what a row of one generate call
 * leaves for the next turn of its episode (its prompt and all but the last token it sampled, which it
 * never fed). Dispose with disposeTurnCache.
 */
export interface TurnCache {
  tokens: number[];
  k: tf.Tensor4D[];
  v: tf.Tensor4D[];
}

export function disposeTurnCache(cache: TurnCache | null | undefined): void {
  if (!cache) return;
  for (const t of cache.k) t.dispose();
  for (const t of cache.v) t.dispose();
}

/** Bytes a turn cache holds on the backend. */
export function turnCacheBytes(cache: TurnCache): number {
  return [...cache.k, ...cache.v].reduce((n, t) => n + t.size * 4, 0);
}

export interface GenerateResult {
  /** New tokens per row, including the stop token when a row stopped on one. */
  tokens: number[][];
  /** Log-prob of each new token (see header). */
  logprobs: number[][];
  finishReasons: ('stop' | 'length')[];
  /** With `keepCaches`: each row's cache for its next turn (null for a row that sampled nothing). The caller disposes them. */
  caches?: (TurnCache | null)[];
}

/** Scratch of sampleToken (it is synchronous, so one pair serves every call), grown to the largest vocabulary seen. */
let scaledScratch = new Float64Array(0);
let weightScratch = new Float64Array(0);

/**
 * Draws one token from a logits row. Pure given the RNG; exported for tests. Each exp is taken once and
 * reused (a row is sampled per token per episode, and at a 151,936-token vocabulary every pass counts),
 * into scratch kept between calls: allocating two arrays per row was most of a batch-16 step's sampling.
 */
export function sampleToken(
  logits: ArrayLike<number>,
  options: Pick<SamplingOptions, 'temperature' | 'topK' | 'topP'>,
  rng: Rng,
): { token: number; logprob: number } {
  const V = logits.length;
  if (scaledScratch.length < V) [scaledScratch, weightScratch] = [new Float64Array(V), new Float64Array(V)];
  const [scaled, weight] = [scaledScratch, weightScratch];
  const greedy = options.temperature <= 0;
  const temperature = scoringTemperature(options.temperature);
  let max = -Infinity;
  let best = 0; // the first index of the largest logit
  for (let i = 0; i < V; i++) {
    const x = logits[i] / temperature;
    scaled[i] = x;
    if (x > max) [max, best] = [x, i];
  }
  let total = 0;
  for (let i = 0; i < V; i++) total += weight[i] = Math.exp(scaled[i] - max); // exp(scaled − max)
  const logZ = max + Math.log(total);
  const logprobOf = (token: number) => ({ token, logprob: scaled[token] - logZ });

  if (greedy) return logprobOf(best);
  const topK = options.topK ?? 0;
  const topP = options.topP ?? 1;
  if ((topK > 0 && topK < V) || topP < 1)
    return drawFrom(filtered(scaled, V, logZ, topK, topP), weight, rng, logprobOf);
  // No filter: every token is a candidate, in index order.
  let u = rng.next() * total;
  for (let i = 0; i < V; i++) {
    u -= weight[i];
    if (u <= 0) return logprobOf(i);
  }
  return logprobOf(V - 1);
}

/** The top-k / top-p candidates among the first V scaled logits, most likely first. */
function filtered(scaled: Float64Array, V: number, logZ: number, topK: number, topP: number): number[] {
  let candidates = Array.from({ length: V }, (_, i) => i).sort((a, b) => scaled[b] - scaled[a]);
  if (topK > 0 && topK < V) candidates = candidates.slice(0, topK);
  if (topP < 1) {
    let cumulative = 0;
    let keep = 0;
    while (keep < candidates.length && cumulative < topP) cumulative += Math.exp(scaled[candidates[keep++]] - logZ);
    candidates = candidates.slice(0, Math.max(1, keep));
  }
  return candidates;
}

/** One candidate, drawn in proportion to its weight. */
function drawFrom<T>(candidates: number[], weight: Float64Array, rng: Rng, pick: (token: number) => T): T {
  let mass = 0;
  for (const i of candidates) mass += weight[i];
  let u = rng.next() * mass;
  for (const i of candidates) {
    u -= weight[i];
    if (u <= 0) return pick(i);
  }
  return pick(candidates[candidates.length - 1]);
}

/** Left padding makes every prompt a multiple of this many positions (see generate). */
const PAD_ALIGN = 8;

/** Samples continuations of each prompt. Leaves no tensors behind (but the `caches` it returns with keepCaches). */
export async function generate(
  model: TransformerModel,
  prompts: number[][],
  options: SamplingOptions,
): Promise<GenerateResult> {
  const B = prompts.length;
  if (B === 0) return { tokens: [], logprobs: [], finishReasons: [], ...(options.keepCaches ? { caches: [] } : {}) };
  if (prompts.some((p) => p.length === 0)) throw new Error('generate: every prompt needs at least one token.');
  const longest = Math.max(...prompts.map((p) => p.length));
  const maxNew = Math.min(options.maxNewTokens, model.config.maxPositions - longest);
  const pad = options.padId ?? 0;
  const stops = new Set(options.stopTokens ?? []);
  const useCache = options.useCache ?? true;
  if (options.rowSeeds && options.rowSeeds.length !== B)
    throw new Error(`generate: ${options.rowSeeds.length} rowSeeds for ${B} prompts.`);
  const rngs = prompts.map((_, b) => createRng(options.rowSeeds ? options.rowSeeds[b] : deriveSeed(options.seed, b)));
  const past = checkedPast(prompts, options, useCache);
  const rows = paddedRows(prompts, past, pad);
  // The rows still in the batch, in cache order. Finished rows leave it (and the cache) in bunches: a
  // decoding step costs about in proportion to its rows, and sampled rows finish far apart.
  let active = prompts.map((_, b) => b);
  let cache: KVCache | null = useCache ? model.emptyCache() : null;
  // Rows with the same prompt (a GRPO group's first turn) share one prefill; their cache rows are copies.
  const { distinct, sourceOf } = distinctRows(prompts);
  const sharePrefill = useCache && rows.pastWidth === 0 && distinct.length < B;
  let inputIds = sharePrefill ? distinct.map((b) => rows.ids[b]) : rows.ids;
  let inputPositions = sharePrefill ? distinct.map((b) => rows.positions[b]) : rows.positions;
  const kept: (TurnCache | null)[] | null = options.keepCaches ? prompts.map(() => null) : null;

  try {
    for (let step = 0; step < maxNew; step++) {
      if (options.signal?.aborted) throw new DOMException('Generation aborted', 'AbortError');
      const prefillShared = sharePrefill && step === 0;
      const batchRows = prefillShared ? distinct : active;
      const inputs = { ids: inputIds, positions: inputPositions, keyValid: batchRows.map((b) => rows.keyValid[b]) };
      if (cache) cache.reserve = rows.width + maxNew; // the most positions this call writes: the cache grows once
      const budget = options.prefillScoreFloats ?? defaultPrefillScoreFloats();
      const out =
        step === 0 && cache
          ? prefill(model, inputs, budget, options.useLora, { past, rows: batchRows, width: rows.pastWidth })
          : forwardStep(model, inputs, cache, options.useLora);
      disposeCache(cache);
      cache = out.cache;
      if (prefillShared && cache) cache = keepRows(cache, sourceOf);
      const data = await out.logits.data();
      out.logits.dispose();

      sampleRows(rows, active, data, model.config.vocabSize, prefillShared ? sourceOf : null, stops, options, rngs);
      if (rows.done.every(Boolean)) break;

      const finished = active.filter((b) => rows.done[b]).length;
      if (finished >= Math.max(1, Math.ceil(active.length / 4))) {
        if (cache && kept) keepTurnCaches(cache, active, prompts, rows, kept, (b) => rows.done[b]);
        const keep = active.flatMap((b, row) => (rows.done[b] ? [] : [row]));
        if (cache) cache = keepRows(cache, keep);
        active = keep.map((row) => active[row]);
      }
      appendSampled(rows, active, prompts, pad);
      inputIds = active.map((b) => (useCache ? [rows.ids[b][rows.ids[b].length - 1]] : rows.ids[b]));
      inputPositions = active.map((b) =>
        useCache ? [rows.positions[b][rows.positions[b].length - 1]] : rows.positions[b],
      );
    }
    if (cache && kept) keepTurnCaches(cache, active, prompts, rows, kept, () => true);
  } catch (error) {
    for (const c of kept ?? []) disposeTurnCache(c);
    throw error;
  } finally {
    disposeCache(cache);
  }
  const result = { tokens: rows.tokens, logprobs: rows.logprobs, finishReasons: rows.finishReasons };
  return kept ? { ...result, caches: kept } : result;
}

/** options.past, checked: one entry per prompt, each a proper prefix of its prompt (all null without it). */
function checkedPast(prompts: number[][], options: SamplingOptions, useCache: boolean): (TurnCache | null)[] {
  const past = (options.past ?? prompts.map(() => null)).map((c) => (c && c.tokens.length > 0 ? c : null));
  if (past.length !== prompts.length)
    throw new Error(`generate: ${past.length} past caches for ${prompts.length} prompts.`);
  past.forEach((c, b) => {
    if (!c) return;
    if (!useCache) throw new Error('generate: a past cache needs useCache.');
    const p = prompts[b];
    if (c.tokens.length >= p.length || c.tokens.some((t, i) => p[i] !== t))
      throw new Error(`generate: row ${b}'s past cache is not a proper prefix of its prompt.`);
  });
  return past;
}

/** Every row of a generate call: its input so far and what it sampled. */
interface DecodingRows {
  /** Left-padded ids (the part of the prompt that is prefilled), their key validity and positions; grown by one column per step. */
  ids: number[][];
  /** Over the past cache's columns, then the prefilled ones and the sampled ones. */
  keyValid: boolean[][];
  positions: number[][];
  tokens: number[][];
  logprobs: number[][];
  finishReasons: ('stop' | 'length')[];
  done: boolean[];
  /** Columns of the past caches in front of the prefilled ones (a multiple of PAD_ALIGN; 0 without past caches). */
  pastWidth: number;
  /** pastWidth plus the prefilled columns. */
  width: number;
  /** Per row, the cache columns of its prompt's keys: [first, count] of its cached ones, then of its prefilled ones (which its sampled ones follow). */
  promptColumns: [number, number][][];
}

/**
 * The prompts left-padded (padding is masked out of the keys), nothing sampled yet. Without past caches
 * every row is left-padded to a multiple of PAD_ALIGN, alone or batched: a row then starts at the same
 * offset modulo the SIMD lanes and blocks its sums over keys run in, so batching adds whole blocks of
 * masked zeros in front and a row's floats, and so its tokens, are those it gets alone (tested). A row
 * with a past cache keeps that: its cached keys are followed by `suffix mod PAD_ALIGN` masked ones, so
 * the masked gap to its (left-padded) suffix is whole blocks and each real key sits where a fresh
 * prefill of the whole prompt would put it, modulo PAD_ALIGN.
 */
function paddedRows(prompts: number[][], past: (TurnCache | null)[], pad: number): DecodingRows {
  const cached = past.map((c) => c?.tokens.length ?? 0);
  const suffixes = prompts.map((p, b) => p.slice(cached[b]));
  const align = (n: number) => Math.ceil(n / PAD_ALIGN) * PAD_ALIGN;
  const T = align(Math.max(...suffixes.map((s) => s.length)));
  const P = align(Math.max(0, ...cached.map((c, b) => (c > 0 ? c + (suffixes[b].length % PAD_ALIGN) : 0))));
  const cachedStart = cached.map((c, b) => P - (suffixes[b].length % PAD_ALIGN) - c);
  return {
    ids: suffixes.map((s) => [...Array<number>(T - s.length).fill(pad), ...s]),
    keyValid: suffixes.map((s, b) => [
      ...Array.from({ length: P }, (_, j) => j >= cachedStart[b] && j < cachedStart[b] + cached[b]),
      ...Array<boolean>(T - s.length).fill(false),
      ...s.map(() => true),
    ]),
    positions: suffixes.map((s, b) => [...Array<number>(T - s.length).fill(0), ...s.map((_, t) => cached[b] + t)]),
    tokens: prompts.map(() => []),
    logprobs: prompts.map(() => []),
    finishReasons: prompts.map(() => 'length'),
    done: prompts.map(() => false),
    pastWidth: P,
    width: P + T,
    promptColumns: suffixes.map((s, b) => [
      ...(cached[b] > 0 ? [[cachedStart[b], cached[b]] as [number, number]] : []),
      [P + T - s.length, s.length],
    ]),
  };
}

/**
 * The TurnCache of every row of the batch that `take` picks and that has none yet and sampled something:
 * its prompt's keys and values and those of its sampled tokens but the last (which it never fed).
 */
function keepTurnCaches(
  cache: KVCache,
  active: number[],
  prompts: number[][],
  rows: DecodingRows,
  kept: (TurnCache | null)[],
  take: (b: number) => boolean,
): void {
  active.forEach((b, row) => {
    const sampled = rows.tokens[b].length;
    if (kept[b] || !take(b) || sampled === 0) return;
    // Two runs of columns at most, copied by slices: the cached keys, then the prefilled and sampled ones.
    const runs = rows.promptColumns[b].map(([first, count], i, all) => [
      first,
      count + (i === all.length - 1 ? sampled - 1 : 0),
    ]);
    const pick = (layers: tf.Tensor4D[]) =>
      layers.map((t) =>
        tf.tidy(() => {
          const parts = runs.map(([first, count]) => t.slice([row, 0, first, 0], [1, -1, count, -1]));
          return (parts.length === 1 ? parts[0] : tf.concat(parts, 2)) as tf.Tensor4D;
        }),
      );
    kept[b] = { tokens: [...prompts[b], ...rows.tokens[b].slice(0, -1)], k: pick(cache.k), v: pick(cache.v) };
  });
}

/**
 * One token for every unfinished row of the batch, from its logits row (`sourceOf[b]` after a shared prefill, else
 * its place in the batch); a stop token finishes the row.
 */
function sampleRows(
  rows: DecodingRows,
  active: number[],
  data: tf.TypedArray,
  V: number,
  sourceOf: number[] | null,
  stops: ReadonlySet<number>,
  options: SamplingOptions,
  rngs: Rng[],
): void {
  active.forEach((b, row) => {
    if (rows.done[b]) return;
    const logitsRow = sourceOf ? sourceOf[b] : row;
    const { token, logprob } = sampleToken(data.subarray(logitsRow * V, (logitsRow + 1) * V), options, rngs[b]);
    rows.tokens[b].push(token);
    rows.logprobs[b].push(logprob);
    options.onToken?.(b, token);
    if (stops.has(token)) {
      rows.done[b] = true;
      rows.finishReasons[b] = 'stop';
    }
  });
}

/** Next input: the new token of each row (finished rows still in the batch feed padding, their output is ignored). */
function appendSampled(rows: DecodingRows, active: number[], prompts: number[][], pad: number): void {
  for (const b of active) {
    const last = rows.tokens[b][rows.tokens[b].length - 1];
    rows.ids[b].push(rows.done[b] ? pad : last);
    rows.keyValid[b].push(true);
    rows.positions[b].push(prompts[b].length + rows.tokens[b].length - 1);
  }
}

interface StepInputs {
  ids: number[][];
  positions: number[][];
  keyValid: boolean[][];
}

/** One forward pass: the last position's logits [rows, V] and the extended cache. */
function forwardStep(
  model: TransformerModel,
  inputs: StepInputs,
  cache: KVCache | null,
  useLora?: boolean,
): { logits: tf.Tensor2D; cache: KVCache | null } {
  return tf.tidy(() => {
    const r = model.forward(inputs.ids, {
      cache,
      positions: inputs.positions,
      keyValid: inputs.keyValid,
      lastOnly: true,
      useLora,
    });
    return {
      logits: r.logits.reshape([inputs.ids.length, model.config.vocabSize]),
      cache: r.cache,
    } as unknown as tf.TensorContainerObject;
  }) as unknown as { logits: tf.Tensor2D; cache: KVCache | null };
}

/**
 * Attention-score floats one prefill forward may hold (see rowsWithinScoreBudget): 128 MiB per tensor
 * on a GPU, 16 MiB on wasm. On a CPU a bunch's scores, their masked and softmaxed copies should stay
 * near the cache: a batch of sixteen 440-token multi-step turns in one forward (50 MB of scores per
 * layer) prefilled at about half the tokens per second of the same rows in bunches of one to three,
 * and a bunch of one still makes products hundreds of rows deep (bench/pipeline.bench.ts: prefill
 * 3.2 → 2.2–2.4 s of a 24-episode run).
 */
function defaultPrefillScoreFloats(): number {
  return tf.getBackend() === 'wasm' ? 1 << 22 : 1 << 25;
}

/** Past caches of a prefill: per prompt (null: none), the prompts of the batch's rows, and the columns they fill. */
interface PrefillPast {
  past: (TurnCache | null)[];
  rows: number[];
  width: number;
}

/**
 * The prompts' forward pass (after their past caches, when `width` > 0), in bunches of rows holding at most
 * `scoreFloats` attention scores; caches joined by row.
 */
function prefill(
  model: TransformerModel,
  inputs: StepInputs,
  scoreFloats: number,
  useLora: boolean | undefined,
  past: PrefillPast,
): { logits: tf.Tensor2D; cache: KVCache } {
  const T = inputs.ids[0].length;
  const perChunk = rowsWithinScoreBudget(model.config.numHeads, T, scoreFloats, past.width + T);
  const parts: { logits: tf.Tensor2D; cache: KVCache }[] = [];
  for (let start = 0; start < inputs.ids.length; start += perChunk) {
    const rows = <X>(xs: X[]) => (inputs.ids.length <= perChunk ? xs : xs.slice(start, start + perChunk));
    const chunk = { ids: rows(inputs.ids), positions: rows(inputs.positions), keyValid: rows(inputs.keyValid) };
    const before =
      past.width > 0
        ? pastCache(
            model,
            rows(past.rows).map((b) => past.past[b]),
            past.width,
            chunk.keyValid,
          )
        : null;
    parts.push(
      forwardStep(model, chunk, before ?? model.emptyCache(), useLora) as { logits: tf.Tensor2D; cache: KVCache },
    );
    disposeCache(before);
  }
  if (parts.length === 1) return parts[0];
  const joinLayers = (pick: (c: KVCache) => tf.Tensor4D[]) =>
    pick(parts[0].cache).map(
      (_, i) =>
        tf.concat(
          parts.map((p) => pick(p.cache)[i]),
          0,
        ) as tf.Tensor4D,
    );
  const joined = {
    logits: tf.concat(
      parts.map((p) => p.logits),
      0,
    ) as tf.Tensor2D,
    cache: { k: joinLayers((c) => c.k), v: joinLayers((c) => c.v), length: parts[0].cache.length },
  };
  for (const p of parts) {
    p.logits.dispose();
    disposeCache(p.cache);
  }
  return joined;
}

/**
 * The rows' past caches laid out in `width` columns, each row's keys and values in the columns its keyValid
 * marks (the first `width` flags), zeros elsewhere (masked): [rows, Hkv, width, D] per layer.
 */
function pastCache(model: TransformerModel, past: (TurnCache | null)[], width: number, keyValid: boolean[][]): KVCache {
  const { numKvHeads: Hkv, headDim: D, numLayers } = model.config;
  const laid = (pick: (c: TurnCache) => tf.Tensor4D[]) =>
    Array.from({ length: numLayers }, (_, i) =>
      tf.tidy(() => {
        const rows = past.map((c, row) => {
          if (!c) return tf.zeros([1, Hkv, width, D]);
          const start = keyValid[row].indexOf(true);
          const after = width - start - c.tokens.length;
          return tf.pad(pick(c)[i], [
            [0, 0],
            [0, 0],
            [start, after],
            [0, 0],
          ]);
        });
        return (rows.length === 1 ? rows[0] : tf.concat(rows, 0)) as tf.Tensor4D;
      }),
    );
  return { k: laid((c) => c.k), v: laid((c) => c.v), length: width };
}

/** The first row of each distinct prompt, and for every row the index of its prompt among those. */
function distinctRows(prompts: number[][]): { distinct: number[]; sourceOf: number[] } {
  const indexOf = new Map<string, number>();
  const distinct: number[] = [];
  const sourceOf = prompts.map((p, b) => {
    const key = p.join(',');
    if (!indexOf.has(key)) {
      indexOf.set(key, distinct.length);
      distinct.push(b);
    }
    return indexOf.get(key)!;
  });
  return { distinct, sourceOf };
}

/** The cache of the given batch rows (repeats allowed) only; the old cache is disposed. */
function keepRows(cache: KVCache, rows: number[]): KVCache {
  const index = tf.tensor1d(rows, 'int32');
  const pick = (layers: tf.Tensor4D[]) => layers.map((t) => tf.gather(t, index, 0) as tf.Tensor4D);
  const kept: KVCache = { k: pick(cache.k), v: pick(cache.v), length: cache.length };
  index.dispose();
  disposeCache(cache);
  return kept;
}

function disposeCache(cache: KVCache | null): void {
  if (!cache) return;
  for (const t of cache.k) t.dispose();
  for (const t of cache.v) t.dispose();
}
