/**
 * The trained LoRA adapter as a PEFT adapter (what `PeftModel.from_pretrained` loads), zipped:
 *
 *   adapter_config.json        peft_type LORA, task_type CAUSAL_LM, r, lora_alpha, target_modules, …
 *   adapter_model.safetensors  base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight,
 *                              lora_A [r, in], lora_B [out, r], F32, metadata {"format": "pt"}
 *   README.md                  model card: base model, the run config as YAML, evaluation results
 *
 * plus merged full weights in Hugging Face layout (config.json + model.safetensors), and reading an
 * adapter back with every check done before anything is applied: names, ranks, shapes against the
 * base model's config, and the base model's name.
 */
import { strFromU8, strToU8, zipSync } from 'fflate';
import { stringify as toYaml } from 'yaml';
import type { RunConfig } from '../config/schema.ts';
import type { EnvironmentSource } from '../contracts.ts';
import { describeSource } from '../envs/sources.ts';
import type { ModelConfig } from '../model/config.ts';
import type { HostTensors, TransformerModel } from '../model/transformer.ts';
import { transformersBase } from '../hub/hub.ts';
import { assertFiniteTensors, readSafetensors, writeSafetensors } from '../hub/safetensors.ts';
import { ImportError } from './import-error.ts';
import { unzipSelected } from './zip.ts';

export const ADAPTER_CONFIG = 'adapter_config.json';
export const ADAPTER_WEIGHTS = 'adapter_model.safetensors';
/** What an imported adapter zip may inflate to, per file: a zip bomb costs at most this. */
const ADAPTER_ZIP_LIMITS = { [ADAPTER_CONFIG]: 1 << 20, 'README.md': 1 << 20, [ADAPTER_WEIGHTS]: 512 << 20 };
const KEY =
  /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.lora_(A|B)\.weight$/;
const PARENT: Record<string, string> = {
  q_proj: 'self_attn',
  k_proj: 'self_attn',
  v_proj: 'self_attn',
  o_proj: 'self_attn',
  gate_proj: 'mlp',
  up_proj: 'mlp',
  down_proj: 'mlp',
};

export interface PeftConfig {
  peft_type: 'LORA';
  task_type: 'CAUSAL_LM';
  base_model_name_or_path: string;
  r: number;
  lora_alpha: number;
  lora_dropout: number;
  target_modules: string[];
  bias: 'none';
  [key: string]: unknown;
}

/** What adapter_config.json describes: the adapters' shape and the base they belong to. */
export interface PeftShape {
  /** As a run config names it (hub/hub.ts `transformersBase` turns it into what transformers loads). */
  baseModel: string;
  r: number;
  alpha: number;
  dropout: number;
  targetModules: readonly string[];
  /** Layers that carry adapters; null for all of them. */
  layers: readonly number[] | null;
}

/**
 * PEFT's adapter_config.json: the one writer (live adapters, a run's checkpoint, SFT all call it).
 * `inference_mode: true`, as PEFT's save_pretrained writes it for an adapter ready to load and use.
 */
export function peftConfig(
  shape: PeftShape,
): Record<string, unknown> & { r: number; lora_alpha: number; target_modules: string[] } {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    ...transformersBase(shape.baseModel),
    r: shape.r,
    lora_alpha: shape.alpha,
    lora_dropout: shape.dropout,
    target_modules: [...shape.targetModules],
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    use_rslora: false,
    use_dora: false,
    layers_to_transform: shape.layers ? [...shape.layers] : null,
  };
}

/** adapter_config.json for the attached adapters. */
export function peftAdapterConfig(model: TransformerModel, baseModel: string): ReturnType<typeof peftConfig> {
  if (!model.lora) throw new Error('peftAdapterConfig: the model has no LoRA adapters.');
  const { r, alpha, dropout, targetModules, layers } = model.lora;
  return peftConfig({
    baseModel,
    r,
    alpha,
    dropout,
    targetModules,
    layers: layers.length === model.config.numLayers ? null : layers,
  });
}

/** adapter_config.json from the run config (when no live model is at hand); the writer is `peftConfig`. */
export function peftConfigFromRun(run: RunConfig, layersToTransform: number[] | null = null): PeftConfig {
  const { r, alpha, dropout, target_modules } = run.lora;
  return peftConfig({
    baseModel: run.model.base_model,
    r,
    alpha,
    dropout,
    targetModules: target_modules,
    layers: layersToTransform,
  }) as PeftConfig;
}

