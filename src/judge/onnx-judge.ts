/**
 * In-browser judge: an ONNX sequence-classification reward model run with onnxruntime-web (wasm EP),
 * with its tokenizer read from `tokenizer.json` by @huggingface/tokenizers. Works the same in the browser
 * and in Node; nothing here touches `node:` modules (the Node file loader is `onnx-node.ts`).
 *
 * Model contract (Hugging Face `AutoModelForSequenceClassification` export with one label):
 *   inputs `input_ids`, `attention_mask` (int64 [batch, seq]) → output `logits` (float [batch, 1]);
 *   reward = sigmoid(logit). A two-label model uses softmax and takes the last label as "good".
 * `judge_config.json` beside the model says how to render and cut the trajectory text.
 */
import * as ort from 'onnxruntime-web/wasm';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Task, Trajectory } from '../contracts.ts';
import { renderTrajectory, type RenderOptions } from './render.ts';
import { errorMessage, noScore, type Judge, type JudgeResult } from './types.ts';

export interface JudgeModelConfig {
  /** Tokens fed to the model; longer inputs keep their head and tail. */
  max_length: number;
  /** Of `max_length`, how many tokens come from the start (the rest from the end, where the answer is). */
  head_tokens: number;
  /** Rendering budget for the trajectory text. */
  render: RenderOptions;
  /** Id used for padding (ignored through attention_mask). */
  pad_id: number;
}

export const DEFAULT_JUDGE_MODEL_CONFIG: JudgeModelConfig = {
  max_length: 256,
  head_tokens: 64,
  render: { maxChars: 3_000, maxFieldChars: 300, maxAnswerChars: 600 },
  pad_id: 0,
};

export interface JudgeModelAssets {
  /** The `.onnx` file's bytes. */
  model: Uint8Array;
  /** Parsed `tokenizer.json`. */
  tokenizer: Record<string, unknown>;
  /** Parsed `tokenizer_config.json`, if the model has one. */
  tokenizerConfig?: Record<string, unknown>;
  config?: Partial<JudgeModelConfig>;
}

export interface OrtOptions {
  /**
   * Browser: where the ORT wasm binary is served (`{ wasm: url }` from `ort-wasm-url.ts`, emitted by Vite),
   * so nothing is fetched from a CDN. Node finds it in node_modules on its own.
   */
  wasmPaths?: string | { wasm?: string; mjs?: string };
  /** wasm threads; 1 keeps results bit-identical across machines and needs no cross-origin isolation. */
  numThreads?: number;
}

/** Sets onnxruntime-web's global wasm options; call before the first session (later calls are ignored by ORT). */
function configureOrt(options: OrtOptions = {}): void {
  ort.env.wasm.numThreads = options.numThreads ?? 1;
  if (options.wasmPaths) ort.env.wasm.wasmPaths = options.wasmPaths;
}

