/**
 * The one merged-model export (the Models screen through the engine, `spindle export adapter --merge`,
 * `spindle sft --merge`): the base with a checkpoint's LoRA adapter folded in (W + alpha/r · B·A), in
 * Hugging Face layout with the base's tokenizer files, so the merged model loads and chats as its base did.
 * Where the base's own files are at hand (an imported model) they ship as they came; otherwise they are
 * written from the loaded model, as any saved model's are (hub/hf.ts). Beside them:
 *
 *   config.json             the base's, its `_name_or_path` the base it came from (the hub id for a hub model)
 *   generation_config.json  the tokenizer's turn-ending ids as `eos_token_id`, so `generate` stops where Spindle does
 *   README.md               a model card naming the base (`base_model` for a hub model)
 */
import { checkAdapterTensors, mergedModelFiles, type PeftConfig } from '../../export/peft.ts';
import type { HfConfigJson } from '../../model/config.ts';
import { hfConfigFor, tokenizerFiles } from '../../hub/hf.ts';
import { parseHubRef, transformersBase } from '../../hub/hub.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { HostTensors } from '../../model/transformer.ts';
import type { LoadedPolicyModel } from '../engine/engine-api.ts';

export interface MergeSource extends LoadedPolicyModel {
  /** The base's own config.json, when known. */
  hfConfig?: HfConfigJson | null;
  /** The base's own tokenizer files, when known. */
  tokenizerFiles?: Record<string, Uint8Array> | null;
  /** What the base is called (a run's `model.base_model`, `--model`); default: the adapter's `base_model_name_or_path`. */
  baseModel?: string;
}

/** generation_config.json: generation stops on every token that ends a turn (`<|im_end|>`, the end of text), as in Spindle. */
export function generationConfig(tokenizer: TextTokenizer, config: HfConfigJson): Record<string, unknown> {
  const stops = [...tokenizer.stopIds];
  return {
    ...(typeof config.bos_token_id === 'number' ? { bos_token_id: config.bos_token_id } : {}),
    eos_token_id: stops.length === 1 ? stops[0] : stops,
    pad_token_id: tokenizer.padId,
  };
}

function modelCard(name: string, revision: string | null, fromHub: boolean, peft: PeftConfig): string {
  const front = fromHub
    ? ['---', `base_model: ${name}`, 'library_name: transformers', 'tags:', '- spindle', '- lora-merged', '---', '']
    : [];
  const at = revision ? ` (revision ${revision})` : '';
  return [
    ...front,
    '# Merged with Spindle',
    '',
    `\`${name}\`${at} with a LoRA adapter (r=${peft.r}, alpha=${peft.lora_alpha}, modules ${peft.target_modules.join(', ')})` +
      ' folded into its weights.',
    '',
    '```python',
    'from transformers import AutoModelForCausalLM, AutoTokenizer',
    'model = AutoModelForCausalLM.from_pretrained("path/to/this/folder")',
    'tokenizer = AutoTokenizer.from_pretrained("path/to/this/folder")',
    '```',
    '',
  ].join('\n');
}

/** The merged model's files (see the header); throws when the adapter does not fit the base. */
export async function mergedModel(
  base: MergeSource,
  adapter: HostTensors,
  peft: PeftConfig,
): Promise<Map<string, Uint8Array>> {
  checkAdapterTensors(adapter, peft, 'the checkpoint', base.model.config);
  const named = base.baseModel ?? peft.base_model_name_or_path;
  const { base_model_name_or_path: name, revision } = transformersBase(named);
  const config = { ...(base.hfConfig ?? hfConfigFor(base.model.config, base.tokenizer)), _name_or_path: name };
  const tokenizer = base.tokenizerFiles ?? Object.fromEntries(tokenizerFiles(base.tokenizer));
  const encoder = new TextEncoder();
  return mergedModelFiles(await base.model.getWeights(), adapter, peft, config, {
    ...tokenizer,
    'generation_config.json': encoder.encode(JSON.stringify(generationConfig(base.tokenizer, config), null, 2) + '\n'),
    'README.md': encoder.encode(modelCard(name, revision, parseHubRef(named) !== null, peft)),
  });
}