export interface ModelCardInput {
  config: PeftConfig;
  run?: RunConfig;
  /** e.g. `{ 'arith_tool/success': 0.62 }` or rows of {benchmark, step, results}. */
  evals?: Record<string, number> | { benchmark: string; step: number; results: Record<string, number> }[];
  title?: string;
  /** The user environments the run trained on: listed (with digests) in the card, their sources shipped beside it. */
  environments?: EnvironmentSource[];
}

/** Where a user environment's source goes in the adapter folder, so the run can be reproduced from it. */
function environmentFileName(source: EnvironmentSource): string {
  return `spindle_environments/${source.name}.${source.kind === 'module' ? 'js' : 'jsonl'}`;
}

export function modelCard({ config, run, evals, title, environments }: ModelCardInput): string {
  const front = toYaml({
    base_model: config.base_model_name_or_path,
    library_name: 'peft',
    tags: ['spindle', 'lora', run?.training.method ?? 'grpo'],
  }).trimEnd();
  const lines = [
    '---',
    front,
    '---',
    '',
    `# ${title ?? run?.name ?? 'Spindle LoRA adapter'}`,
    '',
    `A LoRA adapter (r=${config.r}, alpha=${config.lora_alpha}, modules ${config.target_modules.join(', ')}) for \`${config.base_model_name_or_path}\`, trained in the browser with Spindle.`,
    '',
    '```python',
    'from peft import PeftModel',
    'from transformers import AutoModelForCausalLM',
    `base = AutoModelForCausalLM.from_pretrained("${config.base_model_name_or_path}"${typeof config.revision === 'string' ? `, revision="${config.revision}"` : ''})`,
    'model = PeftModel.from_pretrained(base, "path/to/this/folder")',
    '```',
    '',
  ];
  if (evals) {
    lines.push('## Evaluation', '');
    if (Array.isArray(evals)) {
      lines.push('| benchmark | step | results |', '|---|---|---|');
      for (const e of evals)
        lines.push(
          `| ${e.benchmark} | ${e.step} | ${Object.entries(e.results)
            .map(([k, v]) => `${k}=${+v.toFixed(4)}`)
            .join(', ')} |`,
        );
    } else {
      lines.push('| metric | value |', '|---|---|');
      for (const [k, v] of Object.entries(evals)) lines.push(`| ${k} | ${+v.toFixed(4)} |`);
    }
    lines.push('');
  }
  if (environments?.length) {
    lines.push(
      '## Your environments',
      '',
      'Trained on these environments of your own; their sources are in this folder.',
      '',
      '| name | kind | from | digest | file |',
      '|---|---|---|---|---|',
    );
    for (const e of environments) {
      const d = describeSource(e);
      lines.push(
        `| ${d.name} | ${d.kind} | ${d.file ?? '(typed in the app)'} | ${d.digest} | ${environmentFileName(e)} |`,
      );
    }
    lines.push('');
  }
  if (run) lines.push('## Training config', '', '```yaml', toYaml(run).trimEnd(), '```', '');
  return lines.join('\n');
}

/** The adapter's three files. Tensors are checked against the config first. */
export function adapterFiles(tensors: HostTensors, card: ModelCardInput): Map<string, Uint8Array> {
  checkAdapterTensors(tensors, card.config, 'adapter');
  return new Map([
    [ADAPTER_CONFIG, strToU8(JSON.stringify(card.config, null, 2) + '\n')],
    [ADAPTER_WEIGHTS, writeSafetensors(tensors, { format: 'pt' })],
    ['README.md', strToU8(modelCard(card))],
    ...(card.environments ?? []).map((e): [string, Uint8Array] => [
      environmentFileName(e),
      strToU8(e.kind === 'module' ? e.source : e.rows.map((r) => JSON.stringify(r)).join('\n') + '\n'),
    ]),
  ]);
}

export function zipFiles(files: Map<string, Uint8Array>): Uint8Array {
  return zipSync(Object.fromEntries(files), { level: 6 });
}

/** The PEFT adapter as one zip (folder layout PEFT loads after unzipping). */
export function adapterZip(tensors: HostTensors, card: ModelCardInput): Uint8Array {
  return zipFiles(adapterFiles(tensors, card));
}

/** [out, in] of each LoRA-able module of a model, HF layout. */
export function moduleShape(config: ModelConfig, module: string): [number, number] {
  const q = config.numHeads * config.headDim,
    kv = config.numKvHeads * config.headDim,
    h = config.hiddenSize,
    i = config.intermediateSize;
  const shapes: Record<string, [number, number]> = {
    q_proj: [q, h],
    k_proj: [kv, h],
    v_proj: [kv, h],
    o_proj: [h, q],
    gate_proj: [i, h],
    up_proj: [i, h],
    down_proj: [h, i],
  };
  return shapes[module];
}

