/**
 * Where a model's chat template comes from: chat_template.jinja (what transformers 5's save_pretrained
 * writes) or tokenizer_config.json, the file winning as in transformers; the loaded tokenizer says which
 * and carries the template in its config (so a rollout worker's copy has it), and saving writes it back
 * where it came from.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/model/config.ts';
import { HfTokenizer, withChatTemplate } from '../../src/tokenizer/hf-tokenizer.ts';
import { loadHfModel, saveModel, saveModelToDir } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { renderSystemPrompt } from '../../src/format/system-prompt.ts';
import { renderChatML } from '../../src/format/chatml.ts';
import { SPINDLE_CHAT_TEMPLATE } from '../../src/tokenizer/spindle-chat-template.ts';
import { chatFormatSummary, conversationFormat } from '../../src/format/conversation.ts';
import { familyTemplate } from '../format/family-templates.ts';
import { useBackend } from '../model/helpers.ts';
import { tinyTokenizerJson } from './tiny-hf-tokenizer.ts';

const tiny: ModelConfig = {
  vocabSize: 264,
  hiddenSize: 8,
  intermediateSize: 12,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 4,
  maxPositions: 32,
  ropeTheta: 1e6,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};
const QWEN = familyTemplate('qwen2.5');
const SMOL = familyTemplate('smollm2');

let root: string;
let model: TransformerModel;

beforeAll(async () => {
  await useBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'spindle-template-'));
  model = TransformerModel.create(tiny, 4);
});

afterAll(() => {
  model.dispose();
  rmSync(root, { recursive: true, force: true });
});

/** A model folder whose tokenizer_config.json has `configTemplate` (or none) and, when given, a chat_template.jinja. */
async function folder(name: string, configTemplate: string | null, jinja: string | null): Promise<string> {
  const dir = join(root, name);
  const config = { eos_token: '<|im_end|>', ...(configTemplate ? { chat_template: configTemplate } : {}) };
  await saveModelToDir(model, HfTokenizer.fromJson(tinyTokenizerJson(), config), dir);
  if (jinja !== null) writeFileSync(join(dir, 'chat_template.jinja'), jinja);
  return dir;
}

async function loadTokenizer(dir: string): Promise<HfTokenizer> {
  const loaded = await loadHfModel(dir);
  loaded.model.dispose();
  return loaded.tokenizer as HfTokenizer;
}

describe('the chat template’s file', () => {
  it('reads chat_template.jinja (transformers 5), says so, and saves it back there', async () => {
    const dir = await folder('v5', null, QWEN);
    const tokenizer = await loadTokenizer(dir);
    expect(tokenizer.chatTemplateFile).toBe('chat_template.jinja');
    expect(tokenizer.configJson.chat_template).toBe(QWEN);
    expect(tokenizer.modelName).toBe(dir);
    expect(conversationFormat(tokenizer).calls.family).toBe('hermes');
    expect(chatFormatSummary(tokenizer)).toMatch(
      /^the model's own chat template \(chat_template\.jinja\); tool calls: Hermes/,
    );
    // A worker rebuilds the tokenizer from its config alone: the template travels in it.
    const copy = HfTokenizer.fromJson(tokenizer.json, tokenizer.configJson);
    expect(conversationFormat(copy).rendersTools).toBe(true);

    const files = await saveModel(model, tokenizer);
    expect(new TextDecoder().decode(files.get('chat_template.jinja'))).toBe(QWEN);
    const saved = JSON.parse(new TextDecoder().decode(files.get('tokenizer_config.json')));
    expect(saved).not.toHaveProperty('chat_template');
    expect(saved).not.toHaveProperty('name_or_path'); // where this copy was loaded from, as transformers leaves it out
  });

  it('prefers chat_template.jinja over tokenizer_config.json’s template, as transformers does', async () => {
    const tokenizer = await loadTokenizer(await folder('both', SMOL, QWEN));
    expect(tokenizer.chatTemplateFile).toBe('chat_template.jinja');
    expect(tokenizer.configJson.chat_template).toBe(QWEN);
  });

  it('reads tokenizer_config.json’s template when there is no file, and says when there is none at all', async () => {
    const own = await loadTokenizer(await folder('v4', SMOL, null));
    expect(own.chatTemplateFile).toBe('tokenizer_config.json');
    expect(chatFormatSummary(own)).toBe(
      "the model's own chat template (tokenizer_config.json); it drops tool calls, so environments with tools are refused",
    );
    expect((await saveModel(model, own)).has('chat_template.jinja')).toBe(false);

    const none = await loadTokenizer(await folder('none', null, null));
    expect(none.chatTemplateFile).toBeNull();
    expect(chatFormatSummary(none)).toMatch(
      /^no chat template \(neither chat_template\.jinja nor tokenizer_config\.json has one\): Spindle's ChatML/,
    );
  });

  it('renders Spindle’s own template natively: the environment’s system prompt keeps its tool list as written', async () => {
    const tokenizer = await loadTokenizer(await folder('spindle', SPINDLE_CHAT_TEMPLATE, null));
    const format = conversationFormat(tokenizer);
    expect(format.rendersTools).toBe(false);
    expect(chatFormatSummary(tokenizer)).toMatch(/^Spindle's own chat template/);
    const tools = [
      {
        name: 'get_price',
        description: 'Returns the price of a product.',
        parameters: { type: 'object' as const, properties: { item: { type: 'string' } }, required: ['item'] },
      },
    ];
    const messages = [
      renderSystemPrompt(tools, { style: 'described' }),
      { role: 'user' as const, content: 'What does a lamp cost?' },
    ];
    expect(format.prompt(messages, tools)).toBe(renderChatML(messages, { addGenerationPrompt: true }));
    // A template that differs by one character is the model's own, probed and rendered as such.
    const edited = await loadTokenizer(await folder('edited', `${SPINDLE_CHAT_TEMPLATE} `, null));
    expect(conversationFormat(edited).rendersTools).toBe(true);
  });

  it('a named list keeps its tool_use template beside the file’s default', () => {
    const config = {
      chat_template: [
        { name: 'default', template: 'old' },
        { name: 'tool_use', template: QWEN },
      ],
    };
    const { config: merged, file } = withChatTemplate(config, SMOL);
    expect(file).toBe('chat_template.jinja');
    expect(merged.chat_template).toEqual([
      { name: 'tool_use', template: QWEN },
      { name: 'default', template: SMOL },
    ]);
    expect(conversationFormat(HfTokenizer.fromJson(tinyTokenizerJson(), merged)).rendersTools).toBe(true);
  });
});