/** Token ids for the model: the tokenizer's ids, cut to head + tail when longer than `max_length`. */
export function encodeForJudge(tokenizer: Tokenizer, text: string, config: JudgeModelConfig): number[] {
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
  if (ids.length <= config.max_length) return ids;
  const tail = config.max_length - config.head_tokens;
  return [...ids.slice(0, config.head_tokens), ...ids.slice(ids.length - tail)];
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

export interface OnnxJudgeOptions {
  id?: string;
  ort?: OrtOptions;
}

export class OnnxJudge implements Judge {
  readonly id: string;
  readonly config: JudgeModelConfig;
  private readonly session: ort.InferenceSession;
  private readonly tokenizer: Tokenizer;
  /** ORT sessions run one inference at a time; calls queue here. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(id: string, session: ort.InferenceSession, tokenizer: Tokenizer, config: JudgeModelConfig) {
    this.id = id;
    this.session = session;
    this.tokenizer = tokenizer;
    this.config = config;
  }

  static async create(assets: JudgeModelAssets, options: OnnxJudgeOptions = {}): Promise<OnnxJudge> {
    configureOrt(options.ort);
    const config = { ...DEFAULT_JUDGE_MODEL_CONFIG, ...assets.config };
    const tokenizer = new Tokenizer(assets.tokenizer, assets.tokenizerConfig ?? {});
    const session = await ort.InferenceSession.create(assets.model, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
    });
    for (const name of ['input_ids', 'attention_mask']) {
      if (!session.inputNames.includes(name)) {
        throw new Error(
          `Judge model has no "${name}" input (inputs: ${session.inputNames.join(', ')}); export it as a sequence-classification model.`,
        );
      }
    }
    if (!session.outputNames.includes('logits'))
      throw new Error(`Judge model has no "logits" output (outputs: ${session.outputNames.join(', ')}).`);
    return new OnnxJudge(options.id ?? 'model', session, tokenizer, config);
  }

  /** The text the model reads for a trajectory. */
  renderInput(trajectory: Trajectory, task?: Task): string {
    return `Task: ${task?.prompt ?? trajectory.task_description}\n${renderTrajectory(trajectory, this.config.render)}`;
  }

  async score(trajectory: Trajectory, task: Task): Promise<JudgeResult> {
    try {
      const [p] = await this.scoreTexts([this.renderInput(trajectory, task)]);
      if (!Number.isFinite(p)) return noScore(`judge model ${this.id} produced a non-finite score (${p})`);
      return { score: p, rationale: `reward model ${this.id}: p(good) = ${p.toFixed(4)}` };
    } catch (err) {
      return noScore(`judge model ${this.id} failed: ${errorMessage(err)}`);
    }
  }

  /** Scores raw texts in one batch (padded to the longest): probability of "good" for each. */
  scoreTexts(texts: string[]): Promise<number[]> {
    const run = this.queue.then(() => this.runBatch(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runBatch(texts: string[]): Promise<number[]> {
    const encoded = texts.map((t) => encodeForJudge(this.tokenizer, t, this.config));
    const width = Math.max(1, ...encoded.map((e) => e.length));
    const ids = new BigInt64Array(texts.length * width).fill(BigInt(this.config.pad_id)); // [B, T]
    const mask = new BigInt64Array(texts.length * width); // [B, T]
    encoded.forEach((row, b) =>
      row.forEach((id, t) => {
        ids[b * width + t] = BigInt(id);
        mask[b * width + t] = 1n;
      }),
    );
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, [texts.length, width]),
      attention_mask: new ort.Tensor('int64', mask, [texts.length, width]),
    };
    const out = await this.session.run(feeds);
    const logits = out.logits;
    const data = logits.data as Float32Array; // [B, L]
    const labels = logits.dims[1] ?? 1;
    const scores = texts.map((_, b) => {
      if (labels === 1) return sigmoid(data[b]);
      const row = Array.from(data.subarray(b * labels, (b + 1) * labels));
      const max = Math.max(...row);
      const exps = row.map((v) => Math.exp(v - max));
      return exps[labels - 1] / exps.reduce((a, c) => a + c, 0);
    });
    for (const t of Object.values(out)) t.dispose();
    return scores;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

/** Reads bytes from a File/Blob, an ArrayBuffer, or bytes. */
async function toBytes(source: Uint8Array | ArrayBuffer | Blob): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  return new Uint8Array(await source.arrayBuffer());
}

async function toJson(source: string | Record<string, unknown> | Blob): Promise<Record<string, unknown>> {
  if (typeof source === 'string') return JSON.parse(source) as Record<string, unknown>;
  if (source instanceof Blob) return JSON.parse(await source.text()) as Record<string, unknown>;
  return source;
}

/** Assets from files the user picked (or bytes already in memory). */
export async function judgeAssetsFromFiles(files: {
  model: Uint8Array | ArrayBuffer | Blob;
  tokenizer: string | Record<string, unknown> | Blob;
  config?: string | Record<string, unknown> | Blob;
}): Promise<JudgeModelAssets> {
  return {
    model: await toBytes(files.model),
    tokenizer: await toJson(files.tokenizer),
    config: files.config ? ((await toJson(files.config)) as Partial<JudgeModelConfig>) : undefined,
  };
}

/** File names inside a judge model folder (the shipped `models/judge/` and any URL laid out the same way). */
export const JUDGE_MODEL_FILES = {
  model: 'model.onnx',
  tokenizer: 'tokenizer.json',
  config: 'judge_config.json',
} as const;

/** Assets from a folder URL holding `model.onnx`, `tokenizer.json` and optionally `judge_config.json`. */
export async function judgeAssetsFromUrl(
  baseUrl: string,
  fetchFn: typeof fetch = (i, init) => globalThis.fetch(i, init),
): Promise<JudgeModelAssets> {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const get = async (name: string, required: boolean): Promise<Response | null> => {
    const r = await fetchFn(new URL(name, base).href);
    if (r.ok) return r;
    if (required)
      throw new Error(
        `Judge model: GET ${new URL(name, base).href} failed with HTTP ${r.status}; the folder needs ${JUDGE_MODEL_FILES.model} and ${JUDGE_MODEL_FILES.tokenizer}.`,
      );
    return null;
  };
  const [model, tokenizer, config] = await Promise.all([
    get(JUDGE_MODEL_FILES.model, true),
    get(JUDGE_MODEL_FILES.tokenizer, true),
    get(JUDGE_MODEL_FILES.config, false),
  ]);
  return {
    model: new Uint8Array(await (model as Response).arrayBuffer()),
    tokenizer: (await (tokenizer as Response).json()) as Record<string, unknown>,
    config: config ? ((await config.json()) as Partial<JudgeModelConfig>) : undefined,
  };
}
