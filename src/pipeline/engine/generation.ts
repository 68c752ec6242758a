/**
 * The engine's generation service: every rollout worker sends its `generate` requests here, and the
 * requests that arrive together are sampled as one batch (one forward pass per new token for all of
 * them, KV cache on). Each request keeps its own seed, so an episode samples the same tokens whether
 * it was batched or not. A request that names its episode leaves the episode's keys and values here
 * (model/turn-cache.ts), so its next turn prefills only the tool observation and the new prompt, until
 * the episode is released. Also the Policy a rollout worker holds: a thin proxy to this service.
 */
import * as tf from '@tensorflow/tfjs';
import type { SamplingParams } from '../../contracts.ts';
import { deriveSeed } from '../../rng.ts';
import { generate, type TurnCache } from '../../model/sampling.ts';
import { TurnCacheStore } from '../../model/turn-cache.ts';
import type { ModelConfig } from '../../model/config.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import type { GenerateOptions, Policy, PolicyContext, PolicyTurn } from '../../rollout/policy.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import { abandonedError, Batcher } from './batcher.ts';
import type { WorkerLink } from './worker-pool.ts';

export interface GenerationRequest {
  tokens: number[];
  sampling: SamplingParams;
  seed: number;
  /** The episode the request is a turn of (PolicyContext.episode): its turn cache is kept for its next turn. */
  episode?: string;
}

export interface GenerationStats {
  batches: number;
  requests: number;
  generatedTokens: number;
  /** Seconds spent inside model generation. */
  seconds: number;
}

export class GenerationService {
  private readonly batcher: Batcher<GenerationRequest, PolicyTurn>;
  readonly stats: GenerationStats = { batches: 0, requests: 0, generatedTokens: 0, seconds: 0 };
  /** The turn caches of the episodes in flight; null when reuseTurnCaches is off. */
  readonly turnCaches: TurnCacheStore | null;

  /**
   * `held` returns a promise while the run is paused: batches wait for it before they sample, so a pause
   * takes effect at the next generation batch (seconds) instead of after the whole update's rollouts.
   *
   * 32 requests per batch hold a default run's 3 groups of 8 at once, so each group's first turn
   * shares one prefill (sampling.ts) instead of being split across two batches.
   */
  /** 32 requests hold a default run's groups at once; 4 ms lets the workers' requests arrive together. */
  static readonly BATCHED = { maxBatch: 32, windowMs: 4 };
  /**
   * Episodes a run keeps in flight when it batches, at least: a decoding step of 8 rows samples about 3×
   * the tokens per second of one row on wasm (bench/model.bench.ts), and a GRPO group is 8 episodes.
   */
  static readonly CONCURRENT_EPISODES = 8;
  /** Key/value cache a batch of turns may hold, over its rows at the model's full context. */
  static readonly KV_BUDGET_BYTES = 256 * 2 ** 20;

  /**
   * Episodes a run keeps in flight when it batches: a whole update's (`updateEpisodes`, every group's
   * first turn then shares one batch, and the decoding steps are as few as the longest episode makes
   * them), within a batch's rows and a key/value cache of KV_BUDGET_BYTES at the model's full context;
   * never fewer than CONCURRENT_EPISODES. A small model keeps all 24 of a default update in flight; a
   * 0.5B one about 10.
   */
  static episodesInFlight(updateEpisodes: number, model: ModelConfig): number {
    const kvBytesPerRow = model.numLayers * 2 * model.numKvHeads * model.headDim * model.maxPositions * 4;
    const fits = Math.floor(GenerationService.KV_BUDGET_BYTES / kvBytesPerRow);
    return Math.max(
      GenerationService.CONCURRENT_EPISODES,
      Math.min(updateEpisodes, GenerationService.BATCHED.maxBatch, fits),
    );
  }

  /** Each request in a forward pass of its own (a reference for benchmarks, and reproducible runs where batching is not exact). */
  static readonly ALONE = { maxBatch: 1, windowMs: 0 };

  /**
   * How a run or a collection samples: batched across episodes, unless it must reproduce on a backend
   * where batching may round differently. On wasm a row's tokens and log-probs are bit for bit those it
   * gets alone (sampling.ts's aligned padding, wasm-matmul.ts's own few-row products; tested in
   * tests/model/batch-invariance.test.ts), so batching is exact there; WebGPU and cpu are not checked.
   */
  static forRun(reproducible: boolean): { maxBatch: number; windowMs: number } {
    return !reproducible || tf.getBackend() === 'wasm' ? GenerationService.BATCHED : GenerationService.ALONE;
  }

