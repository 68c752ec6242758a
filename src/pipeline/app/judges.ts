/**
 * The Judges screen's operations over the settings store: the remote judges as `judges.remotes`, each
 * key as `secret.<judge id>` (the name a run config's `api_key_env` points at), the in-browser switch as
 * `judges.in_browser`; connection tests and calibration: a judge scored against a labelled set, its fitted
 * map saved for runs as `judges.calibration` (which the Train screen's config takes in, judge-settings.ts),
 * and those maps saved as a calibration file and loaded back (the file `spindle calibrate` writes and
 * `--calibration` reads). Keys never leave this browser except in requests to their own endpoint.
 */
import type { CalibrationMap } from '../../config/schema.ts';
import type { CalibrationItem } from '../../contracts.ts';
import { krippendorffAlphaInterval, meanAbsoluteError, spearman } from '../../judge/agreement.ts';
import { calibrate, type CalibratableJudge } from '../../judge/calibrate.ts';
import { RemoteGroupJudge } from '../../judge/group-judge.ts';
import { RemoteJudge } from '../../judge/remote.ts';
import { RubricJudge } from '../../judge/rubric.ts';
import { RuleJudge } from '../../judge/rule.ts';
import { deleteSetting, getSetting, setSetting, type Store } from '../../store/index.ts';
import { loadBrowserModelJudge } from '../platform/browser-judges.ts';
import { calibrationFileOf, readCalibrationFile } from '../operations/calibration.ts';
import {
  CALIBRATION_SETTING as CALIBRATION,
  IN_BROWSER_JUDGE,
  IN_BROWSER_JUDGE_SETTING as IN_BROWSER,
  REMOTE_JUDGES_SETTING as REMOTES,
  type JudgeSwitches,
} from '../operations/judge-settings.ts';

/** A saved remote judge as the settings store holds it (whether a key is saved is asked separately). */
type StoredRemote = Omit<JudgeSwitches['remotes'][number], 'hasKey'>;
const secretName = (id: string) => `secret.${id}`;

async function remotes(store: Store): Promise<StoredRemote[]> {
  return getSetting<StoredRemote[]>(store, REMOTES, []);
}

async function savedMaps(store: Store): Promise<Record<string, CalibrationMap>> {
  return getSetting<Record<string, CalibrationMap>>(store, CALIBRATION, {});
}

async function key(store: Store, id: string): Promise<string | null> {
  return getSetting<string | null>(store, secretName(id), null);
}

/** Turns a failed fetch into a sentence that says what to check. */
function connectionError(err: unknown, url: string): Error {
  if (err instanceof DOMException && err.name === 'TimeoutError')
    return new Error(`No answer from ${url} within 15 s.`);
  if (err instanceof TypeError)
    return new Error(
      `Could not reach ${url}: the server is down, the address is wrong, or it does not allow requests from this page (CORS).`,
    );
  return err instanceof Error ? err : new Error(String(err));
}

