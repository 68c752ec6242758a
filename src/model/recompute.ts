/**
 * Gradient checkpointing (Chen et al. 2016, "Training deep nets with sublinear memory cost"), one
 * transformer block at a time: the training forward pass keeps only each block's input; the backward
 * pass runs the block's forward again from that input and differentiates it on the spot.
 *
 * Why: tfjs's autodiff keeps every op's inputs and outputs its gradient reads until the whole backward
 * pass ends, about 35 floats per layer, token and unit of width (memory.ts) — on wasm's 4 GiB heap a
 * SmolLM2-135M LoRA step did not fit at 256 tokens. With recomputation the forward pass keeps one
 * [B, T, C] tensor per block and the backward pass one block's activations at a time, for the cost of
 * a second forward pass through the blocks (bench/memory.bench.ts measures it).
 *
 * How: `tf.customGrad` runs its forward function with the tape off (engine.runKernelFunc raises
 * kernelDepth) inside a tidy, so the block's intermediates are freed as soon as its output exists.
 * Its gradient function recomputes the block under `engine.gradients` with respect to the block input
 * and the block's trainable variables, which are passed as the custom op's inputs so the outer tape
 * routes their gradients through it. The result equals the plain backward pass up to float rounding
 * (the same ops on the same values; LoRA dropout masks are seeded, so they are drawn again alike).
 */
import * as tf from '@tensorflow/tfjs';

/** The engine's tape state that a nested `gradients` call clobbers (tfjs-core engine.ts). */
interface EngineTapeState {
  state: { activeTape: unknown[] | null; gradientDepth: number };
}

/**
 * `engine.gradients` called from inside a backward pass (gradientDepth 0 there) starts a fresh tape
 * and, when done, sets the engine's active tape to null; the outer backward pass then fails when it
 * frees its own tape's saved tensors. Keep the outer tape aside and put it back.
 */
function nestedGradients(f: () => tf.Tensor, xs: tf.Tensor[], dy: tf.Tensor): tf.Tensor[] {
  const engine = tf.engine() as unknown as EngineTapeState;
  const outer = engine.state.activeTape;
  try {
    const { value, grads } = (
      engine as unknown as {
        gradients: (
          f: () => tf.Tensor,
          xs: tf.Tensor[],
          dy: tf.Tensor,
          allowNoGradients: boolean,
        ) => { value: tf.Tensor; grads: (tf.Tensor | undefined)[] };
      }
    ).gradients(f, xs, dy, true);
    value.dispose();
    // An input the block does not reach (none in practice) gets a zero gradient rather than none.
    return grads.map((g, k) => g ?? tf.zerosLike(xs[k]));
  } finally {
    engine.state.activeTape = outer;
  }
}

/**
 * `fn(inputs, aux)` with its activations recomputed in the backward pass: only `inputs` and `aux` are kept.
 * `aux` are tensors it reads but does not differentiate (RoPE tables, the attention mask): they are made
 * per forward pass, so they are saved with the inputs for the recomputation. `params` are the trainable
 * variables it reads. Several inputs make one op of what would otherwise share its gradient across two
 * (a shared prefix's block and the block of the rows that read its keys and values: transformer.ts), so
 * each tensor's gradient is summed in the order the plain backward pass sums it.
 */
export function recomputed(
  fn: (inputs: tf.Tensor[], aux: (tf.Tensor | null)[]) => tf.Tensor,
  inputs: tf.Tensor[],
  aux: (tf.Tensor | null)[],
  params: tf.Variable[],
): tf.Tensor {
  const present = aux.filter((t): t is tf.Tensor => t !== null);
  const unpack = (saved: tf.Tensor[]) => {
    let k = 0;
    return aux.map((t) => (t === null ? null : saved[k++]));
  };
  const n = inputs.length;
  const op = tf.customGrad(((...args: unknown[]) => {
    const save = args.pop() as tf.GradSaveFunc;
    const given = args.slice(0, n) as tf.Tensor[];
    save([...given, ...present]);
    return {
      value: fn(given, aux),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const savedInputs = saved.slice(0, n);
        return nestedGradients(() => fn(savedInputs, unpack(saved.slice(n))), [...savedInputs, ...params], dy);
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(...inputs, ...params);
}

/** `block(x, aux)`, one transformer block, with its activations recomputed in the backward pass (see `recomputed`). */
export function recomputedBlock(
  block: (x: tf.Tensor3D, aux: (tf.Tensor | null)[]) => tf.Tensor3D,
  x: tf.Tensor3D,
  aux: (tf.Tensor | null)[],
  params: tf.Variable[],
): tf.Tensor3D {
  return recomputed(([input], saved) => block(input as tf.Tensor3D, saved), [x], aux, params) as tf.Tensor3D;
}
