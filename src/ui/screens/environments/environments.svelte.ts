/**
 * Environments screen state: the stored environments beside the built-ins, one draft in the editor
 * (a module's text, or an imported task file), its live check (progress, cancel, the audit or the
 * problems at their line), and save / import / export / delete. The screen never runs the module.
 */
import { errorMessage } from '../../lib/format.ts';
import { BOOTSTRAP_CHOICE } from '../../../pipeline/app/environments.ts';
import { BootstrapState } from './bootstrap.svelte.ts';
import type {
  BuiltinSummary,
  EnvironmentAudit,
  EnvironmentDraft,
  EnvironmentSummary,
  EnvironmentsSource,
} from './source.ts';
import { countOf } from '../../../rollout/success-interval.ts';

type TasksDraft = Extract<EnvironmentDraft, { kind: 'tasks' }>;

export type CheckPhase = 'idle' | 'checking' | 'passed' | 'problems' | 'failed' | 'cancelled';

/** A problem the editor marks: at its line when the module says which. */
export interface EditorError {
  line?: number;
  message: string;
}

const key = (draft: EnvironmentDraft) =>
  draft.kind === 'module' ? `m\u0000${draft.source}` : `t\u0000${JSON.stringify(draft)}`;

export class EnvironmentsState {
  user = $state<EnvironmentSummary[]>([]);
  builtins = $state<BuiltinSummary[]>([]);
  listError = $state<string | null>(null);

  /** The stored environment the draft was opened from (null: a new draft not saved yet). */
  selected = $state<string | null>(null);
  /** The module's text; for a task file, its rows as JSONL (read-only). */
  text = $state('');
  file = $state<string | null>(null);
  /** Set when the draft is a task file, not a module. */
  tasks = $state.raw<TasksDraft | null>(null);

  phase = $state<CheckPhase>('idle');
  progress = $state<string[]>([]);
  audit = $state.raw<EnvironmentAudit | null>(null);
  /** What kept the draft from loading (or the check from finishing), the first at `errorLine`. */
  problems = $state<string[]>([]);
  errorLine = $state<number | null>(null);
  /** The draft the last check was of: a save of the same draft keeps its problems. */
  private checkedKey: string | null = null;
  /** The environment name the last check or save found. */
  checkedName = $state<string | null>(null);

  note = $state<string | null>(null);
  actionError = $state<string | null>(null);
  saving = $state(false);
  confirmDelete = $state(false);

  private controller: AbortController | null = null;
  /** Offered when the check's policy solved none of its items (the audit's needsBootstrap). */
  readonly bootstrap: BootstrapState;

  constructor(private readonly source: EnvironmentsSource) {
    this.bootstrap = new BootstrapState(source, BOOTSTRAP_CHOICE);
  }

  readonly draft = $derived<EnvironmentDraft>(this.tasks ?? { kind: 'module', source: this.text, file: this.file });
  readonly readOnly = $derived(this.tasks !== null);
  readonly checking = $derived(this.phase === 'checking');
  /** The check shown is of an earlier text. */
  readonly stale = $derived(
    this.phase !== 'idle' &&
      this.phase !== 'checking' &&
      this.checkedKey !== null &&
      this.checkedKey !== key(this.draft),
  );
  readonly editorErrors = $derived<EditorError[]>(
    this.phase === 'failed'
      ? this.problems.map((message, i) => (i === 0 && this.errorLine ? { line: this.errorLine, message } : { message }))
      : [],
  );

  async load(): Promise<void> {
    await this.refresh();
    if (!this.text && !this.tasks) this.setDraft(this.source.starter(), null);
  }

  async refresh(): Promise<void> {
    try {
      ({ user: this.user, builtins: this.builtins } = await this.source.list());
      this.listError = null;
    } catch (err) {
      this.listError = errorMessage(err);
    }
  }

  setText(text: string): void {
    if (!this.readOnly) this.text = text;
  }

  newDraft(): void {
    this.setDraft(this.source.starter(), null);
  }

  loadExample(): void {
    this.setDraft(this.source.example(), null);
  }

  async open(name: string): Promise<void> {
    await this.act(async () => this.setDraft(await this.source.open(name), name));
  }

  async importFile(file: { name: string; bytes: Uint8Array }): Promise<void> {
    await this.act(async () => {
      this.setDraft(await this.source.importFile(file), null);
      this.note = `Imported ${file.name}: check it, then save it.`;
    });
  }

