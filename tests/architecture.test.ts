/**
 * The import rules of docs/architecture.md's "Import rules" table, checked on the real import graph of src/ and
 * workers/ (every `import`, `export … from` and dynamic `import()`, type-only ones included: a type
 * import is still a dependency a reader has to follow).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|svelte)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|[\s;])(import|export)\s+(type\s+)?(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every import of the file: relative ones resolved to repository paths, packages as their names. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[3] ?? m[4];
    const to = spec.startsWith('.') ? normalize(join(dirname(file), spec)) : spec;
    return { from: file, to, typeOnly: Boolean(m[2]) };
  });
}

const files = [...sourceFiles('src'), ...sourceFiles('workers')];
const edges = files.flatMap(importsOf);

/** The part a file belongs to: src/<dir>, src/<file>.ts, or workers. */
function part(path: string): string {
  if (path.startsWith('workers/')) return 'workers';
  const [, first] = path.split('/');
  return first?.replace(/\.ts$/, '') ?? path;
}

/**
 * The rules, read from the one list in docs/architecture.md ("Import rules"): for each part, the parts it may import
 * besides itself (ALLOWED), and single files of another part it may import too (ALLOWED_FILES: pure helpers
 * with no stage behind them). That document says why each exception is there.
 */
function readRules(): { ALLOWED: Record<string, string[]>; ALLOWED_FILES: Record<string, string[]> } {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const block = /<!-- import rules: read by tests\/architecture\.test\.ts -->\n```text\n([\s\S]*?)\n```/.exec(doc);
  if (!block) throw new Error('docs/architecture.md has no import-rules table');
  const ALLOWED: Record<string, string[]> = {};
  const ALLOWED_FILES: Record<string, string[]> = {};
  for (const line of block[1].split('\n').slice(1)) {
    const [name, ...targets] = line
      .trim()
      .split(/\s+/)
      .filter((t) => t !== '—');
    ALLOWED[name] = targets.filter((t) => !t.includes('/'));
    ALLOWED_FILES[name] = targets.filter((t) => t.includes('/'));
  }
  return { ALLOWED, ALLOWED_FILES };
}

const { ALLOWED, ALLOWED_FILES } = readRules();

const permitted = (e: Edge) =>
  part(e.from) === part(e.to) ||
  (ALLOWED[part(e.from)] ?? []).includes(part(e.to)) ||
  (ALLOWED_FILES[part(e.from)] ?? []).includes(e.to);

const local = (e: Edge) => e.to.startsWith('src/') || e.to.startsWith('workers/') || e.to.startsWith('models/');