/** Throws an ImportError naming the first tensor that does not fit the config (and the base model, when given). */
export function checkAdapterTensors(tensors: HostTensors, config: PeftConfig, file: string, base?: ModelConfig): void {
  const seen = new Set<string>();
  for (const [name, t] of tensors) {
    const m = KEY.exec(name);
    if (!m)
      throw new ImportError(
        file,
        'not a PEFT LoRA key (expected base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight)',
        { tensor: name },
      );
    const [, layerText, parent, module, which] = m;
    const layer = Number(layerText);
    if (PARENT[module] !== parent)
      throw new ImportError(file, `${module} belongs under ${PARENT[module]}, not ${parent}`, { tensor: name });
    if (!config.target_modules.includes(module))
      throw new ImportError(file, `module ${module} is not in target_modules [${config.target_modules.join(', ')}]`, {
        tensor: name,
      });
    if (t.shape.length !== 2) throw new ImportError(file, `shape [${t.shape.join(', ')}] is not 2-D`, { tensor: name });
    if (t.data.length !== t.shape[0] * t.shape[1])
      throw new ImportError(file, `${t.data.length} values for shape [${t.shape.join(', ')}]`, { tensor: name });
    const rank = which === 'A' ? t.shape[0] : t.shape[1];
    if (rank !== config.r)
      throw new ImportError(file, `rank ${rank} in shape [${t.shape.join(', ')}] but the config says r = ${config.r}`, {
        tensor: name,
      });
    if (base) {
      if (layer >= base.numLayers)
        throw new ImportError(file, `layer ${layer} does not exist: the base model has ${base.numLayers} layers`, {
          tensor: name,
        });
      const [out, inp] = moduleShape(base, module);
      const expected = which === 'A' ? [config.r, inp] : [out, config.r];
      if (t.shape[0] !== expected[0] || t.shape[1] !== expected[1]) {
        throw new ImportError(
          file,
          `shape [${t.shape.join(', ')}] does not fit the base model (expected [${expected.join(', ')}]): this adapter was trained for a different base`,
          { tensor: name },
        );
      }
    }
    seen.add(name);
  }
  for (const name of seen) {
    const partner = name.endsWith('lora_A.weight')
      ? name.replace(/lora_A\.weight$/, 'lora_B.weight')
      : name.replace(/lora_B\.weight$/, 'lora_A.weight');
    if (!seen.has(partner)) throw new ImportError(file, `its partner ${partner} is missing`, { tensor: name });
  }
  if (seen.size === 0) throw new ImportError(file, 'the adapter holds no LoRA tensors');
}

function parseConfig(text: string, file: string): PeftConfig {
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new ImportError(file, `${ADAPTER_CONFIG} is not valid JSON (${(e as Error).message})`);
  }
  const field = (name: string, problem: string) =>
    new ImportError(file, problem, { field: `${ADAPTER_CONFIG} ${name}` });
  if (c.peft_type !== 'LORA') throw field('peft_type', `peft_type must be "LORA" (got ${JSON.stringify(c.peft_type)})`);
  if (c.task_type !== undefined && c.task_type !== 'CAUSAL_LM')
    throw field('task_type', `task_type must be "CAUSAL_LM" (got ${JSON.stringify(c.task_type)})`);
  if (!Number.isInteger(c.r) || (c.r as number) < 1) throw field('r', 'r must be a positive integer');
  if (typeof c.lora_alpha !== 'number') throw field('lora_alpha', 'lora_alpha must be a number');
  if (!Array.isArray(c.target_modules) || !c.target_modules.every((m) => typeof m === 'string'))
    throw field('target_modules', 'target_modules must be a list of module names');
  if (c.use_dora === true) throw field('use_dora', 'DoRA adapters are not supported');
  return { bias: 'none', lora_dropout: 0, base_model_name_or_path: '', task_type: 'CAUSAL_LM', ...c } as PeftConfig;
}

export interface ReadAdapterOptions {
  /** The base model the adapter must belong to (compared with base_model_name_or_path). */
  baseModel?: string;
  /** The base model's shape: every tensor's layer and shape is checked against it. */
  modelConfig?: ModelConfig;
}

/**
 * Reads a PEFT adapter: a zip, or its files by name (a folder). Validates everything; apply the
 * result with src/model/lora.ts (`attachLora` with the config, then `importLora(model, tensors)`).
 */
