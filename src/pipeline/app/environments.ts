/**
 * The Environments screen's operations, and the user's stored environments as the other screens see
 * them. A user's environment code never runs on the page: drafts are loaded and checked in the engine
 * worker (environment-workshop.ts, in QuickJS), saved ones are installed there, and the Playground asks
 * the engine for their tasks and scores. The page only stores sources (IndexedDB) and moves text.
 */
import * as Comlink from 'comlink';
import type { EnvironmentSource, Split, Task, Trajectory } from '../../contracts.ts';
import { describeEnvironments } from '../../envs/index.ts';
import { isBuiltinEnvironment } from '../../envs/registry.ts';
import {
  deleteEnvironmentRecord,
  getEnvironmentRecord,
  listEnvironmentRecords,
  putEnvironment,
  type Store,
} from '../../store/index.ts';
import type { EnvironmentRecord } from '../../store/records.ts';
import type {
  EngineEnvironmentInfo,
  EnvironmentAudit,
  EnvironmentCheck,
  EnvironmentDraft,
  EnvironmentFailure,
  EnvironmentLoad,
} from '../engine/environment-workshop.ts';
import EXAMPLE_MODULE from '../../../examples/envs/treasure-hunt.js?raw';
import STARTER_MODULE from '../../../examples/envs/starter.js?raw';
import { fetchEnvironmentFile, isUrl } from '../operations/environment-url.ts';
import type { BootstrapEvent, BootstrapReport, EngineBootstrapRequest } from '../operations/bootstrap.ts';
import { BOOTSTRAP_DEFAULTS } from '../operations/defaults.ts';
import type { DemonstrationSource } from '../operations/demonstrations.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';

export type { EngineEnvironmentInfo, EnvironmentAudit, EnvironmentCheck, EnvironmentDraft, EnvironmentFailure };
export type { BootstrapEvent, BootstrapReport, DemonstrationSource };

/** What the screen's Bootstrap asks for: where the demonstrations come from, and the flow's sizes. */
export interface BootstrapChoice {
  source: DemonstrationSource;
  /** Demonstration tasks to collect (expert, remote). */
  demonstrations: number;
  sftEpochs: number;
  sftLearningRate: number;
  /** GRPO updates after SFT (0: stop after SFT). */
  grpoSteps: number;
  /** Distinct held-out items of each figure. */
  heldOutItems: number;
}

export const BOOTSTRAP_CHOICE: Omit<BootstrapChoice, 'source'> = {
  demonstrations: BOOTSTRAP_DEFAULTS.demonstrations,
  sftEpochs: BOOTSTRAP_DEFAULTS.sftEpochs,
  sftLearningRate: BOOTSTRAP_DEFAULTS.sftLearningRate,
  grpoSteps: 20,
  heldOutItems: 32,
};

/** The GRPO run a bootstrap of `env` ends in: the defaults, on that one environment at its entry level. */
function bootstrapConfig(env: string, choice: BootstrapChoice): RunConfig {
  const config = structuredClone(DEFAULT_CONFIG);
  config.name = `bootstrap-${env}`;
  config.tasks.environments = [env];
  config.tasks.eval_items = choice.heldOutItems;
  config.training.max_steps = choice.grpoSteps;
  config.training.eval_interval = Math.max(1, choice.grpoSteps);
  return config;
}

/** What these operations need of the engine (the engine worker's remote on the page). */
export interface EnvironmentEngine {
  loadEnvironment(draft: EnvironmentDraft): Promise<EnvironmentLoad> | EnvironmentLoad;
  checkEnvironment(
    draft: EnvironmentDraft,
    checkId: string,
    onProgress: (line: string) => void,
  ): Promise<EnvironmentCheck>;
  cancelCheck(checkId: string): Promise<void> | void;
  readEnvironmentFile(content: Uint8Array | string, fileName: string): Promise<EnvironmentSource>;
  installEnvironments(sources: EnvironmentSource[]): Promise<{ name: string; error: string | null }[]>;
  describeEnvironments(): Promise<EngineEnvironmentInfo[]> | EngineEnvironmentInfo[];
  generateTask(env: string, seed: number, level: number, split: Split): Promise<Task> | Task;
  evaluateTrajectory(task: Task, trajectory: Trajectory): Promise<number | null>;
  bootstrap(request: EngineBootstrapRequest, onEvent: (event: BootstrapEvent) => void): Promise<BootstrapReport>;
  cancelBootstrap(): Promise<void> | void;
}

/** A stored environment in the screen's list; `status` is its last check: none yet, passed, or with problems. */
export interface EnvironmentSummary {
  name: string;
  kind: EnvironmentSource['kind'];
  file: string | null;
  updated: number;
  status: 'unchecked' | 'passed' | 'problems';
  problems: string[];
}

export interface BuiltinSummary {
  name: string;
  description: string;
  levels: number[];
}

/** Files the screen imports: environment modules, and task files. */
const IMPORTABLE = ['.js', '.mjs', '.jsonl', '.csv', '.tsv', '.parquet', '.json'] as const;

