import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openStore,
  putTrajectory,
  getTrajectory,
  countTrajectories,
  listGroups,
  type Store,
} from '../../src/store/index.ts';
import { importTrajectories, importScoredGroups, importSkill } from '../../src/export/import.ts';
import { ImportError } from '../../src/export/import-error.ts';
import { toJsonl } from '../../src/export/jsonl.ts';
import { trajectoryToChatRow } from '../../src/export/hf-chat.ts';
import { toOpenAiMessages } from '../../src/format/openai-messages.ts';
import { trajectoriesToParquet } from '../../src/export/parquet.ts';
import { scoredGroupFromTrajectories, scoredGroupsToJsonl } from '../../src/export/atropos.ts';
import { makeTrajectory } from '../store/fixtures.ts';

const stores: Store[] = [];
async function storeWithOne() {
  const store = await openStore({ factory: new IDBFactory() });
  stores.push(store);
  const existing = makeTrajectory({ judge_score: 0.1 });
  await putTrajectory(store, existing);
  return { store, existing };
}
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function expectNothingImported(store: Store, existing: { id: string }, run: Promise<unknown>, pattern: RegExp) {
  const error = await run.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ImportError);
  expect((error as Error).message).toMatch(pattern);
  expect((error as Error).message).toMatch(/Nothing was imported\.$/);
  expect(await countTrajectories(store)).toBe(1);
  expect(await getTrajectory(store, existing.id)).toBeDefined();
}

describe('importing trajectories', () => {
  it('imports Parquet, full-trajectory JSONL and chat JSONL, skipping ids already stored', async () => {
    const { store, existing } = await storeWithOne();
    const changed = { ...existing, judge_score: 0.9 };
    const fresh = [makeTrajectory(), makeTrajectory()];
    expect(
      await importTrajectories(store, { name: 'a.parquet', data: await trajectoriesToParquet([changed, ...fresh]) }),
    ).toEqual({ added: 2, skipped: 1 });
    expect((await getTrajectory(store, existing.id))?.judge_score).toBe(0.1); // existing data untouched
    expect(await getTrajectory(store, fresh[1].id)).toEqual(fresh[1]);
    const more = makeTrajectory();
    expect(await importTrajectories(store, { name: 'b.jsonl', data: toJsonl([more]) })).toEqual({
      added: 1,
      skipped: 0,
    });
    expect(await getTrajectory(store, more.id)).toEqual(more);
    const chat = makeTrajectory();
    expect(await importTrajectories(store, { name: 'c.jsonl', data: toJsonl([trajectoryToChatRow(chat)]) })).toEqual({
      added: 1,
      skipped: 0,
    });
    expect(toOpenAiMessages((await getTrajectory(store, chat.id))!.messages)).toEqual(toOpenAiMessages(chat.messages));
  });

  it('a corrupt JSONL line: names the file and line, imports nothing', async () => {
    const { store, existing } = await storeWithOne();
    const text = toJsonl([makeTrajectory(), makeTrajectory()]) + '{"id": "x", "steps": [\n';
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'broken.jsonl', data: text }, 'trajectory-jsonl'),
      /^broken\.jsonl: row 3: not valid JSON/,
    );
  });

  it('a wrong schema: names the row and the field', async () => {
    const { store, existing } = await storeWithOne();
    const bad = { ...makeTrajectory(), judge_score: 7 };
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'w.jsonl', data: toJsonl([makeTrajectory(), bad]) }),
      /^w\.jsonl: row 2: judge_score must be a number in \[0, 1\] or null/,
    );
    const chat = toJsonl([{ messages: [{ role: 'robot', content: 'x' }] }]);
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'chat.jsonl', data: chat }),
      /chat\.jsonl: row 1: messages\[0\]\.role must be one of/,
    );
    const mismatch = { ...makeTrajectory(), logprobs: [0] };
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'm.jsonl', data: toJsonl([mismatch]) }),
      /row 1: tokens, assistant_mask and logprobs must have the same length/,
    );
  });

  it('duplicate ids inside one file are an error, not a silent overwrite', async () => {
    const { store, existing } = await storeWithOne();
    const t = makeTrajectory();
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'd.jsonl', data: toJsonl([t, makeTrajectory(), t]) }),
      /row 3: id .* appears twice \(rows 1 and 3\)/,
    );
    // A JSONL row is named by its line in the file, blank lines counted.
    const spaced = `\n${toJsonl([t])}\n${toJsonl([t])}`;
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 's.jsonl', data: spaced }),
      /^s\.jsonl: row 4: id .* appears twice \(rows 2 and 4\)/,
    );
  });

  it('a truncated Parquet file: names the file and says truncated', async () => {
    const { store, existing } = await storeWithOne();
    const bytes = await trajectoriesToParquet([makeTrajectory(), makeTrajectory()]);
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'cut.parquet', data: bytes.subarray(0, bytes.byteLength - 100) }),
      /^cut\.parquet: not a readable Parquet file, or truncated/,
    );
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'tiny.parquet', data: bytes.subarray(0, 3) }),
      /^tiny\.parquet: .*truncated/,
    );
  });

  it('a Parquet file of something else: names the missing columns', async () => {
    const { store, existing } = await storeWithOne();
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    const other = new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'id', data: ['a'], type: 'STRING' }] }));
    await expectNothingImported(
      store,
      existing,
      importTrajectories(store, { name: 'other.parquet', data: other }),
      /other\.parquet: missing columns run_id, group_id/,
    );
  });
});

