/**
 * Every setting does something: each field of the run config is read by code outside src/config (and
 * outside the forms that only edit it). A field nothing reads fails here; retire it (config/rules.ts
 * RETIRED_FIELDS) or make it work.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';

const ROOT = join(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path);
    return /\.(ts|svelte)$/.test(e.name) ? [path] : [];
  });
}

/** Dotted paths of the config's leaves (a list or the judges' list counts as one leaf). */
function leaves(value: unknown, prefix = ''): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length) {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

// Code that only edits or validates the config does not count as reading it.
const EDITORS = /^src\/config\/|^src\/ui\/screens\/train\/(ConfigForm|Field)\.svelte$/;
const code = files('src').filter((f) => !EDITORS.test(f)).map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');

/** Config fields not implemented: the validator refuses every value but those that run (none now: quantization is read). */
const SEED_FORMAT = new Set<string>([]);

describe('every setting does something', () => {
  it.each(leaves(DEFAULT_CONFIG).filter((p) => !SEED_FORMAT.has(p)))('%s is read outside the config code', (path) => {
    const [section, ...rest] = path.split('.');
    const leaf = rest.at(-1) ?? section;
    // `config.training.eval_interval`, `tc.tool_timeout_ms`, `const { eval_interval } = training`, `training['x']`.
    const read = new RegExp(`\\.${leaf}\\b|[{,]\\s*${leaf}\\s*[,}]|\\['${leaf}'\\]`);
    expect(read.test(code), `nothing reads ${path}`).toBe(true);
  });

  it('config fields refuse what is not implemented, saying so', async () => {
    const { validateRunConfig } = await import('../../src/config/validate.ts');
    expect(validateRunConfig({ model: { quantization: 'q4_k_m' } }).errors[0].message).toMatch(/allowed: none, int8 \(.*4-bit formats such as q4_k_m are not implemented/);
    expect(validateRunConfig({ model: { quantization: 'int8' }, training: { gradient_checkpointing: 'on' } }).errors).toEqual([]);
    expect(validateRunConfig({ training: { gradient_checkpointing: true } }).errors[0].message).toMatch(/gradient_checkpointing.*allowed: auto, on, off/);
    expect(validateRunConfig({ model: { preset: 'nano' } }).errors[0].message).toMatch(/"model.preset" was removed: it did nothing/);
    expect(validateRunConfig({ trajectory_collection: { tools: ['python_exec'] } }).errors[0].message).toMatch(/"python_exec"; allowed: js, calc, sh, git/);
  });
});
