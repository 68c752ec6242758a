/**
 * Adam / AdamW over a list of tf.Variables, with linear learning-rate warm-up, gradient clipping by
 * global norm and gradient accumulation — written out (not tf.train.adam) so that:
 * - AdamW's decoupled weight decay exists (tfjs has none),
 * - the whole state (step, m, v, pending accumulated gradients) exports as plain Float32Arrays for a
 *   checkpoint, and a resumed run applies bit-identical updates.
 *
 * Update (PyTorch's Adam/AdamW, bias-corrected):
 *   m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
 *   p ← p − lr·(m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + ε)
 *   AdamW first does p ← p·(1 − lr·wd); Adam adds wd·p to g instead (L2).
 * Learning rate: `lr·min(1, (t)/warmup)` for update t = 1, 2, …, then constant.
 * Clipping: when ‖g‖₂ over all variables exceeds `gradClip` (> 0), every gradient is scaled by
 * gradClip/‖g‖. The reported `grad_norm` is the norm before clipping (as TRL logs it).
 * Reads from the device are async (`data()`, never `dataSync()`, which breaks later reads on
 * tfjs-webgpu in Chromium).
 * Accumulation: `accumulate(grads)` adds micro-batch gradients (the caller scales each, usually by
 * 1/accumSteps through the loss normalisation); `step()` applies their sum and clears it.
 */
import * as tf from '@tensorflow/tfjs';
import { adamUpdate, type AdamHyper } from './adam-update.ts';
import { sumOfSquares } from '../model/ops.ts';

export interface OptimizerConfig {
  kind: 'adam' | 'adamw';
  learningRate: number;
  warmupSteps: number;
  weightDecay: number;
  /** Max global gradient norm; 0 or less turns clipping off. */
  gradClip: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
}

/** Plain-data optimizer state for checkpoints: one entry per variable, in the order given. */
export interface OptimizerState {
  step: number;
  m: Float32Array[];
  v: Float32Array[];
  /** Gradients accumulated since the last `step()`, or null when none. */
  pending: Float32Array[] | null;
  pendingCount: number;
}

export interface StepInfo {
  /** Global gradient norm before clipping. */
  gradNorm: number;
  lr: number;
  step: number;
}

export class Optimizer {
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];
  private pending: tf.Tensor[] | null = null;
  private pendingCount = 0;
  private t = 0;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly epsilon: number;

  constructor(
    readonly variables: tf.Variable[],
    readonly cfg: OptimizerConfig,
  ) {
    if (variables.length === 0)
      throw new Error('optimizer: no trainable variables (is every layer frozen, or LoRA missing?)');
    if (!(cfg.learningRate > 0))
      throw new Error(`optimizer: learning rate ${cfg.learningRate} must be > 0 (training.learning_rate)`);
    this.beta1 = cfg.beta1 ?? 0.9;
    this.beta2 = cfg.beta2 ?? 0.999;
    this.epsilon = cfg.epsilon ?? 1e-8;
    // Variables outlive tidy; the zeros they start from do not.
    this.m = tf.tidy(() => variables.map((x) => tf.variable(tf.zerosLike(x), false)));
    this.v = tf.tidy(() => variables.map((x) => tf.variable(tf.zerosLike(x), false)));
  }

  /** Learning rate of update number `t` (1-based). */
  learningRate(t: number): number {
    const w = this.cfg.warmupSteps;
    return w > 0 ? this.cfg.learningRate * Math.min(1, t / w) : this.cfg.learningRate;
  }

  get stepCount(): number {
    return this.t;
  }

  /** Adds gradients (same order as `variables`); they are copied, the caller may dispose its own. */
  accumulate(grads: tf.Tensor[]): void {
    if (grads.length !== this.variables.length)
      throw new Error(`optimizer: ${grads.length} gradients for ${this.variables.length} variables`);
    const prev = this.pending;
    this.pending = tf.tidy(() => grads.map((g, i) => (prev ? tf.add(prev[i], g) : tf.clone(g))));
    if (prev) tf.dispose(prev);
    this.pendingCount++;
  }

  get accumulated(): number {
    return this.pendingCount;
  }

  /** Applies the accumulated gradients (clip → Adam/AdamW) and clears them. */
  async step(): Promise<StepInfo> {
    if (!this.pending) throw new Error('optimizer: step() without accumulated gradients; call accumulate(grads) first');
    const grads = this.pending;
    this.t++;
    const lr = this.learningRate(this.t);
    const normT = tf.tidy(() => tf.sqrt(sumOfSquares(grads))); // []
    const gradNorm = (await normT.data())[0];
    normT.dispose();
    const scale = this.cfg.gradClip > 0 && gradNorm > this.cfg.gradClip ? this.cfg.gradClip / gradNorm : 1;
    const { beta1: b1, beta2: b2, epsilon: eps } = this;
    const bc1 = 1 - b1 ** this.t;
    const bc2 = 1 - b2 ** this.t;
    const hyper: AdamHyper = {
      kind: this.cfg.kind,
      lr,
      b1,
      b2,
      eps,
      bc1,
      bc2,
      wd: this.cfg.weightDecay,
      gradScale: scale,
    };
    tf.tidy(() => {
      this.variables.forEach((p, i) => {
        const next = adamUpdate(p, grads[i], this.m[i], this.v[i], hyper);
        this.m[i].assign(next.m);
        this.v[i].assign(next.v);
        p.assign(next.p);
      });
    });
    tf.dispose(grads);
    this.pending = null;
    this.pendingCount = 0;
    return { gradNorm, lr, step: this.t };
  }

  /** Drops accumulated gradients without applying them. */
  discardPending(): void {
    if (this.pending) tf.dispose(this.pending);
    this.pending = null;
    this.pendingCount = 0;
  }

  async exportState(): Promise<OptimizerState> {
    const read = (xs: tf.Tensor[]) => Promise.all(xs.map(async (x) => new Float32Array(await x.data())));
    return {
      step: this.t,
      m: await read(this.m),
      v: await read(this.v),
      pending: this.pending ? await read(this.pending) : null,
      pendingCount: this.pendingCount,
    };
  }

  importState(state: OptimizerState): void {
    const n = this.variables.length;
    if (state.m.length !== n || state.v.length !== n) {
      throw new Error(
        `optimizer: checkpoint holds state for ${state.m.length} variables, this model trains ${n}; the LoRA/freeze settings must match the checkpoint`,
      );
    }
    state.m.forEach((a, i) => {
      if (a.length !== this.variables[i].size)
        throw new Error(`optimizer: state ${i} has ${a.length} values, variable has ${this.variables[i].size}`);
    });
    tf.tidy(() => {
      this.m.forEach((x, i) => x.assign(tf.tensor(state.m[i], x.shape)));
      this.v.forEach((x, i) => x.assign(tf.tensor(state.v[i], x.shape)));
    });
    this.discardPending();
    if (state.pending) this.pending = state.pending.map((a, i) => tf.tensor(a, this.variables[i].shape));
    this.pendingCount = state.pending ? state.pendingCount : 0;
    this.t = state.step;
  }

  dispose(): void {
    this.discardPending();
    tf.dispose([...this.m, ...this.v]);
  }
}
