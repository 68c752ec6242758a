/**
 * Importing files into the store. Every importer parses and validates the whole file first and
 * then writes in one transaction: a bad row means an ImportError and nothing written; records whose
 * id is already stored are skipped, never overwritten.
 */
import type { Trajectory } from '../contracts.ts';
import type { Store } from '../store/db.ts';
import { putTrajectories } from '../store/trajectories.ts';
import { putSkill } from '../store/skills.ts';
import { write } from '../store/db.ts';
import type { GroupRecord, SkillRecord } from '../store/records.ts';
import { ImportError } from './import-error.ts';
import { chatJsonlRows, chatRowToTrajectory } from './hf-chat.ts';
import { parquetToTrajectories } from './parquet.ts';
import { importJsonlRows, textOf } from './jsonl.ts';
import { checkTrajectory } from './validate.ts';
import { parseScoredGroupsJsonl } from './atropos.ts';
import { parseSkill } from './skills.ts';
import { jsonlEntries } from '../format/jsonl.ts';

export interface ImportFile {
  name: string;
  data: string | Uint8Array | ArrayBuffer;
}

export interface ImportResult {
  added: number;
  skipped: number;
}

export type TrajectoryFormat = 'parquet' | 'chat-jsonl' | 'trajectory-jsonl';

/** The first row's value, read alone (a large file is not split for it); null when it is no JSON. */
function firstRow(text: string): unknown {
  return jsonlEntries(text).next().value?.value ?? null;
}

/** Parquet by extension or magic bytes; JSONL rows with `steps` and `tokens` are full trajectories, others chat rows. */
export function detectTrajectoryFormat(file: ImportFile): TrajectoryFormat {
  if (file.name.endsWith('.parquet')) return 'parquet';
  if (typeof file.data !== 'string') {
    const bytes = file.data instanceof ArrayBuffer ? new Uint8Array(file.data) : file.data;
    if (bytes.byteLength >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === 'PAR1') return 'parquet';
  }
  const first = firstRow(textOf(file.data)) as Record<string, unknown> | null;
  return first && 'steps' in first && 'tokens' in first ? 'trajectory-jsonl' : 'chat-jsonl';
}

/** Reads and validates a trajectory file without touching the store. */
export async function readTrajectoryFile(
  file: ImportFile,
  format = detectTrajectoryFormat(file),
): Promise<Trajectory[]> {
  // Each with its row: a Parquet record's number, a JSONL row's line in the file.
  let rows: { row: number; trajectory: Trajectory }[];
  if (format === 'parquet') {
    if (typeof file.data === 'string')
      throw new ImportError(file.name, 'a Parquet file must be given as bytes, not text');
    rows = (await parquetToTrajectories(file.data, file.name)).map((trajectory, i) => ({ row: i + 1, trajectory }));
  } else if (format === 'trajectory-jsonl') {
    rows = importJsonlRows<Trajectory>(textOf(file.data), file.name, checkTrajectory).map((r) => ({
      row: r.line,
      trajectory: r.value,
    }));
  } else {
    rows = chatJsonlRows(file.data, file.name).map((r) => ({ row: r.line, trajectory: chatRowToTrajectory(r.value) }));
  }
  const rowOf = new Map<string, number>();
  for (const { row, trajectory: t } of rows) {
    const earlier = rowOf.get(t.id);
    if (earlier !== undefined)
      throw new ImportError(file.name, `id ${t.id} appears twice (rows ${earlier} and ${row})`, { row });
    rowOf.set(t.id, row);
  }
  return rows.map((r) => r.trajectory);
}

async function storedIds(store: Store, storeName: 'trajectories' | 'groups', ids: string[]): Promise<Set<string>> {
  const tx = store.db.transaction(storeName);
  const keys = await Promise.all(ids.map((id) => tx.objectStore(storeName).getKey(id)));
  return new Set(ids.filter((_, i) => keys[i] !== undefined));
}

/** Imports trajectories (Parquet, full-trajectory JSONL or HF chat JSONL) in one transaction. */
export async function importTrajectories(
  store: Store,
  file: ImportFile,
  format?: TrajectoryFormat,
): Promise<ImportResult> {
  const trajectories = await readTrajectoryFile(file, format);
  const existing = await storedIds(
    store,
    'trajectories',
    trajectories.map((t) => t.id),
  );
  const fresh = trajectories.filter((t) => !existing.has(t.id));
  await putTrajectories(store, fresh);
  return { added: fresh.length, skipped: existing.size };
}

/**
 * Imports Atropos ScoredDataGroup JSONL as groups of `runId` (ids `<file>#<line>`), one transaction.
 * The groups carry no trajectories; they feed the trainer, SFT/DPO export and Atropos replay.
 */
export async function importScoredGroups(
  store: Store,
  file: ImportFile,
  runId: string | null = null,
): Promise<ImportResult> {
  const groups = parseScoredGroupsJsonl(file.data, file.name);
  const records: GroupRecord[] = groups.map((scored, i) => ({
    id: `${file.name}#${i + 1}`,
    run_id: runId,
    step: -1,
    env: 'imported',
    task_id: `${file.name}#${i + 1}`,
    trajectory_ids: [],
    scored,
    created_at: Date.now(),
  }));
  const existing = await storedIds(
    store,
    'groups',
    records.map((r) => r.id),
  );
  const fresh = records.filter((r) => !existing.has(r.id));
  if (fresh.length) {
    await write(store, ['groups'], `${fresh.length} groups from ${file.name}`, async (tx) => {
      for (const r of fresh) await tx.objectStore('groups').put(r);
    });
  }
  return { added: fresh.length, skipped: existing.size };
}

/** Imports a skill document; an existing skill of the same name is kept (skipped). */
export async function importSkill(store: Store, file: ImportFile): Promise<ImportResult & { skill: SkillRecord }> {
  const skill = parseSkill(textOf(file.data), file.name);
  if (await store.db.getKey('skills', skill.name)) return { added: 0, skipped: 1, skill };
  await putSkill(store, skill);
  return { added: 1, skipped: 0, skill };
}