/** The user's stored environments as the Playground, Train and Trajectories see them, installed in the engine on demand. */
export function userEnvironments(getStore: () => Promise<Store>, engine: () => Partial<EnvironmentEngine>) {
  /** What the engine was given, by name: the record's `updated` (a newer save is sent again). */
  const sent = new Map<string, number>();
  const failed = new Map<string, string>();

  function need<K extends keyof EnvironmentEngine>(name: K): NonNullable<Partial<EnvironmentEngine>[K]> {
    const remote = engine();
    const method = remote[name];
    if (typeof method !== 'function') throw new Error('This engine cannot run your own environments.');
    return (method as (...args: unknown[]) => unknown).bind(remote) as NonNullable<Partial<EnvironmentEngine>[K]>;
  }

  async function records(): Promise<EnvironmentRecord[]> {
    return (await listEnvironmentRecords(await getStore())).filter((r) => !isBuiltinEnvironment(r.name));
  }

  async function install(list: EnvironmentRecord[]): Promise<void> {
    const todo = list.filter((r) => sent.get(r.name) !== r.updated);
    if (todo.length === 0) return;
    const results = await need('installEnvironments')(todo.map((r) => r.source));
    for (const [i, result] of results.entries()) {
      if (result.error === null) {
        sent.set(result.name, todo[i].updated);
        failed.delete(result.name);
      } else {
        failed.set(result.name, result.error);
      }
    }
  }

  return {
    /** True for a name that is not a built-in. */
    isUser: (name: string) => !isBuiltinEnvironment(name),
    async names(): Promise<string[]> {
      return (await records()).map((r) => r.name).sort();
    },
    /** The stored environments as the engine describes them once installed; those that failed to install are left out. */
    async describe(): Promise<EngineEnvironmentInfo[]> {
      const stored = await records();
      if (stored.length === 0) return [];
      await install(stored);
      const names = new Set(stored.map((r) => r.name));
      return (await need('describeEnvironments')())
        .filter((e) => names.has(e.name) && !failed.has(e.name))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    /** Installs one stored environment in the engine (if it is not already); throws naming the problem. */
    async ensure(name: string): Promise<EngineEnvironmentInfo> {
      const record = await getEnvironmentRecord(await getStore(), name);
      if (!record) throw new Error(`There is no environment "${name}" any more; pick another one.`);
      await install([record]);
      const error = failed.get(name);
      if (error)
        throw new Error(
          `Your environment ${name} could not be loaded: ${error}. Open it on the Environments screen and check it.`,
        );
      const info = (await need('describeEnvironments')()).find((e) => e.name === name);
      if (!info) throw new Error(`The engine did not install ${name}.`);
      return info;
    },
    generateTask: (env: string, seed: number, level: number, split: Split) =>
      Promise.resolve(need('generateTask')(env, seed, level, split)),
    /** The environment's own verifier, run in the engine. */
    evaluator(env: string) {
      return {
        name: env,
        evaluate: (task: Task, trajectory: Trajectory) => need('evaluateTrajectory')(task, trajectory),
      };
    },
  };
}

/** The stored sources of the user environments among `names` (what a new run of them carries). */
export async function storedSources(store: Store, names: readonly string[]): Promise<EnvironmentSource[]> {
  const records = await Promise.all(
    names.filter((n) => !isBuiltinEnvironment(n)).map((n) => getEnvironmentRecord(store, n)),
  );
  return records.flatMap((r) => (r ? [r.source] : []));
}

function summary(record: EnvironmentRecord): EnvironmentSummary {
  const problems = record.audit_problems ?? [];
  return {
    name: record.name,
    kind: record.source.kind,
    file: record.source.file,
    updated: record.updated,
    problems,
    status: record.audit_problems === null ? 'unchecked' : problems.length ? 'problems' : 'passed',
  };
}

/** A stored source as the editor's draft. */
function draftOf(source: EnvironmentSource | EnvironmentDraft): EnvironmentDraft {
  return source.kind === 'module' ? { kind: 'module', source: source.source, file: source.file } : source;
}

function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const stop = () => reject(signal.reason ?? new DOMException('The check was cancelled.', 'AbortError'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}

export function environmentOperations(getStore: () => Promise<Store>, engine: () => EnvironmentEngine) {
  const catalog = userEnvironments(getStore, engine);
  return {
    /** A complete environment with its own tools (examples/envs/treasure-hunt.js). */
    example: (): EnvironmentDraft => ({ kind: 'module', source: EXAMPLE_MODULE, file: 'treasure-hunt.js' }),
    /** What "New" starts from (examples/envs/starter.js). */
    starter: (): EnvironmentDraft => ({ kind: 'module', source: STARTER_MODULE, file: null }),

    async list(): Promise<{ user: EnvironmentSummary[]; builtins: BuiltinSummary[] }> {
      const stored = await listEnvironmentRecords(await getStore());
      return {
        user: stored
          .filter((r) => !isBuiltinEnvironment(r.name))
          .map(summary)
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
        builtins: describeEnvironments()
          .filter((e) => isBuiltinEnvironment(e.name))
          .map((e) => ({ name: e.name, description: e.description, levels: e.difficulties })),
      };
    },

    async open(name: string): Promise<EnvironmentDraft> {
      const record = await getEnvironmentRecord(await getStore(), name);
      if (!record) throw new Error(`There is no stored environment "${name}".`);
      return draftOf(record.source);
    },

    /** The live check in the engine, its progress through `onProgress`; `signal` cancels it there and rejects here at once. */
    async check(
      draft: EnvironmentDraft,
      onProgress: (line: string) => void,
      signal: AbortSignal,
    ): Promise<EnvironmentCheck> {
      signal.throwIfAborted();
      const checkId = `check-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const cancel = () => void engine().cancelCheck(checkId);
      signal.addEventListener('abort', cancel);
      try {
        return await Promise.race([
          engine().checkEnvironment(draft, checkId, Comlink.proxy(onProgress)),
          abortion(signal),
        ]);
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },

    /**
     * Stores the draft under the name its module gives (a draft that does not load is refused with its
     * problems) with the last check's problems (null: not checked), and installs it in the engine.
     */
    async save(
      draft: EnvironmentDraft,
      auditProblems: string[] | null,
    ): Promise<{ ok: true; summary: EnvironmentSummary } | EnvironmentFailure> {
      const loaded = await engine().loadEnvironment(draft);
      if (!loaded.ok) return loaded;
      const record = await putEnvironment(await getStore(), loaded.source, auditProblems);
      await catalog.ensure(record.name);
      return { ok: true, summary: summary(record) };
    },

    /** A dropped or picked file as a draft to check and save. */
    async importFile(file: { name: string; bytes: Uint8Array }): Promise<EnvironmentDraft> {
      const ext = file.name.slice(file.name.lastIndexOf('.')).toLowerCase();
      if (!(IMPORTABLE as readonly string[]).includes(ext))
        throw new Error(
          `${file.name}: import a JavaScript module (.js, .mjs) or a task file (.jsonl, .csv, .tsv, .parquet, .json)`,
        );
      // A module is only text until it is checked, so a broken one can be opened and fixed; a task file is read in the engine.
      if (ext === '.js' || ext === '.mjs')
        return { kind: 'module', source: new TextDecoder().decode(file.bytes), file: file.name };
      return draftOf(await engine().readEnvironmentFile(file.bytes, file.name));
    },

    /** A file at a URL (read with the bounds of every network read, environment-url.ts), then as a picked file. */
    async importUrl(url: string): Promise<{ draft: EnvironmentDraft; fileName: string }> {
      if (!isUrl(url.trim()))
        throw new Error(`"${url}" is not an http(s) URL; give the address of the .js module or task file itself`);
      const { bytes, fileName } = await fetchEnvironmentFile(url.trim());
      return { draft: await this.importFile({ name: fileName, bytes }), fileName };
    },

    /** The draft as a file to download: a module's source, or a task file's rows as JSONL. */
    exportFile(draft: EnvironmentDraft, name: string | null): { fileName: string; mime: string; text: string } {
      const base = name ?? draft.file?.replace(/\.[^.]*$/, '') ?? 'environment';
      if (draft.kind === 'module') return { fileName: `${base}.js`, mime: 'text/javascript', text: draft.source };
      return {
        fileName: `${base}.jsonl`,
        mime: 'application/jsonl',
        text: draft.rows.map((r) => JSON.stringify(r)).join('\n') + '\n',
      };
    },

    async remove(name: string): Promise<void> {
      await deleteEnvironmentRecord(await getStore(), name);
    },

    /**
     * The bootstrap flow (operations/bootstrap.ts) on a saved environment, run in the engine: its steps
     * through `onEvent`; `signal` stops it after the current step (the report then says how far it got).
     */
    async bootstrap(
      name: string,
      choice: BootstrapChoice,
      onEvent: (event: BootstrapEvent) => void,
      signal: AbortSignal,
    ): Promise<BootstrapReport> {
      signal.throwIfAborted();
      const store = await getStore();
      if (!isBuiltinEnvironment(name) && !(await getEnvironmentRecord(store, name)))
        throw new Error(`Save ${name} first: the bootstrap trains on a saved environment.`);
      const request: EngineBootstrapRequest = {
        config: bootstrapConfig(name, choice),
        environments: await storedSources(store, [name]),
        settings: {
          ...BOOTSTRAP_DEFAULTS,
          source: choice.source,
          demonstrations: choice.demonstrations,
          sftEpochs: choice.sftEpochs,
          sftLearningRate: choice.sftLearningRate,
        },
      };
      const cancel = () => void engine().cancelBootstrap();
      signal.addEventListener('abort', cancel);
      try {
        return await engine().bootstrap(request, Comlink.proxy(onEvent));
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },
  };
}