export function judgeOperations(getStore: () => Promise<Store>) {
  return {
    async load() {
      const store = await getStore();
      const list = await remotes(store);
      const withKeys = await Promise.all(list.map(async (r) => ({ ...r, hasKey: (await key(store, r.id)) !== null })));
      return {
        remotes: withKeys,
        inBrowser: { enabled: await getSetting(store, IN_BROWSER, false), unavailable: null },
        // Every judge a run can have: the rule judge, the in-browser one (switched on or not), each saved remote.
        calibratable: ['rule', IN_BROWSER_JUDGE.id, ...list.map((r) => r.id)],
        calibrated: Object.keys(await savedMaps(store)),
      };
    },
    async saveRemote(settings: StoredRemote, apiKey: string | null) {
      const store = await getStore();
      await setSetting(store, REMOTES, [...(await remotes(store)).filter((r) => r.id !== settings.id), settings]);
      if (apiKey) await setSetting(store, secretName(settings.id), apiKey);
    },
    async removeRemote(id: string) {
      const store = await getStore();
      await setSetting(
        store,
        REMOTES,
        (await remotes(store)).filter((r) => r.id !== id),
      );
      await deleteSetting(store, secretName(id));
    },
    async forgetKey(id: string) {
      await deleteSetting(await getStore(), secretName(id));
    },
    async setInBrowser(enabled: boolean) {
      await setSetting(await getStore(), IN_BROWSER, enabled);
    },
    async testConnection(settings: StoredRemote, apiKey: string | null) {
      const secret = apiKey ?? (await key(await getStore(), settings.id));
      const url = `${settings.base_url.replace(/\/$/, '')}/chat/completions`;
      const started = performance.now();
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
          body: JSON.stringify({
            model: settings.model,
            messages: [{ role: 'user', content: 'Reply with the word ok.' }],
            max_tokens: 5,
            temperature: 0,
          }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (err) {
        throw connectionError(err, settings.base_url);
      }
      const latency_ms = performance.now() - started;
      const body = await response.text();
      if (response.status === 401 || response.status === 403)
        throw new Error(`The server refused the key (HTTP ${response.status}). Check or replace the API key.`);
      if (response.status === 404)
        throw new Error(`HTTP 404: the URL should end in /v1 and the model "${settings.model}" must exist there.`);
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.slice(0, 200)}`);
      let reply: string;
      try {
        reply =
          (JSON.parse(body) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content ?? '';
      } catch {
        throw new Error(
          'The server answered, but not with OpenAI-compatible JSON. Is this a chat-completions endpoint?',
        );
      }
      return { latency_ms, reply: reply.slice(0, 80) };
    },
    async calibrate(
      judgeId: string,
      items: CalibrationItem[],
      onProgress: (done: number, total: number) => void,
      signal: AbortSignal,
    ) {
      let judge: CalibratableJudge;
      if (judgeId === 'rule') judge = new RuleJudge({ id: 'rule' });
      else if (judgeId === IN_BROWSER_JUDGE.id)
        judge = await loadBrowserModelJudge(IN_BROWSER_JUDGE.id, IN_BROWSER_JUDGE.path);
      else {
        const store = await getStore();
        const r = (await remotes(store)).find((x) => x.id === judgeId);
        if (!r) throw new Error(`No judge "${judgeId}"; save it first.`);
        const endpoint = { id: r.id, baseUrl: r.base_url, model: r.model, apiKey: await key(store, r.id) };
        // A group judge is calibrated on the items grouped by task (judge/calibrate.ts), as it judges in runs.
        judge =
          r.kind === 'rubric'
            ? new RubricJudge({ ...endpoint, criteria: r.criteria ?? [], scale: r.scale ?? 10 })
            : r.kind === 'group'
              ? new RemoteGroupJudge({ ...endpoint, rubric: r.rubric || undefined })
              : new RemoteJudge(endpoint);
      }
      const { report, votes } = await calibrate([judge], items, {
        onItem: (done, total) => {
          signal.throwIfAborted();
          onProgress(done, total);
        },
      });
      const agreement = report.judges[0];
      const raw = votes.map((v) => v[0]?.score ?? null);
      const scoredGold = items.filter((_, i) => raw[i] !== null).map((it) => it.gold);
      const scoredRaw = raw.filter((s): s is number => s !== null);
      return {
        n: items.length,
        scored: agreement?.n ?? scoredRaw.length,
        spearman: agreement?.spearman ?? spearman(scoredRaw, scoredGold),
        // Agreement of this judge with the gold labels, treating gold as a second rater.
        krippendorff_alpha: krippendorffAlphaInterval(items.map((it, i) => [raw[i], it.gold])),
        mae_before: agreement?.mae_before ?? meanAbsoluteError(scoredRaw, scoredGold),
        mae_after: agreement?.mae_after ?? null,
        map: report.file.maps[judgeId] ?? { kind: 'identity' },
      };
    },
    /** Runs from now on pass this judge's votes through `map`. */
    async useCalibration(judgeId: string, map: CalibrationMap) {
      const store = await getStore();
      await setSetting(store, CALIBRATION, { ...(await savedMaps(store)), [judgeId]: map });
    },
    /** The saved maps as a calibration file's text (for a download). */
    async calibrationFile() {
      return calibrationFileOf(await savedMaps(await getStore()));
    },
    /** A calibration file's maps saved for runs, beside (or over) the ones saved; returns the judges it calibrates. */
    async loadCalibrationFile(text: string, fileName: string) {
      const { maps } = readCalibrationFile(text, fileName);
      const store = await getStore();
      await setSetting(store, CALIBRATION, { ...(await savedMaps(store)), ...maps });
      return Object.keys(maps);
    },
  };
}