  constructor(
    private readonly model: () => TransformerModel,
    private readonly tokenizer: TextTokenizer,
    options: { maxBatch: number; windowMs: number } = GenerationService.BATCHED,
    private readonly held: () => Promise<void> | null = () => null,
    /** false prefills every turn's whole conversation (the reference the turn caches are tested and benchmarked against). */
    reuseTurnCaches = true,
  ) {
    // The episodes in flight hold at most KV_BUDGET_BYTES at full context (episodesInFlight): no entry of
    // a live episode is evicted, only those of episodes whose worker was given up.
    this.turnCaches = reuseTurnCaches ? new TurnCacheStore(2 * GenerationService.KV_BUDGET_BYTES) : null;
    this.batcher = new Batcher((requests, signals) => this.runBatch(requests, signals), options);
  }

  /**
   * `signal` gives the request up: it is rejected at once and dropped from the batch it waits for, and a
   * forward pass running for it stops at its next token once no request of that pass is still wanted.
   */
  generate(request: GenerationRequest, signal?: AbortSignal): Promise<PolicyTurn> {
    return this.batcher.submit(request, signal);
  }

  /** Resolves when the batches started so far have ended (after a stop: when the model is free). */
  idle(): Promise<void> {
    return this.batcher.idle();
  }

  /** The episode ended or was given up: its turn cache goes. */
  release(episode: string): void {
    this.turnCaches?.release(episode);
  }

  /** Requests neither answered nor given up yet. */
  get pending(): number {
    return this.batcher.pending;
  }

  private async runBatch(requests: GenerationRequest[], signals: AbortSignal[]): Promise<PolicyTurn[]> {
    for (let hold = this.held(); hold; hold = this.held()) await hold;
    const started = performance.now();
    const answers: PolicyTurn[] = new Array(requests.length);
    const maxPositions = this.model().config.maxPositions;
    // One generate() per distinct sampling setting and room left in the context; usually the whole batch
    // shares one. A batch generates at most as many tokens as its longest prompt leaves room for, so a
    // conversation near the model's last position gets a batch of its own: batched or not, every request
    // may sample up to min(max_new_tokens, the room its own context leaves).
    const bySetting = new Map<string, number[]>();
    requests.forEach((r, i) => {
      const room = Math.min(r.sampling.max_new_tokens, maxPositions - r.tokens.length);
      if (room <= 0) {
        // The context is full: nothing more can be said (the episode ends as out of tokens).
        answers[i] = { text: '', tokens: [], logprobs: [], finish_reason: 'length' };
        return;
      }
      const key = JSON.stringify({ ...r.sampling, max_new_tokens: room });
      bySetting.set(key, [...(bySetting.get(key) ?? []), i]);
    });
    const stops = [...this.tokenizer.stopIds];
    const byLength = [...bySetting.values()].flatMap((indices) =>
      lengthBuckets(indices, (i) => requests[i].tokens.length),
    );
    for (const indices of byLength) {
      const sampling = requests[indices[0]].sampling;
      const room = Math.min(sampling.max_new_tokens, ...indices.map((i) => maxPositions - requests[i].tokens.length));
      const abandoned = whenAllAbandoned(indices.map((i) => signals[i]));
      let out: Awaited<ReturnType<typeof generate>>;
      try {
        if (abandoned.signal.aborted) throw abandonedError(abandoned.signal);
        out = await this.sample(
          indices.map((i) => requests[i]),
          room,
          stops,
          abandoned.signal,
        );
      } catch (error) {
        if (!abandoned.signal.aborted) throw error;
        // Nobody waits for these rows any more (their requests were rejected when given up): nothing to answer.
        for (const i of indices) answers[i] = { text: '', tokens: [], logprobs: [], finish_reason: 'length' };
        continue;
      } finally {
        abandoned.release();
      }
      indices.forEach((requestIndex, row) => {
        const tokens = out.tokens[row];
        const stopped = out.finishReasons[row] === 'stop';
        answers[requestIndex] = {
          text: this.tokenizer.decode(stopped ? tokens.slice(0, -1) : tokens),
          tokens,
          logprobs: out.logprobs[row],
          finish_reason: stopped ? 'stop' : 'length',
        };
        this.stats.generatedTokens += tokens.length;
      });
    }
    this.stats.batches++;
    this.stats.requests += requests.length;
    this.stats.seconds += (performance.now() - started) / 1000;
    return answers;
  }

