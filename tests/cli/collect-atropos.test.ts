/**
 * `spindle collect --atropos URL` against the stand-in Atropos trajectory API server on 127.0.0.1: it
 * streams every group at the trainer's pace, the first Ctrl-C (the signal) stops a wait on the server
 * at once, and the report says what the server got, with a non-zero exit unless it got every group.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeAtropos, type FakeAtropos } from '../export/atropos-server.ts';
import { cli, cliWithSignal, tempDir, tinyConfig, writeConfig } from './helpers.ts';

let server: FakeAtropos | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('spindle collect --atropos', () => {
  it("registers the run as an env and streams every scored group, holding back while the trainer's queue is full", async () => {
    server = await startFakeAtropos({ started: true, batch_size: 2 });
    const dir = tempDir();
    // batch 1 group × 2 samples = 2 sequences per update; one update off-policy: at most one group waits in the queue.
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.name = 'feed';
        c.training.group_size = 2;
        c.trajectory_collection.max_offpolicy_updates = 1;
      }),
    );
    const collecting = cli(
      dir,
      'collect',
      '--config',
      'run.yaml',
      '--groups',
      '3',
      '--policy',
      'expert',
      '--group-size',
      '2',
      '--atropos',
      server.url,
    );
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

  // A batch of 4 groups: the two groups sent fit in the trainer's queue, so nothing waits for room.
  const feedConfig = (dir: string) =>
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.name = 'feed';
        c.training.group_size = 2;
        c.training.batch_size = 4;
      }),
    );

  it('the first Ctrl-C stops the wait for a trainer that never starts, and the exit code says the group was not sent', async () => {
    server = await startFakeAtropos({ started: false }); // answers "wait for trainer to start" forever
    const dir = tempDir();
    feedConfig(dir);
    const stop = new AbortController();
    const collecting = cliWithSignal(
      stop.signal,
      dir,
      'collect',
      '--config',
      'run.yaml',
      '--groups',
      '3',
      '--policy',
      'expert',
      '--group-size',
      '2',
      '--atropos',
      server.url,
    );
    await server.seen('POST /register-env');
    stop.abort();
    const result = await collecting;
    expect(result.code).toBe(1);
    expect(result.out).toContain('interrupted: kept the 1 finished groups');
    expect(result.err).toMatch(
      new RegExp(
        `spindle: Atropos at ${server.url} took 0 of 1 scored groups: 1 not sent; interrupted while (registering with Atropos|waiting for the Atropos trainer to start)\\. Every collected group is also stored with the run`,
      ),
    );
    expect(server.envs).toEqual([]);
  });

  it('a server that drops every post after queuing it, with no /latest_example: the groups are reported unknown, not sent, and the exit is 1', async () => {
    server = await startFakeAtropos({ started: true, drop: 'after-queue', latestExample: false });
    const dir = tempDir();
    feedConfig(dir);
    const result = await cli(
      dir,
      'collect',
      '--config',
      'run.yaml',
      '--groups',
      '2',
      '--policy',
      'expert',
      '--group-size',
      '2',
      '--atropos',
      server.url,
    );
    expect(result.code).toBe(1);
    expect(result.out).toContain('4 trajectories in 2 groups');
    expect(result.err).toMatch(
      /took 0 of 2 scored groups: 2 unknown \(the answer to their post was lost or never came; they may have landed, and are not sent again\)\./,
    );
    expect(server.queue).toHaveLength(2); // they did land, once each; the client could not know
  });
});
