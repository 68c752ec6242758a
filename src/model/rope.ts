/**
 * Rotary position embedding settings from an HF config, in both spellings:
 *   transformers 4: `rope_theta` + `rope_scaling: {rope_type | type, factor, …}`
 *   transformers 5: `rope_parameters: {rope_type, rope_theta, factor, …}`
 * and the inverse frequencies they give (HF `ROPE_INIT_FUNCTIONS`: default, linear, llama3). Any other
 * rope type, or a field this module does not read, is refused by name: a wrong RoPE loads and runs but
 * every logit is off.
 */

export type RopeScaling =
  | { type: 'linear'; factor: number }
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositions: number };

export interface RopeSettings {
  theta: number;
  scaling: RopeScaling | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields each rope type may carry; anything else changes the result in transformers, so it is refused. */
const KNOWN: Record<string, string[]> = {
  default: ['rope_type', 'type', 'rope_theta'],
  linear: ['rope_type', 'type', 'rope_theta', 'factor'],
  llama3: [
    'rope_type',
    'type',
    'rope_theta',
    'factor',
    'low_freq_factor',
    'high_freq_factor',
    'original_max_position_embeddings',
  ],
};

export function readRope(json: Record<string, unknown>): RopeSettings {
  const params = json.rope_parameters;
  const scaling = json.rope_scaling;
  if (params != null && !isRecord(params))
    throw new Error(
      `config.json: rope_parameters ${JSON.stringify(params)} must be an object like {"rope_type": "default", "rope_theta": 10000}.`,
    );
  if (scaling != null && !isRecord(scaling))
    throw new Error(`config.json: rope_scaling ${JSON.stringify(scaling)} must be null or an object with "rope_type".`);
  if (isRecord(params) && Object.values(params).every(isRecord)) {
    throw new Error(
      `config.json: per-layer-type rope_parameters (${Object.keys(params).join(', ')}) are not supported; expected one {"rope_type", "rope_theta", …} object.`,
    );
  }
  // transformers 5 writes everything into rope_parameters; an older file may still carry rope_scaling beside it.
  const merged: Record<string, unknown> = { ...(scaling ?? {}), ...(params ?? {}) };
  const theta = merged.rope_theta ?? json.rope_theta ?? 10000;
  if (typeof theta !== 'number' || !(theta > 0))
    throw new Error(`config.json: rope_theta ${JSON.stringify(theta)} must be a positive number.`);
  const ropeType = merged.rope_type ?? merged.type ?? 'default';
  const field = params != null ? 'rope_parameters' : 'rope_scaling';
  if (typeof ropeType !== 'string' || !Object.hasOwn(KNOWN, ropeType)) {
    throw new Error(
      `config.json: ${field} rope_type ${JSON.stringify(ropeType)} is not supported; expected one of ${Object.keys(KNOWN).join(', ')}.`,
    );
  }
  const unknown = Object.keys(merged).filter((k) => !KNOWN[ropeType].includes(k) && merged[k] != null);
  if (unknown.length > 0)
    throw new Error(
      `config.json: ${field} field(s) ${unknown.join(', ')} are not supported for rope_type "${ropeType}".`,
    );
  const num = (name: string): number => {
    const v = merged[name];
    if (typeof v !== 'number' || !(v > 0))
      throw new Error(
        `config.json: ${field} "${name}" must be a positive number for rope_type "${ropeType}" (got ${JSON.stringify(v)}).`,
      );
    return v;
  };
  if (ropeType === 'default') return { theta, scaling: null };
  if (ropeType === 'linear') return { theta, scaling: { type: 'linear', factor: num('factor') } };
  const lowFreqFactor = num('low_freq_factor');
  const highFreqFactor = num('high_freq_factor');
  if (highFreqFactor <= lowFreqFactor)
    throw new Error(
      `config.json: ${field} high_freq_factor (${highFreqFactor}) must be above low_freq_factor (${lowFreqFactor}).`,
    );
  return {
    theta,
    scaling: {
      type: 'llama3',
      factor: num('factor'),
      lowFreqFactor,
      highFreqFactor,
      originalMaxPositions: num('original_max_position_embeddings'),
    },
  };
}

/** The transformers-4 `rope_scaling` object (transformers 5 reads it too), or null for plain RoPE. */
export function ropeScalingJson(scaling: RopeScaling | undefined): Record<string, unknown> | null {
  if (!scaling) return null;
  if (scaling.type === 'linear') return { rope_type: 'linear', factor: scaling.factor };
  return {
    rope_type: 'llama3',
    factor: scaling.factor,
    low_freq_factor: scaling.lowFreqFactor,
    high_freq_factor: scaling.highFreqFactor,
    original_max_position_embeddings: scaling.originalMaxPositions,
  };
}

/** The D/2 inverse frequencies θ^(-2i/D), scaled as HF's rope init functions do. Float64, like the reference. */
export function ropeInverseFrequencies(
  headDim: number,
  theta: number,
  scaling: RopeScaling | null = null,
): Float64Array {
  const half = headDim / 2;
  const inv = new Float64Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / Math.pow(theta, (2 * i) / headDim);
  if (!scaling) return inv;
  if (scaling.type === 'linear') return inv.map((f) => f / scaling.factor);
  // llama3: long wavelengths slowed by `factor`, short ones kept, the band between blended smoothly.
  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositions } = scaling;
  const lowFreqWavelen = originalMaxPositions / lowFreqFactor;
  const highFreqWavelen = originalMaxPositions / highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highFreqWavelen) return f;
    if (wavelen > lowFreqWavelen) return f / factor;
    const smooth = (originalMaxPositions / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}