  async importUrl(url: string): Promise<void> {
    await this.act(async () => {
      const { draft, fileName } = await this.source.importUrl(url);
      this.setDraft(draft, null);
      this.note = `Imported ${fileName} from ${url}: check it, then save it.`;
    });
  }

  /** Forgets the last check's report and any message, before a new check or a new draft. */
  private clearReport(): void {
    this.progress = [];
    this.audit = null;
    this.problems = [];
    this.errorLine = null;
    this.note = null;
    this.actionError = null;
  }

  /** The live check in the engine; a later check or `cancel` stops the one running. */
  async check(): Promise<void> {
    this.cancel();
    const controller = new AbortController();
    this.controller = controller;
    const draft = $state.snapshot(this.draft) as EnvironmentDraft;
    this.phase = 'checking';
    this.clearReport();
    try {
      const onLine = (line: string) => {
        if (this.controller === controller) this.progress = nextProgress(this.progress, line);
      };
      const result = await this.source.check(draft, onLine, controller.signal);
      if (this.controller !== controller) return;
      this.checkedKey = key(draft);
      if (result.ok) {
        this.audit = result.audit;
        this.checkedName = result.source.name;
        this.phase = result.audit.problems.length ? 'problems' : 'passed';
      } else {
        this.problems = result.problems;
        this.errorLine = result.line;
        this.phase = 'failed';
      }
    } catch (err) {
      if (this.controller !== controller) return;
      if (controller.signal.aborted) this.phase = 'cancelled';
      else {
        this.problems = [errorMessage(err)];
        this.phase = 'failed';
      }
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  cancel(): void {
    if (!this.controller) return;
    this.controller.abort();
    this.controller = null;
    if (this.phase === 'checking') this.phase = 'cancelled';
  }

  /** Stores the draft; the last check's problems go with it when the check was of this very draft. */
  async save(): Promise<void> {
    const draft = $state.snapshot(this.draft) as EnvironmentDraft;
    const checked = this.checkedKey === key(draft) && this.audit ? this.audit.problems : null;
    this.saving = true;
    await this.act(async () => {
      const result = await this.source.save(draft, checked);
      if (!result.ok) {
        this.problems = result.problems;
        this.errorLine = result.line;
        this.phase = 'failed';
        this.checkedKey = key(draft);
        throw new Error('It was not saved: fix the problems shown, then save again.');
      }
      const { name, status, problems } = result.summary;
      this.selected = name;
      this.checkedName = name;
      await this.refresh();
      this.note = `Saved ${name}${status === 'unchecked' ? ' (not checked yet)' : status === 'problems' ? ` with ${countOf(problems.length, 'problem')}` : ''}: it is in the Playground's environment picker and Train's environment list.`;
    });
    this.saving = false;
  }

  /** The draft as a file to download (the screen makes the download). */
  exportFile(): { fileName: string; mime: string; text: string } {
    return this.source.exportFile($state.snapshot(this.draft) as EnvironmentDraft, this.selected ?? this.checkedName);
  }

  async remove(): Promise<void> {
    const name = this.selected;
    this.confirmDelete = false;
    if (!name) return;
    await this.act(async () => {
      await this.source.remove(name);
      this.selected = null;
      await this.refresh();
      this.note = `Deleted ${name}. Runs that used it keep their own copy.`;
    });
  }

  private setDraft(draft: EnvironmentDraft, selected: string | null): void {
    this.cancel();
    this.selected = selected;
    this.confirmDelete = false;
    this.file = draft.file;
    if (draft.kind === 'module') {
      this.tasks = null;
      this.text = draft.source;
    } else {
      this.tasks = draft;
      this.text = draft.rows.map((r) => JSON.stringify(r)).join('\n');
    }
    this.phase = 'idle';
    this.clearReport();
    this.checkedKey = null;
    this.checkedName = selected;
  }

  private async act(work: () => Promise<void>): Promise<void> {
    this.actionError = null;
    try {
      await work();
    } catch (err) {
      this.actionError = errorMessage(err);
    }
  }
}

/**
 * The check's lines after `line`: a step that is starting ("level 2: the expert on 8 tasks…") shows
 * while it runs and gives way to the next line, so the list keeps what finished and the step now running.
 */
export function nextProgress(lines: readonly string[], line: string): string[] {
  return lines.at(-1)?.endsWith('…') ? [...lines.slice(0, -1), line] : [...lines, line];
}
