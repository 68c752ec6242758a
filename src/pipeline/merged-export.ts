/**
 * The one merged-model export (the Models screen through the engine, `spindle export adapter --merge`):
 * the base with a checkpoint's LoRA adapter folded in (W + alpha/r · B·A), in Hugging Face layout with
 * the base's tokenizer files, so the merged model loads and chats as its base did. Where the base's own
 * files are at hand (an imported model) they ship as they came; otherwise they are written from the
 * loaded model, as any saved model's are (model/hf.ts).
 */
import { checkAdapterTensors, mergedModelFiles, type PeftConfig } from '../export/peft.ts';
import type { HfConfigJson } from '../model/config.ts';
import { hfConfigFor, tokenizerFiles } from '../model/hf.ts';
import type { HostTensors } from '../model/transformer.ts';
import type { LoadedPolicyModel } from './model-shelf.ts';

export interface MergeSource extends LoadedPolicyModel {
  /** The base's own config.json, when known. */
  hfConfig?: HfConfigJson | null;
  /** The base's own tokenizer files, when known. */
  tokenizerFiles?: Record<string, Uint8Array> | null;
}

/** config.json, model.safetensors and the tokenizer files of the merged model; throws when the adapter does not fit the base. */
export async function mergedModel(base: MergeSource, adapter: HostTensors, peft: PeftConfig): Promise<Map<string, Uint8Array>> {
  checkAdapterTensors(adapter, peft, 'the checkpoint', base.model.config);
  const config = base.hfConfig ?? hfConfigFor(base.model.config, base.tokenizer);
  const tokenizer = base.tokenizerFiles ?? Object.fromEntries(tokenizerFiles(base.tokenizer));
  return mergedModelFiles(await base.model.getWeights(), adapter, peft, config, tokenizer);
}