export function readAdapter(
  input: Uint8Array | Map<string, Uint8Array>,
  file: string,
  options: ReadAdapterOptions = {},
): { config: PeftConfig; tensors: HostTensors; readme: string | null } {
  let files: Map<string, Uint8Array>;
  let names: Set<string>;
  if (input instanceof Map) {
    files = input;
    names = new Set(input.keys());
  } else ({ files, names } = unzipSelected(input, file, ADAPTER_ZIP_LIMITS));
  const configBytes = files.get(ADAPTER_CONFIG);
  const weights = files.get(ADAPTER_WEIGHTS);
  if (!configBytes) throw new ImportError(file, `${ADAPTER_CONFIG} is missing`);
  if (!weights)
    throw new ImportError(
      file,
      `${ADAPTER_WEIGHTS} is missing${names.has('adapter_model.bin') ? ' (only the legacy adapter_model.bin is there; re-save with safe_serialization=True)' : ''}`,
    );
  const config = parseConfig(strFromU8(configBytes), file);
  if (
    options.baseModel !== undefined &&
    config.base_model_name_or_path &&
    config.base_model_name_or_path !== options.baseModel &&
    config.base_model_name_or_path !== transformersBase(options.baseModel).base_model_name_or_path
  ) {
    throw new ImportError(
      file,
      `the adapter is for base model "${config.base_model_name_or_path}", not "${options.baseModel}"`,
      { field: `${ADAPTER_CONFIG} base_model_name_or_path` },
    );
  }
  let tensors: HostTensors;
  try {
    tensors = readSafetensors(weights, ADAPTER_WEIGHTS).tensors;
    assertFiniteTensors(tensors, ADAPTER_WEIGHTS);
  } catch (e) {
    const tensor = /tensor "([^"]+)"/.exec((e as Error).message)?.[1];
    throw new ImportError(file, (e as Error).message.replace(/\.$/, ''), tensor ? { tensor } : {}, { cause: e });
  }
  checkAdapterTensors(tensors, config, file, options.modelConfig);
  const readme = files.get('README.md');
  return { config, tensors, readme: readme ? strFromU8(readme) : null };
}

/**
 * Full weights with the adapter folded in: W' = W + (alpha / r) · B · A on each adapted
 * `model.layers.{i}.….weight` ([out, in], HF layout). The inputs are not modified.
 */
export function mergeAdapterWeights(base: HostTensors, adapter: HostTensors, config: PeftConfig): HostTensors {
  const scale = config.lora_alpha / config.r;
  const merged: HostTensors = new Map([...base].map(([k, v]) => [k, { shape: v.shape.slice(), data: v.data }]));
  for (const [name, A] of adapter) {
    if (!name.endsWith('.lora_A.weight')) continue;
    const B = adapter.get(name.replace(/lora_A\.weight$/, 'lora_B.weight'))!;
    const target = name.replace(/^base_model\.model\./, '').replace(/\.lora_A\.weight$/, '.weight');
    const W = merged.get(target);
    if (!W) throw new Error(`merge: the base weights have no ${target} for adapter tensor ${name}`);
    const [out, inp] = W.shape,
      r = A.shape[0];
    if (B.shape[0] !== out || A.shape[1] !== inp)
      throw new Error(`merge: ${name} does not fit ${target} [${W.shape.join(', ')}]`);
    const data = new Float32Array(W.data); // copy: never touch the caller's weights
    for (let o = 0; o < out; o++) {
      for (let k = 0; k < r; k++) {
        const b = B.data[o * r + k] * scale;
        if (b === 0) continue;
        const row = o * inp,
          arow = k * inp;
        for (let i = 0; i < inp; i++) data[row + i] += b * A.data[arow + i];
      }
    }
    merged.set(target, { shape: W.shape.slice(), data });
  }
  return merged;
}

/** Merged full weights in Hugging Face layout: config.json + model.safetensors (+ any extra files, e.g. tokenizer.json). */
export function mergedModelFiles(
  base: HostTensors,
  adapter: HostTensors,
  config: PeftConfig,
  hfConfig: object,
  extra: Record<string, Uint8Array | string> = {},
): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>([
    ['config.json', strToU8(JSON.stringify(hfConfig, null, 2) + '\n')],
    ['model.safetensors', writeSafetensors(mergeAdapterWeights(base, adapter, config), { format: 'pt' })],
  ]);
  for (const [name, v] of Object.entries(extra)) files.set(name, typeof v === 'string' ? strToU8(v) : v);
  return files;
}
