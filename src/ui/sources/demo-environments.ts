/**
 * The Environments screen's demo source (`?demo`): drafts kept in memory and a made-up check (the demo
 * has no engine worker, so nothing is loaded or run); the name is read from the module's `name:` line.
 */
import type {
  EnvironmentAudit,
  EnvironmentDraft,
  EnvironmentSummary,
  EnvironmentsSource,
} from '../screens/environments/source.ts';

const EXAMPLE = `export default {
  name: 'treasure_hunt',
  description: 'Follow a chain of notes to a code, unlock the box with it, and say what is inside.',
  tags: ['multi-step', 'example'],
  levels: [1, 2],
  // … sample, evaluate, tools and expert: open the app without ?demo for the real example.
};
`;

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new DOMException('cancelled', 'AbortError'));
    });
  });

function nameOf(draft: EnvironmentDraft): string | null {
  if (draft.kind === 'tasks') return draft.name;
  return /name:\s*['"]([a-z_][a-z0-9_]*)['"]/.exec(draft.source)?.[1] ?? null;
}

export function demoEnvironments(
  builtins: { id: string; description: string; levels: number[] }[],
): EnvironmentsSource {
  const stored = new Map<string, { draft: EnvironmentDraft; summary: EnvironmentSummary }>();
  const missingName = {
    ok: false as const,
    problems: ['the module exports no name: write `export default { name, description, tags, sample, evaluate }`'],
    line: null,
  };
  return {
    example: () => ({ kind: 'module', source: EXAMPLE, file: 'treasure-hunt.js' }),
    starter: () => ({ kind: 'module', source: EXAMPLE.replace('treasure_hunt', 'my_environment'), file: null }),
    list: async () => ({
      user: [...stored.values()].map((s) => s.summary),
      builtins: builtins.map((b) => ({ name: b.id, description: b.description, levels: b.levels })),
    }),
    open: async (name) => stored.get(name)!.draft,
    async check(draft, onProgress, signal) {
      const name = nameOf(draft);
      if (!name) return missingName;
      // Nothing is parsed here; a doubled brace stands in for a syntax error, so the editor can show one at its line.
      const broken = draft.kind === 'module' ? draft.source.split('\n').findIndex((l) => l.includes('{{')) : -1;
      if (broken >= 0) return { ok: false, problems: ["SyntaxError: Unexpected token '{'"], line: broken + 1 };
      const levels = [1, 2];
      // Parts under way end in "…", as the engine's check reports them.
      onProgress('sampling 5 tasks…');
      await wait(300, signal);
      onProgress('5 tasks sampled');
      const audit: EnvironmentAudit = {
        env: name,
        samples: [1, 2, 1, 2, 1].map((level, i) => ({
          level,
          split: 'train',
          prompt: `Start at note n${'abcde'[i]}x. Find the box's code, open the box and tell me what is inside.`,
        })),
        levels: levels.map((level) => ({
          level,
          expert: { successes: 8, n: 8, firstFailure: null },
          blind: { policy: 'empty answer', kind: 'task-blind', success: 0, n: 8 },
          chance: 0,
        })),
        problems: [],
        warnings: [],
        policy: { label: 'the base model', level: 1, successes: 3, n: 4 },
        needsBootstrap: false,
      };
      for (const level of levels) {
        onProgress(`level ${level}: running the expert…`);
        await wait(300, signal);
        onProgress(`level ${level}: expert 8/8`);
      }
      return {
        ok: true,
        source: draft.kind === 'module' ? { ...draft, name } : draft,
        info: { name, description: '', tags: [], levels, tools: [], expert: true, builtin: false },
        audit,
      };
    },
    async save(draft, auditProblems) {
      const name = nameOf(draft);
      if (!name) return missingName;
      // A store write takes a moment; so does the demo's, so the screen shows it saving.
      await wait(300, new AbortController().signal);
      const summary: EnvironmentSummary = {
        name,
        kind: draft.kind,
        file: draft.file,
        updated: Date.now(),
        problems: auditProblems ?? [],
        status: auditProblems === null ? 'unchecked' : auditProblems.length ? 'problems' : 'passed',
      };
      stored.set(name, { draft, summary });
      return { ok: true, summary };
    },
    importFile: async (file) => ({ kind: 'module', source: new TextDecoder().decode(file.bytes), file: file.name }),
    importUrl: async () => {
      throw new Error('The demo cannot fetch files; open the app without ?demo to import from a URL.');
    },
    exportFile: (draft, name) => ({
      fileName: `${name ?? 'environment'}.js`,
      mime: 'text/javascript',
      text: draft.kind === 'module' ? draft.source : '',
    }),
    remove: async (name) => {
      stored.delete(name);
    },
  };
}