  /** One generate() for requests of one sampling setting, each after its episode's turn cache (if kept), which it replaces. */
  private async sample(requests: GenerationRequest[], room: number, stops: number[], signal: AbortSignal) {
    const model = this.model();
    const sampling = requests[0].sampling;
    const store = this.turnCaches;
    const past: (TurnCache | null)[] = requests.map(
      (r) => store?.lookup(r.episode, r.tokens, model, model.loraEnabled) ?? null,
    );
    const out = await generate(
      model,
      requests.map((r) => r.tokens),
      {
        maxNewTokens: room,
        temperature: sampling.temperature,
        topK: sampling.top_k,
        topP: sampling.top_p,
        stopTokens: stops,
        seed: 0,
        rowSeeds: requests.map((r) => deriveSeed(r.seed, 0)),
        padId: this.tokenizer.padId,
        signal,
        past,
        keepCaches: store !== null && requests.some((r) => r.episode !== undefined),
      },
    );
    out.caches?.forEach((cache, row) => store!.put(requests[row].episode, cache, model, model.loraEnabled));
    return out;
  }
}

/** Padded positions a bucket may hold per real one: a prompt joins a bucket while padding stays within this. */
const PADDING_ALLOWANCE = 1.25;

/**
 * `indices` split into buckets of similar prompt length (shortest first): every row of a forward pass is
 * as long as its longest, so one 400-token conversation in a batch of 100-token first turns would make
 * every row pay for 400 positions at every step. Batching does not change a row's tokens (sampling.ts), so
 * neither does the split.
 */
export function lengthBuckets(indices: number[], lengthOf: (i: number) => number): number[][] {
  const sorted = [...indices].sort((a, b) => lengthOf(a) - lengthOf(b));
  const buckets: number[][] = [];
  let real = 0;
  for (const i of sorted) {
    const bucket = buckets.at(-1);
    const length = lengthOf(i);
    if (bucket && (bucket.length + 1) * length <= PADDING_ALLOWANCE * (real + length)) {
      bucket.push(i);
      real += length;
    } else {
      buckets.push([i]);
      real = length;
    }
  }
  return buckets;
}

/**
 * A signal that fires once every one of `signals` has: a forward pass shared by several requests stops
 * only when none of them is wanted any more. `release` drops the listeners (the signals outlive the pass).
 */
function whenAllAbandoned(rowSignals: AbortSignal[]): { signal: AbortSignal; release(): void } {
  const signals = [...new Set(rowSignals)]; // a worker's requests share its signal: one listener on it
  const controller = new AbortController();
  const check = () => {
    if (signals.every((s) => s.aborted)) controller.abort(signals[0].reason);
  };
  check();
  for (const s of signals) s.addEventListener('abort', check);
  return {
    signal: controller.signal,
    release: () => {
      for (const s of signals) s.removeEventListener('abort', check);
    },
  };
}

/** What a rollout worker calls: the engine's `generate`, across a worker boundary, and `release` when an episode ends. */
export interface RemoteGenerator {
  generate(request: GenerationRequest): Promise<PolicyTurn>;
  release(episode: string): void | Promise<void>;
}

/**
 * The generator one pool worker is given (the watchdog's progress signal, in one place): each request
 * opens a wait on the engine for the pool's hang clock, which stands still until the answer is back, and
 * carries the worker's signal, so the engine drops it when the worker is given up.
 */
export function linkedGenerator(
  engine: Pick<GenerationService, 'generate'> & Partial<Pick<GenerationService, 'release'>>,
  link: WorkerLink,
): RemoteGenerator {
  return {
    release: (episode) => engine.release?.(episode),
    async generate(request) {
      const answered = link.waitOnEngine();
      try {
        return await engine.generate(request, link.signal);
      } finally {
        answered();
      }
    },
  };
}

/** The generator of a scripted-expert episode, which samples no tokens: asking it is a bug. */
export const EXPERT_GENERATOR: RemoteGenerator = {
  generate: () => Promise.reject(new Error('The scripted expert samples no tokens.')),
  release: () => {},
};

/** The policy inside a rollout worker: tokens are sampled by the engine, tokenisation happens locally. */
export class EnginePolicy implements Policy {
  constructor(
    readonly id: string,
    readonly tokenizer: TextTokenizer,
    private readonly engine: RemoteGenerator,
  ) {}

  async generate(context: PolicyContext, options: GenerateOptions): Promise<PolicyTurn> {
    const turn = await this.engine.generate({
      tokens: context.tokens,
      sampling: options.sampling,
      seed: options.seed,
      episode: context.episode,
    });
    options.onText?.(turn.text);
    return turn;
  }

  releaseEpisode(episode: string): void {
    // Across a worker boundary this is a message: a lost one leaves the entry to the store's budget.
    void Promise.resolve(this.engine.release(episode)).catch(() => {});
  }
}
