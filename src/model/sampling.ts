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
}

export interface GenerateResult {
  /** New tokens per row, including the stop token when a row stopped on one. */
  tokens: number[][];
  /** Log-prob of each new token (see header). */
  logprobs: number[][];
  finishReasons: ('stop' | 'length')[];
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

/** Samples continuations of each prompt. Leaves no tensors behind. */
export async function generate(
  model: TransformerModel,
  prompts: number[][],
  options: SamplingOptions,
): Promise<GenerateResult> {
  const B = prompts.length;
  if (B === 0) return { tokens: [], logprobs: [], finishReasons: [] };
  if (prompts.some((p) => p.length === 0)) throw new Error('generate: every prompt needs at least one token.');
  const longest = Math.max(...prompts.map((p) => p.length));
  const maxNew = Math.min(options.maxNewTokens, model.config.maxPositions - longest);
  // Every row is left-padded to a multiple of PAD_ALIGN, alone or batched: a row then starts at the same
  // offset modulo the SIMD lanes and blocks its sums over keys run in, so batching adds whole blocks of
  // masked zeros in front and a row's floats, and so its tokens, are those it gets alone (tested).
  const L = Math.ceil(longest / PAD_ALIGN) * PAD_ALIGN;
  const pad = options.padId ?? 0;
  const stops = new Set(options.stopTokens ?? []);
  const useCache = options.useCache ?? true;
  if (options.rowSeeds && options.rowSeeds.length !== B)
    throw new Error(`generate: ${options.rowSeeds.length} rowSeeds for ${B} prompts.`);
  const rngs = prompts.map((_, b) => createRng(options.rowSeeds ? options.rowSeeds[b] : deriveSeed(options.seed, b)));
  const rows = leftPaddedRows(prompts, L, pad);
  // The rows still in the batch, in cache order. Finished rows leave it (and the cache) in bunches: a
  // decoding step costs about in proportion to its rows, and sampled rows finish far apart.
  let active = prompts.map((_, b) => b);
  let cache: KVCache | null = useCache ? model.emptyCache() : null;
  // Rows with the same prompt (a GRPO group's first turn) share one prefill; their cache rows are copies.
  const { distinct, sourceOf } = distinctRows(prompts);
  const sharePrefill = useCache && distinct.length < B;
  let inputIds = sharePrefill ? distinct.map((b) => rows.ids[b]) : rows.ids;
  let inputPositions = sharePrefill ? distinct.map((b) => rows.positions[b]) : rows.positions;

  try {
    for (let step = 0; step < maxNew; step++) {
      if (options.signal?.aborted) throw new DOMException('Generation aborted', 'AbortError');
      const prefillShared = sharePrefill && step === 0;
      const batchRows = prefillShared ? distinct : active;
      const inputs = { ids: inputIds, positions: inputPositions, keyValid: batchRows.map((b) => rows.keyValid[b]) };
      if (cache) cache.reserve = L + maxNew; // the most positions this call writes: the cache grows once
      const out =
        step === 0 && cache
          ? prefill(model, inputs, options.prefillScoreFloats ?? defaultPrefillScoreFloats(), options.useLora)
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
  } finally {
    disposeCache(cache);
  }
  return { tokens: rows.tokens, logprobs: rows.logprobs, finishReasons: rows.finishReasons };
}

/** Every row of a generate call: its input so far and what it sampled. */
interface DecodingRows {
  /** Left-padded ids, their key validity and positions; grown by one column per step. */
  ids: number[][];
  keyValid: boolean[][];
  positions: number[][];
  tokens: number[][];
  logprobs: number[][];
  finishReasons: ('stop' | 'length')[];
  done: boolean[];
}

/** The prompts left-padded to `L` positions (padding is masked out of the keys), nothing sampled yet. */
function leftPaddedRows(prompts: number[][], L: number, pad: number): DecodingRows {
  return {
    ids: prompts.map((p) => [...Array<number>(L - p.length).fill(pad), ...p]),
    keyValid: prompts.map((p) => [...Array<boolean>(L - p.length).fill(false), ...p.map(() => true)]),
    positions: prompts.map((p) => [...Array<number>(L - p.length).fill(0), ...p.map((_, t) => t)]),
    tokens: prompts.map(() => []),
    logprobs: prompts.map(() => []),
    finishReasons: prompts.map(() => 'length'),
    done: prompts.map(() => false),
  };
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

/** The prompts' forward pass, in bunches of rows holding at most `scoreFloats` attention scores; caches joined by row. */
function prefill(
  model: TransformerModel,
  inputs: StepInputs,
  scoreFloats: number,
  useLora?: boolean,
): { logits: tf.Tensor2D; cache: KVCache } {
  const perChunk = rowsWithinScoreBudget(model.config.numHeads, inputs.ids[0].length, scoreFloats);
  if (inputs.ids.length <= perChunk)
    return forwardStep(model, inputs, model.emptyCache(), useLora) as { logits: tf.Tensor2D; cache: KVCache };
  const parts: { logits: tf.Tensor2D; cache: KVCache }[] = [];
  for (let start = 0; start < inputs.ids.length; start += perChunk) {
    const rows = (xs: unknown[][]) => xs.slice(start, start + perChunk);
    const chunk = {
      ids: rows(inputs.ids),
      positions: rows(inputs.positions),
      keyValid: rows(inputs.keyValid),
    } as StepInputs;
    parts.push(forwardStep(model, chunk, model.emptyCache(), useLora) as { logits: tf.Tensor2D; cache: KVCache });
  }
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
