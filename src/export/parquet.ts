/**
 * Trajectories as Parquet (`spindle export trajectories --format parquet`), written with
 * hyparquet-writer in row groups so the source can be a stream. Scalars are typed columns; nested
 * data (messages, steps, tokens, …) are JSON text in UTF-8 string columns, which every Parquet reader
 * (pandas, DuckDB, datasets) loads as strings. Full fidelity: a trajectory read back is equal to the
 * one written. Schema in docs/formats.md § Parquet.
 */
import { ByteWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import type { Trajectory } from '../contracts.ts';
import { ImportError } from './import-error.ts';
import { checkTrajectory } from './validate.ts';

export const PARQUET_SCHEMA_ID = 'spindle.trajectory/1';

type Kind = 'STRING' | 'BOOLEAN' | 'DOUBLE' | 'INT32' | 'INT64';
interface Column {
  name: string;
  kind: Kind;
  get(t: Trajectory): unknown;
  json?: true;
}

const json = (name: keyof Trajectory): Column => ({
  name,
  kind: 'STRING',
  json: true,
  get: (t) => JSON.stringify(t[name]),
});

/** The columns, in file order. */
export const PARQUET_COLUMNS: Column[] = [
  { name: 'id', kind: 'STRING', get: (t) => t.id },
  { name: 'run_id', kind: 'STRING', get: (t) => t.run_id },
  { name: 'group_id', kind: 'STRING', get: (t) => t.group_id },
  { name: 'env', kind: 'STRING', get: (t) => t.env },
  { name: 'task_id', kind: 'STRING', get: (t) => t.task_id },
  { name: 'split', kind: 'STRING', get: (t) => t.split },
  { name: 'difficulty', kind: 'INT32', get: (t) => t.difficulty },
  { name: 'seed', kind: 'INT64', get: (t) => BigInt(t.seed) },
  { name: 'model_id', kind: 'STRING', get: (t) => t.model_id },
  { name: 'task_description', kind: 'STRING', get: (t) => t.task_description },
  { name: 'final_response', kind: 'STRING', get: (t) => t.final_response },
  { name: 'success', kind: 'BOOLEAN', get: (t) => t.success },
  { name: 'judge_score', kind: 'DOUBLE', get: (t) => t.judge_score },
  { name: 'n_steps', kind: 'INT32', get: (t) => t.steps.length },
  { name: 'token_count', kind: 'INT32', get: (t) => t.token_count },
  { name: 'wall_time_seconds', kind: 'DOUBLE', get: (t) => t.wall_time_seconds },
  { name: 'finish_reason', kind: 'STRING', get: (t) => t.finish_reason },
  { name: 'created_at', kind: 'INT64', get: (t) => BigInt(t.created_at) },
  json('messages'),
  json('tools'),
  json('steps'),
  json('tokens'),
  json('assistant_mask'),
  json('logprobs'),
  json('turn_spans'),
  json('votes'),
  json('sampling'),
];

function columnData(batch: Trajectory[]): ColumnSource[] {
  return PARQUET_COLUMNS.map((c) => ({
    name: c.name,
    data: batch.map((t) => c.get(t)) as ColumnSource['data'],
    type: c.kind,
    nullable: true,
  }));
}

/** Writes trajectories (an array or a stream) to Parquet bytes, `rowGroupSize` rows per row group. */
export async function trajectoriesToParquet(
  source: Iterable<Trajectory> | AsyncIterable<Trajectory>,
  rowGroupSize = 1000,
): Promise<Uint8Array> {
  const writer = new ByteWriter();
  const schema = schemaFromColumnData({ columnData: columnData([]) });
  const pq = new ParquetWriter({
    writer,
    schema,
    createdBy: 'spindle',
    kvMetadata: [{ key: 'spindle.schema', value: PARQUET_SCHEMA_ID }],
  });
  let batch: Trajectory[] = [];
  const flush = () => {
    if (!batch.length) return;
    pq.write({ columnData: columnData(batch).map(({ name, data }) => ({ name, data })), rowGroupSize: batch.length });
    batch = [];
  };
  for await (const t of source) {
    batch.push(t);
    if (batch.length >= rowGroupSize) flush();
  }
  flush();
  pq.finish();
  return new Uint8Array(writer.getBuffer());
}

function toArrayBuffer(data: Uint8Array | ArrayBuffer): ArrayBuffer {
  if (data instanceof ArrayBuffer) return data;
  return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
}

/** Reads and validates a trajectory Parquet file; throws an ImportError before returning anything. */
export async function parquetToTrajectories(data: Uint8Array | ArrayBuffer, file: string): Promise<Trajectory[]> {
  const buffer = toArrayBuffer(data);
  let metadata;
  try {
    metadata = parquetMetadata(buffer);
  } catch (e) {
    throw new ImportError(
      file,
      `not a readable Parquet file, or truncated (${(e as Error).message})`,
      {},
      { cause: e },
    );
  }
  const present = new Set(metadata.schema.slice(1).map((s) => s.name));
  const missing = PARQUET_COLUMNS.filter((c) => !present.has(c.name)).map((c) => c.name);
  if (missing.length)
    throw new ImportError(
      file,
      `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: not a Spindle trajectory file (schema ${PARQUET_SCHEMA_ID})`,
    );
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: buffer, metadata, columns: PARQUET_COLUMNS.map((c) => c.name) });
  } catch (e) {
    throw new ImportError(
      file,
      `the data pages cannot be decoded, the file may be truncated or corrupt (${(e as Error).message})`,
      {},
      { cause: e },
    );
  }
  return rows.map((row, i) => {
    const t: Record<string, unknown> = {};
    for (const c of PARQUET_COLUMNS) {
      if (c.name === 'n_steps') continue;
      let v = row[c.name];
      if (typeof v === 'bigint') v = Number(v);
      if (c.json) {
        try {
          v = JSON.parse(v as string);
        } catch {
          throw new ImportError(file, `column ${c.name} does not hold valid JSON`, { row: i + 1 });
        }
      }
      t[c.name] = v ?? null;
    }
    const problem = checkTrajectory(t);
    if (problem) throw new ImportError(file, problem, { row: i + 1 });
    return t as unknown as Trajectory;
  });
}
