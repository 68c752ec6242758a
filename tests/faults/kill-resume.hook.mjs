// Preloaded (`node --import`) into the `spindle train` processes that tests/faults/kill-resume.slow.test.ts
// kills. It changes nothing the command does; on the main thread it
//   - reports on stderr, as `spindle-test: …` lines, the moments the test aims its SIGKILLs at: every
//     rollout or evaluation episode handed to a rollout worker (`episode <id without the run id>`) and
//     each phase of every store snapshot save (`save <n> head <step> ckpts <steps> [staged] <run status> <phase>`,
//     phases torn → written → unrenamed → renamed; see src/store/file-store.ts);
//   - when SPINDLE_KILL_TEST_FREEZE holds a JSON list of regular expressions, freezes the process at
//     the first event (one of its own, or a line the command writes to stderr) that matches the last
//     of them after the others matched in order, saying `spindle-test: frozen at …`. The test then kills
//     it there: the kill lands at that exact moment, whatever the machine's speed. Frozen at `torn`,
//     the temporary snapshot holds only the first half of its bytes.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { isMainThread, Worker } from 'node:worker_threads';

if (isMainThread) {
  const writeSync = fs.writeSync;
  const patterns = JSON.parse(process.env.SPINDLE_KILL_TEST_FREEZE || '[]').map((p) => new RegExp(p));
  let matched = 0;
  const say = (text) => writeSync(2, `spindle-test: ${text}\n`);
  const freezes = (event) => matched === patterns.length - 1 && patterns[matched].test(event);
  const freeze = (event) => {
    say(`frozen at ${event}`);
    // The test kills the process now; should it never come to that, the process is not left behind.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
    process.kill(process.pid, 'SIGKILL');
  };
  /** An event: told (when `tell`), then checked against the freeze patterns. */
  const note = (event, tell = true) => {
    if (tell) say(event);
    if (matched < patterns.length && patterns[matched].test(event) && ++matched === patterns.length) freeze(event);
  };

  // Lines the command writes to stderr (progress, evaluations) are events too.
  const stderrWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk, ...rest) => {
    const result = stderrWrite(chunk, ...rest);
    for (const line of String(chunk).split('\n')) if (line.trim()) note(line, false);
    return result;
  };

  // Episodes: the job a rollout worker is sent over comlink (its first argument) carries the trajectory id.
  const postMessage = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, transfer) {
    const result = postMessage.call(this, message, transfer);
    const id = message?.argumentList?.[0]?.value?.trajectory_id;
    if (typeof id === 'string') note(`episode ${id.replace(/^run-[^/]+\//, '')}`);
    return result;
  };

  // Snapshot saves: `spindle.db.tmp-<pid>` opened, written, renamed over `spindle.db`.
  const TEMP = /spindle\.db\.tmp-\d+$/;
  const saves = new Map(); // fd → label
  const byPath = new Map(); // temp path → label
  let saveNo = 0;
  /**
   * What a snapshot holds, from its JSON header: the checkpoint head's step, the steps of the checkpoint
   * records (`staged` when one is not committed yet: a step beyond the head's) and the run's status.
   */
  const describe = (bytes) => {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1 << 20)).toString('latin1');
    const step = (id) => Number(/^ckpt-run-[a-z0-9]+-[0-9a-f]{8}-(\d+)-/.exec(id)?.[1] ?? NaN);
    const headId = /"checkpoint_heads":\[[^\]]*?"latest":"([^"]+)"/.exec(text)?.[1];
    const head = headId ? step(headId) : 0;
    const records = /"checkpoints":\[(.*?)\],"environments"/s.exec(text)?.[1] ?? '';
    const steps = [...records.matchAll(/"id":"(ckpt-[^"]+)"/g)].map((m) => step(m[1]));
    const runs = text.indexOf('"runs":[');
    const status = runs < 0 ? 'no-run' : (/"status":"(\w+)"/.exec(text.slice(runs))?.[1] ?? '?');
    return `head ${head} ckpts ${steps.join(',') || '-'}${steps.some((s) => s > head) ? ' staged' : ''} ${status}`;
  };

  const { openSync, writeSync: fsWriteSync, renameSync, closeSync } = fs;
  fs.openSync = function (path, ...rest) {
    const fd = openSync.call(this, path, ...rest);
    if (typeof path === 'string' && TEMP.test(path)) {
      saves.set(fd, { path, label: `save ${++saveNo}` });
    }
    return fd;
  };
  fs.writeSync = function (fd, data, ...rest) {
    const save = saves.get(fd);
    // A save writes the whole snapshot from offset 0 (continuing after a short write, which a test disk never makes).
    if (!save || !(data instanceof Uint8Array) || (rest[0] ?? 0) !== 0)
      return fsWriteSync.call(this, fd, data, ...rest);
    save.label += ` ${describe(data)}`;
    byPath.set(save.path, save.label);
    const torn = `${save.label} torn`;
    if (freezes(torn)) fsWriteSync.call(this, fd, data, 0, data.byteLength >> 1); // the note below freezes
    note(torn);
    const written = fsWriteSync.call(this, fd, data, ...rest);
    note(`${save.label} written`);
    return written;
  };
  fs.closeSync = function (fd) {
    saves.delete(fd);
    return closeSync.call(this, fd);
  };
  fs.renameSync = function (from, to) {
    const label = typeof from === 'string' ? byPath.get(from) : undefined;
    if (!label) return renameSync.call(this, from, to);
    byPath.delete(from);
    note(`${label} unrenamed`);
    const result = renameSync.call(this, from, to);
    note(`${label} renamed`);
    return result;
  };
  syncBuiltinESMExports();
}
