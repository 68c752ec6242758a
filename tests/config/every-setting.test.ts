/**
 * Every setting does something: each field of the run config is read, by its dotted path, by code outside
 * src/config (and outside the forms that only edit it). A field nothing reads fails here; retire it
 * (config/rules.ts RETIRED_FIELDS) or make it work. The path counts, not the leaf's name: `training.epochs`
 * is read where a file reads `epochs` of the training section (`config.training.epochs`, `const
 * { epochs } = config.training`, `tc.epochs` for `const tc = config.training`, `opts.epochs` for
 * `opts: RunConfig['training']`), never where an `epochs` of something else is.
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
const EDITORS = /^src\/config\/|^src\/ui\/screens\/train\/(ConfigForm\.svelte|Field\.svelte|form-fields\.ts)$/;
const sources = files('src')
  .filter((f) => !EDITORS.test(f))
  .map((f) => readFileSync(join(ROOT, f), 'utf8'));

const CONFIG = 'config|cfg';

/**
 * The names a file gives the section `parent` (the whole config for a top-level field): the section's
 * own name, `const tc = config.trajectory_collection`, `{ trajectory_collection: tc } = …`, a parameter
 * typed `RunConfig['parent']`, or typed by a type declared over it (`type W = Pick<RunConfig['parent'], …>`).
 */
function sectionNames(text: string, parent: string | null): string[] {
  if (parent === null)
    return [CONFIG, ...[...text.matchAll(/\b(\w+)\??\s*:\s*(?:Readonly<)?RunConfig\b(?!\[)/g)].map((m) => m[1])];
  const section = `RunConfig\\[['"]${parent}['"]\\]`;
  const types = [...text.matchAll(new RegExp(`(?:type|interface)\\s+(\\w+)[^;{]*?${section}`, 'g'))].map((m) => m[1]);
  const typed = [section, ...types].flatMap((t) =>
    [...text.matchAll(new RegExp(`\\b(\\w+)\\??\\s*:\\s*(?:Readonly<)?(?:Pick<)?${t}`, 'g'))].map((m) => m[1]),
  );
  const assigned = [
    ...text.matchAll(new RegExp(`(?:const|let)\\s+(\\w+)\\s*=\\s*[\\w.?!]*\\.${parent}\\b(?!\\s*[.[(])`, 'g')),
  ].map((m) => m[1]);
  const renamed = [...text.matchAll(new RegExp(`[{,]\\s*${parent}\\s*:\\s*(\\w+)\\s*[,}]`, 'g'))].map((m) => m[1]);
  return [parent, ...typed, ...assigned, ...renamed];
}

/** Whether a file reads `leaf` of the section `parent`: through one of its names, by property or by destructuring. */
function readsField(text: string, parent: string | null, leaf: string): boolean {
  const names = sectionNames(text, parent).join('|');
  const property = new RegExp(`\\b(?:${names})\\??\\.${leaf}\\b|\\b(?:${names})\\[['"]${leaf}['"]\\]`);
  const destructured = new RegExp(
    `\\{[^{}]*\\b${leaf}\\b[^{}]*\\}\\s*=\\s*(?:[\\w.?!]*\\.)?(?:${names})\\b(?!\\s*[.[(])`,
  );
  return property.test(text) || destructured.test(text);
}

/** Config fields not implemented: the validator refuses every value but those that run (none now: quantization is read). */
const SEED_FORMAT = new Set<string>([]);

describe('every setting does something', () => {
  it.each(leaves(DEFAULT_CONFIG).filter((p) => !SEED_FORMAT.has(p)))('%s is read outside the config code', (path) => {
    const parts = path.split('.');
    const leaf = parts.at(-1)!;
    const parent = parts.length > 1 ? parts.at(-2)! : null;
    expect(
      sources.some((text) => readsField(text, parent, leaf)),
      `nothing reads ${path}`,
    ).toBe(true);
  });

  it('looks for the path, not the name: a field of one section is not read by the same name in another', () => {
    expect(readsField('const n = config.training.epochs;', 'training', 'epochs')).toBe(true);
    expect(readsField('const { epochs, batch_size } = cfg.training;', 'training', 'epochs')).toBe(true);
    expect(
      readsField('const tc = this.config.trajectory_collection;\nrun(tc.tools);', 'trajectory_collection', 'tools'),
    ).toBe(true);
    expect(
      readsField('const { trajectory_collection: tc } = config;\nrun(tc.tools);', 'trajectory_collection', 'tools'),
    ).toBe(true);
    expect(readsField("function f(w: RunConfig['safety']) { return w.threshold; }", 'safety', 'threshold')).toBe(true);
    expect(
      readsField(
        "type W = Pick<RunConfig['process_rewards'], 'thought_bonus'>;\nconst f = (w: W) => w.thought_bonus;",
        'process_rewards',
        'thought_bonus',
      ),
    ).toBe(true);
    expect(readsField('const s = config.seed;', null, 'seed')).toBe(true);
    // The same leaf name elsewhere does not count.
    expect(readsField('const e = options.epochs; const { epochs } = job;', 'training', 'epochs')).toBe(false);
    expect(readsField('const t = config.sampling.temperature;', 'judge', 'temperature')).toBe(false);
    expect(readsField('const s = task.seed;', null, 'seed')).toBe(false);
  });

  it('config fields refuse what is not implemented, saying so', async () => {
    const { validateRunConfig } = await import('../../src/config/validate.ts');
    expect(validateRunConfig({ model: { quantization: 'q4_k_m' } }).errors[0].message).toMatch(
      /allowed: none, int8 \(.*4-bit formats such as q4_k_m are not implemented/,
    );
    expect(
      validateRunConfig({ model: { quantization: 'int8' }, training: { gradient_checkpointing: 'on' } }).errors,
    ).toEqual([]);
    expect(validateRunConfig({ training: { gradient_checkpointing: true } }).errors[0].message).toMatch(
      /gradient_checkpointing.*allowed: auto, on, off/,
    );
    expect(validateRunConfig({ model: { preset: 'nano' } }).errors[0].message).toMatch(
      /"model.preset" was removed: it did nothing/,
    );
    expect(validateRunConfig({ trajectory_collection: { tools: ['python_exec'] } }).errors[0].message).toMatch(
      /"python_exec"; allowed: js, calc, sh, git/,
    );
  });
});