describe('importing scored groups and skills', () => {
  it('imports Atropos groups; a group with mismatched lengths names the row', async () => {
    const { store } = await storeWithOne();
    const g = scoredGroupFromTrajectories([makeTrajectory(), makeTrajectory()]);
    expect(await importScoredGroups(store, { name: 'g.jsonl', data: scoredGroupsToJsonl([g]) }, 'run-x')).toEqual({
      added: 1,
      skipped: 0,
    });
    expect((await listGroups(store, 'run-x'))[0].scored).toEqual(g);
    const bad = scoredGroupsToJsonl([g]) + JSON.stringify({ ...g, masks: [g.masks[0]] }) + '\n';
    const error = await importScoredGroups(store, { name: 'bad.jsonl', data: bad }, 'run-y').catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^bad\.jsonl: row 2: masks must be 2 lists/);
    expect(await listGroups(store, 'run-y')).toEqual([]);
    const renamed = JSON.stringify({ tokens: [[1]], masks: [[1]], score: [1], scores: [1] });
    expect(
      ((await importScoredGroups(store, { name: 'r.jsonl', data: renamed }).catch((e: unknown) => e)) as Error).message,
    ).toMatch(/row 1: unknown field score/);
  });

  it('a skill without a name is refused with the field named', async () => {
    const { store } = await storeWithOne();
    const error = await importSkill(store, { name: 'x.md', data: '---\ndescription: d\n---\nbody' }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe('x.md: field name: name must be a non-empty string. Nothing was imported.');
  });
});

describe('exports from the store', () => {
  it('streams chat JSONL and Parquet of a filtered selection, and round-trips groups to SFT/DPO', async () => {
    const { exportChatJsonl, exportParquet, exportScoredGroupsJsonl, exportSftJsonl, exportDpoJsonl } =
      await import('../../src/export/from-store.ts');
    const { parquetToTrajectories } = await import('../../src/export/parquet.ts');
    const { putScoredGroup } = await import('../../src/store/index.ts');
    const { store, existing } = await storeWithOne();
    const hi = makeTrajectory({ judge_score: 0.9, group_id: 'gg' });
    const lo = makeTrajectory({ judge_score: 0.2, group_id: 'gg' });
    await putTrajectory(store, hi);
    await putTrajectory(store, lo);
    let text = '';
    for await (const chunk of exportChatJsonl(store, { min_score: 0.5 })) text += chunk;
    expect(text).toBe(toJsonl([trajectoryToChatRow(hi)]));
    // Chat JSONL is SFT data: a held-out episode is left out unless asked for.
    const heldOut = makeTrajectory({ judge_score: 0.95, split: 'test' });
    await putTrajectory(store, heldOut);
    let train = '';
    for await (const chunk of exportChatJsonl(store, { min_score: 0.5 })) train += chunk;
    expect(train).toBe(text);
    let all = '';
    for await (const chunk of exportChatJsonl(store, { min_score: 0.5 }, { includeHeldOut: true })) all += chunk;
    expect(all.trim().split('\n')).toHaveLength(2);
    await store.db.delete('trajectories', heldOut.id);
    expect(await parquetToTrajectories(await exportParquet(store, { max_score: 0.5 }), 'x.parquet')).toEqual([
      existing,
      lo,
    ]);
    await putScoredGroup(store, {
      group_id: 'gg',
      run_id: 'run-a',
      step: 1,
      env: hi.env,
      task_id: hi.task_id,
      scored: scoredGroupFromTrajectories([hi, lo]),
    });
    const groupsText = await exportScoredGroupsJsonl(store, 'run-a');
    expect(groupsText.trim().split('\n').length).toBe(1);
    expect(JSON.parse(await exportSftJsonl(store, 'run-a', { topN: 1 })).score).toBe(0.9);
    expect(JSON.parse(await exportDpoJsonl(store, 'run-a', { minScoreGap: 0.5 }))).toMatchObject({
      score: 0.9,
      neg_score: 0.2,
    });
  });
});
