/** `spindle collect --atropos URL` against the stand-in Atropos trajectory API server on 127.0.0.1. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeAtropos, type FakeAtropos } from '../export/atropos-server.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

let server: FakeAtropos | null = null;
afterEach(async () => { await server?.close(); server = null; });

describe('spindle collect --atropos', () => {
  it('registers the run as an env and streams every scored group, holding back while the trainer\'s queue is full', async () => {
    server = await startFakeAtropos({ started: true, batch_size: 2 });
    const dir = tempDir();
    // batch 1 group × 2 samples = 2 sequences per update; one update off-policy: at most one group waits in the queue.
    writeConfig(dir, tinyConfig((c) => { c.name = 'feed'; c.training.group_size = 2; c.trajectory_collection.max_offpolicy_updates = 1; }));
    const collecting = cli(dir, 'collect', '--config', 'run.yaml', '--groups', '3', '--policy', 'expert', '--group-size', '2', '--atropos', server.url);
    // With nobody training, the first group fills the allowance and the second waits, polling /status-env.
    const polls = () => server!.requests.filter((r) => r === 'GET /status-env').length;
    await vi.waitFor(() => expect(polls()).toBeGreaterThanOrEqual(4), { timeout: 20_000 });
    expect(server.queue).toHaveLength(1);
    const trainer = setInterval(() => server?.takeBatch(), 20);
    const result = await collecting;
    clearInterval(trainer);
    expect(result).toMatchObject({ code: 0 });
    expect(result.out).toMatch(new RegExp(`sent 3 scored groups to ${server.url}`));
    expect(server.envs).toEqual([{ desired_name: 'feed', group_size: 2 }]);
    expect(server.state.step + server.queue.length).toBe(3); // every group was trained on or is queued, once
  });
});