describe('import graph', () => {
  it('reads a graph of the size of the code base (the parser did not silently miss imports)', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(edges.filter(local).length).toBeGreaterThan(500);
  });

  it('finds a rule in the import table for every part of the code', () => {
    const parts = [...new Set(files.map(part))];
    expect(parts.filter((p) => !(p in ALLOWED))).toEqual([]);
    expect(ALLOWED.cli).toEqual(['contracts', 'config', 'pipeline']);
    expect(ALLOWED_FILES.ui).toEqual(['src/rollout/success-interval.ts']);
  });

  it('has no edge between parts that the layering forbids', () => {
    const forbidden = edges
      .filter((e) => e.to.startsWith('src/') || e.to.startsWith('workers/'))
      .filter((e) => !permitted(e))
      .map((e) => `${e.from} → ${e.to}`);
    expect(forbidden).toEqual([]);
  });

  it('lets the UI reach judges, models, the store and exports only through the pipeline', () => {
    const direct = edges.filter(
      (e) =>
        e.from.startsWith('src/ui/') &&
        /^src\/(judge|model|kernels|hub|tokenizer|selftest|store|export|rollout|train|envs|sandbox)\//.test(e.to) &&
        !permitted(e),
    );
    expect(direct.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
    // The rule is not vacuous: the UI does reach the pipeline, and a stage file is refused.
    expect(edges.some((e) => e.from.startsWith('src/ui/') && e.to.startsWith('src/pipeline/app/'))).toBe(true);
    expect(permitted({ from: 'src/ui/sources/index.ts', to: 'src/store/index.ts', typeOnly: true })).toBe(false);
  });

  it('lets the CLI reach no stage, only the pipeline (besides contracts and config)', () => {
    const direct = edges.filter(
      (e) =>
        e.from.startsWith('src/cli/') &&
        /^src\/(judge|model|kernels|hub|tokenizer|selftest|store|export|rollout|train|envs|sandbox|format)\//.test(
          e.to,
        ),
    );
    expect(direct.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
    // Not vacuous: every command file calls the pipeline (directly, or through src/cli/pipeline.ts, which
    // loads src/cli/pipeline-api.ts once a command runs), and a stage file is refused.
    const commands = files.filter(
      (f) => f.startsWith('src/cli/commands/') && !/(index|progress|shared|small|user-envs|config)\.ts$/.test(f),
    );
    expect(commands.length).toBeGreaterThanOrEqual(8);
    for (const file of commands)
      expect(
        edges.some((e) => e.from === file && (e.to.startsWith('src/pipeline/') || e.to === 'src/cli/pipeline.ts')),
        file,
      ).toBe(true);
    expect(
      edges.filter((e) => e.from === 'src/cli/pipeline-api.ts' && e.to.startsWith('src/pipeline/')).length,
    ).toBeGreaterThan(10);
    expect(permitted({ from: 'src/cli/commands/eval.ts', to: 'src/hub/hf.ts', typeOnly: true })).toBe(false);
  });

  it('keeps the kernels below the model and the hub: no kernel imports the hub, the model or a tokenizer', () => {
    const upward = edges.filter(
      (e) => e.from.startsWith('src/kernels/') && /^src\/(hub|model|tokenizer|selftest)\/|^src\/net\.ts$/.test(e.to),
    );
    expect(upward.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
    // Not vacuous: the model and the hub do import kernels, and the table refuses a kernel that imports the hub.
    expect(edges.some((e) => e.from.startsWith('src/model/') && e.to.startsWith('src/kernels/'))).toBe(true);
    expect(edges.some((e) => e.from.startsWith('src/hub/') && e.to.startsWith('src/kernels/'))).toBe(true);
    expect(ALLOWED.kernels).toEqual([]);
    expect(permitted({ from: 'src/kernels/backend.ts', to: 'src/hub/hub.ts', typeOnly: true })).toBe(false);
    expect(permitted({ from: 'src/model/lora.ts', to: 'src/hub/hub.ts', typeOnly: true })).toBe(false);
  });

  it('has no two files that import each other (a type-only import closes a circle too)', () => {
    /** Every pair of files each importing the other, once. */
    const circles = (list: Edge[]) => {
      const pairs = new Set(list.filter(local).map((e) => `${e.from} ${e.to}`));
      return [...pairs]
        .map((p) => p.split(' '))
        .filter(([a, b]) => a < b && pairs.has(`${b} ${a}`))
        .map(([a, b]) => `${a} ↔ ${b}`);
    };
    expect(circles(edges)).toEqual([]);
    // Not vacuous: a type import back from hub.ts to hf.ts, which imports it, would be found.
    expect(edges.some((e) => e.from === 'src/hub/hf.ts' && e.to === 'src/hub/hub.ts')).toBe(true);
    expect(circles([...edges, { from: 'src/hub/hub.ts', to: 'src/hub/hf.ts', typeOnly: true }])).toEqual([
      'src/hub/hf.ts ↔ src/hub/hub.ts',
    ]);
  });

  it('lets nothing outside src/ui import Svelte, and no .svelte component import tfjs', () => {
    const svelte = edges.filter((e) => /^svelte(\/|$)/.test(e.to) && !e.from.startsWith('src/ui/')).map((e) => e.from);
    const tfjs = edges.filter((e) => e.from.endsWith('.svelte') && e.to.startsWith('@tensorflow/')).map((e) => e.from);
    expect({ svelte, tfjs }).toEqual({ svelte: [], tfjs: [] });
  });

  it('keeps tfjs out of what must run in plain Node: contracts, rng, format, envs, judges but the model judge, advantage math', () => {
    const runtime = new Map<string, string[]>();
    for (const e of edges) if (!e.typeOnly) runtime.set(e.from, [...(runtime.get(e.from) ?? []), e.to]);
    /** The tfjs package a file reaches at run time, through the chain that reaches it, or null. */
    const reachesTfjs = (start: string): string | null => {
      const seen = new Set<string>();
      const walk = (file: string, chain: string[]): string | null => {
        if (file.startsWith('@tensorflow/')) return [...chain, file].join(' → ');
        if (seen.has(file)) return null;
        seen.add(file);
        for (const next of runtime.get(file) ?? []) {
          const found = walk(next, [...chain, file]);
          if (found) return found;
        }
        return null;
      };
      return walk(start, []);
    };
    const tfjsFree = files.filter(
      (f) =>
        ['src/contracts.ts', 'src/rng.ts', 'src/train/advantages.ts'].includes(f) ||
        /^src\/(format|envs)\//.test(f) ||
        (f.startsWith('src/judge/') && !/onnx/.test(f)),
    );
    expect(tfjsFree.length).toBeGreaterThan(30);
    expect(tfjsFree.map(reachesTfjs).filter(Boolean)).toEqual([]);
  });

  it('names no file outside the repository', () => {
    const outside = edges
      .filter((e) => e.to.startsWith('..') || relative(ROOT, join(ROOT, e.to)).startsWith('..'))
      .map((e) => `${e.from} → ${e.to}`);
    expect(outside).toEqual([]);
  });
});
