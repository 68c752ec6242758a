/**
 * The CLI says which chat template a Hugging Face model runs in (chat_template.jinja or
 * tokenizer_config.json) and its tool-call format, and a model whose template drops tool calls is
 * refused for a tool environment with a message naming it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/kernels/backend.ts';
import { presetConfig as modelPreset } from '../../src/model/config.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { saveModelToDir } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { familyTemplate, familyTokenizer, type Family } from '../format/family-templates.ts';
import { cli, tempDir } from './helpers.ts';

/** A nano model on the family's tokenizer, its template in chat_template.jinja (transformers 5's layout). */
async function modelFolder(family: Family): Promise<string> {
  const tokenizer = HfTokenizer.fromJson(familyTokenizer(family).json, { eos_token: '<|im_end|>' });
  const dir = join(tempDir(), family);
  const model = TransformerModel.create(modelPreset('nano', tokenizer.vocabSize), 1);
  await saveModelToDir(model, tokenizer, dir);
  model.dispose();
  writeFileSync(join(dir, 'chat_template.jinja'), familyTemplate(family));
  return dir;
}

const evalArgs = ['eval', '--env', 'arith_tool', '--items', '1', '--max-new-tokens', '4', '--max-steps', '1'];

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
});

describe('the chat format on the command line', () => {
  it('names the template file and the call format when the model loads', async () => {
    const dir = await modelFolder('qwen2.5');
    const r = await cli(tempDir(), ...evalArgs, '--model', dir);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(
      `model ${dir}: chat format: the model's own chat template (chat_template.jinja); tool calls: Hermes`,
    );
  }, 60_000);

  it('refuses a template that drops tool calls for a tool environment, naming the model', async () => {
    const dir = await modelFolder('smollm2');
    const r = await cli(tempDir(), ...evalArgs, '--model', dir);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('it drops tool calls, so environments with tools are refused');
    expect(r.err).toMatch(
      new RegExp(
        `The chat template of the model ${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} cannot render tool calls, and environment "arith_tool" offers calc: .* or delete its chat_template\\.jinja so Spindle uses its own ChatML`,
      ),
    );
  }, 60_000);
});
