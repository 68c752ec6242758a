/**
 * Vocabulary, tokenizer.json, and training for the shipped judge model, in plain TypeScript: a
 * bag-of-embeddings classifier (mean of token embeddings → ReLU layer → one logit) trained with Adam on
 * binary cross-entropy. The forward pass here is the same computation as the ONNX graph in graph.ts.
 */
import type { JudgeWeights } from './graph.ts';

/** A Hugging Face tokenizer.json: lowercase, split on words and punctuation runs, WordPiece over whole words. */
export function buildTokenizerJson(words: string[]): Record<string, unknown> {
  const special = ['[PAD]', '[UNK]'];
  // Digits as pieces let any number tokenise ("391" → 3 ##9 ##1) instead of becoming [UNK].
  const digits = [...'0123456789'].flatMap((d) => [d, `##${d}`]);
  const all = [...special, ...digits, ...words.filter((w) => !digits.includes(w))];
  const vocab = Object.fromEntries(all.map((w, i) => [w, i]));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

/** Words seen at least `minCount` times, most frequent first (ties alphabetical, for a stable build). */
export function collectVocabulary(texts: string[], minCount: number, maxWords: number): string[] {
  const counts = new Map<string, number>();
  for (const t of texts)
    for (const w of t.toLowerCase().match(/\w+|[^\w\s]+/g) ?? [])
      if (!/^\d+$/.test(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts.entries()]
    .filter(([, c]) => c >= minCount)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, maxWords)
    .map(([w]) => w);
}

export interface TrainOptions {
  vocab: number;
  dim: number;
  hidden: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  random: () => number;
}

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

export function initWeights(o: TrainOptions): JudgeWeights {
  const fill = (n: number, std: number) => Float32Array.from({ length: n }, () => gaussian(o.random) * std);
  return {
    vocab: o.vocab,
    dim: o.dim,
    hidden: o.hidden,
    embed: fill(o.vocab * o.dim, 0.1),
    w1: fill(o.dim * o.hidden, Math.sqrt(2 / o.dim)),
    b1: new Float32Array(o.hidden),
    w2: fill(o.hidden, Math.sqrt(1 / o.hidden)),
    b2: new Float32Array(1),
  };
}

interface Activations {
  pooled: Float64Array; // [D]
  hidden: Float64Array; // [H]
  logit: number;
}

/** The ONNX graph's computation for one sequence (padding already removed). */
export function forward(w: JudgeWeights, ids: number[]): Activations {
  const { dim: D, hidden: H } = w;
  const pooled = new Float64Array(D);
  for (const id of ids) for (let d = 0; d < D; d++) pooled[d] += w.embed[id * D + d];
  const n = Math.max(1, ids.length);
  for (let d = 0; d < D; d++) pooled[d] /= n;
  const hidden = new Float64Array(H);
  let logit = w.b2[0];
  for (let h = 0; h < H; h++) {
    let s = w.b1[h];
    for (let d = 0; d < D; d++) s += pooled[d] * w.w1[d * H + h];
    hidden[h] = Math.max(0, s);
    logit += hidden[h] * w.w2[h];
  }
  return { pooled, hidden, logit };
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** Adam on mean BCE over mini-batches; returns the final epoch's mean training loss. */
export function train(w: JudgeWeights, data: { ids: number[]; label: number }[], o: TrainOptions): number {
  const params = [w.embed, w.w1, w.b1, w.w2, w.b2];
  const m = params.map((p) => new Float64Array(p.length));
  const v = params.map((p) => new Float64Array(p.length));
  const [b1, b2, eps] = [0.9, 0.999, 1e-8];
  let t = 0;
  let epochLoss = 0;
  const order = data.map((_, i) => i);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(o.random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    epochLoss = 0;
    for (let start = 0; start < order.length; start += o.batchSize) {
      const batch = order.slice(start, start + o.batchSize);
      const grads = params.map((p) => new Float64Array(p.length));
      const [gE, gW1, gB1, gW2, gB2] = grads;
      const { dim: D, hidden: H } = w;
      for (const idx of batch) {
        const { ids, label } = data[idx];
        const a = forward(w, ids);
        const p = sigmoid(a.logit);
        epochLoss -= label * Math.log(p + 1e-12) + (1 - label) * Math.log(1 - p + 1e-12);
        const dz = (p - label) / batch.length;
        gB2[0] += dz;
        const dPooled = new Float64Array(D);
        for (let h = 0; h < H; h++) {
          gW2[h] += a.hidden[h] * dz;
          if (a.hidden[h] <= 0) continue;
          const dh = w.w2[h] * dz;
          gB1[h] += dh;
          for (let d = 0; d < D; d++) {
            gW1[d * H + h] += a.pooled[d] * dh;
            dPooled[d] += w.w1[d * H + h] * dh;
          }
        }
        const n = Math.max(1, ids.length);
        for (const id of ids) for (let d = 0; d < D; d++) gE[id * D + d] += dPooled[d] / n;
      }
      t++;
      const lr = o.learningRate;
      params.forEach((param, k) => {
        const g = grads[k];
        for (let i = 0; i < param.length; i++) {
          if (g[i] === 0 && k === 0) continue; // untouched embedding rows keep their moments (sparse Adam)
          m[k][i] = b1 * m[k][i] + (1 - b1) * g[i];
          v[k][i] = b2 * v[k][i] + (1 - b2) * g[i] * g[i];
          const mh = m[k][i] / (1 - b1 ** t);
          const vh = v[k][i] / (1 - b2 ** t);
          param[i] -= (lr * mh) / (Math.sqrt(vh) + eps);
        }
      });
    }
    epochLoss /= data.length;
  }
  return epochLoss;
}

export function predict(w: JudgeWeights, ids: number[]): number {
  return sigmoid(forward(w, ids).logit);
}
