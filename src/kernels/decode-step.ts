/**
 * One decoding step of the whole model as a single kernel (fused.ts's DECODE_STEP_KERNEL): what the
 * transformer passes (model/transformer.ts's decodeStep) and what a backend's implementation reads
 * (wasm-decode.ts). A step of the graph runs about 170 tfjs ops on a few hundred numbers each, and at
 * batch 1 the engine's ≈ 15 µs per op was half the step; as one kernel the step is its weight reads.
 *
 * Inputs, by name:
 *   ids [B, 1] int32 · embed [V, C] · ropeCos, ropeSin [P, D] (the whole tables) · norm [C] · head [C, V]
 *   per layer i, under `layers.i.`: inputNorm, postNorm [C]; qNorm, kNorm [D] (Qwen3 only);
 *   cacheK, cacheV [B, Hkv, capacity, D] (the first `past` positions are the cache); per projection m
 *   (TARGET_MODULES): m.weight [in, out], m.bias [out] when it has one, m.loraA [in, r] and m.loraB
 *   [r, out] when its adapter applies.
 * Outputs: logits [B, 1, V], then every layer's extended keys [B, Hkv, capacity', D] (the first past + 1
 * positions are the cache), then values. An output may share its input's buffer, this step's position
 * written in place where the capacity had room: what positions < past hold never changes, so a cache
 * stays valid after a step extends it.
 */
export interface DecodeStepAttrs {
  /** Positions already cached. */
  past: number;
  /** Positions a cache grown by this step makes room for, at least (KVCache's reserve; 0: the kernel's own headroom). */
  reserve: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  eps: number;
  /** alpha / r of the adapters, and r (both ignored where no lora inputs are given). */
  loraScale: number;
  loraRank: number;
  /** Each row's position (indexes the rope tables). */
  positions: number[];
  /** Per row, whether each of its Tpast + 1 keys is valid (false on left padding); null when all are. */
  keyValid: boolean[][] | null;
}

/** What attention adds to the score of a key a query may not see (causal future, padding). */
export const ATTENTION_MASKED = -1e9;

const names: Map<string, string>[] = [];

/**
 * The input name of a layer's part, e.g. decodeInput(3, 'q_proj.loraA'). Made once per layer and part:
 * a step looks up hundreds, and a string built anew is hashed anew at every lookup.
 */
export function decodeInput(layer: number, part: string): string {
  const byPart = (names[layer] ??= new Map());
  let name = byPart.get(part);
  if (name === undefined) byPart.set(part, (name = `layers.${layer}.${part}`));
  return name;
}

/** A projection's four part names ('q_proj.weight', …), made once per module. */
export interface ProjectionParts {
  weight: string;
  bias: string;
  loraA: string;
  loraB: string;
}
const projectionParts = new Map<string, ProjectionParts>();

export function partsOf(module: string): ProjectionParts {
  let parts = projectionParts.get(module);
  if (!parts)
    projectionParts.set(
      module,
      (parts = {
        weight: `${module}.weight`,
        bias: `${module}.bias`,
        loraA: `${module}.loraA`,
        loraB: `${module}.loraB`,
      }),
    );
  return parts;
}
