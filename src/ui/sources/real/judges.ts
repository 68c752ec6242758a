/**
 * Judge settings in IndexedDB (settings store): the remote judges as `judges.remotes`, each key as
 * `secret.<judge id>` (the name a run config's `api_key_env` points at), the in-browser switch as
 * `judges.in_browser`. Keys never leave this browser except in requests to their own endpoint.
 */
import type { CalibrationItem } from '../../../contracts.ts';
import { krippendorffAlphaInterval, meanAbsoluteError, spearman } from '../../../judge/agreement.ts';
import { calibrate } from '../../../judge/calibrate.ts';
import { RemoteJudge } from '../../../judge/remote.ts';
import { RuleJudge } from '../../../judge/rule.ts';
import type { Judge } from '../../../judge/types.ts';
import { loadBrowserModelJudge } from '../../../pipeline/browser-judges.ts';
import { IN_BROWSER_JUDGE, IN_BROWSER_JUDGE_SETTING as IN_BROWSER, REMOTE_JUDGES_SETTING as REMOTES } from '../../../pipeline/judge-settings.ts';
import { deleteSetting, getSetting, setSetting } from '../../../store/index.ts';
import type { AgreementFigures, JudgesSource, RemoteJudgeSettings } from '../../screens/judges/source.ts';
import { getStore } from './store-handle.ts';

type StoredRemote = Omit<RemoteJudgeSettings, 'hasKey'>;
const secretName = (id: string) => `secret.${id}`;

async function remotes(): Promise<StoredRemote[]> {
  return getSetting<StoredRemote[]>(await getStore(), REMOTES, []);
}

async function key(id: string): Promise<string | null> {
  return getSetting<string | null>(await getStore(), secretName(id), null);
}

/** Turns a failed fetch into a sentence that says what to check. */
function connectionError(err: unknown, url: string): Error {
  if (err instanceof DOMException && err.name === 'TimeoutError') return new Error(`No answer from ${url} within 15 s.`);
  if (err instanceof TypeError) return new Error(`Could not reach ${url}: the server is down, the address is wrong, or it does not allow requests from this page (CORS).`);
  return err instanceof Error ? err : new Error(String(err));
}

export function createJudgesSource(): JudgesSource {
  return {
    async load() {
      const list = await remotes();
      const withKeys = await Promise.all(list.map(async (r) => ({ ...r, hasKey: (await key(r.id)) !== null })));
      return {
        remotes: withKeys,
        inBrowser: { enabled: await getSetting(await getStore(), IN_BROWSER, false), unavailable: null },
        // Every judge a run can have: the rule judge, the in-browser one (switched on or not), each saved remote.
        calibratable: ['rule', IN_BROWSER_JUDGE.id, ...list.map((r) => r.id)],
      };
    },
    async saveRemote(settings, apiKey) {
      const store = await getStore();
      await setSetting(store, REMOTES, [...(await remotes()).filter((r) => r.id !== settings.id), settings]);
      if (apiKey) await setSetting(store, secretName(settings.id), apiKey);
    },
    async removeRemote(id) {
      const store = await getStore();
      await setSetting(store, REMOTES, (await remotes()).filter((r) => r.id !== id));
      await deleteSetting(store, secretName(id));
    },
    async forgetKey(id) {
      await deleteSetting(await getStore(), secretName(id));
    },
    async setInBrowser(enabled) {
      await setSetting(await getStore(), IN_BROWSER, enabled);
    },
    async testConnection(settings, apiKey) {
      const secret = apiKey ?? (await key(settings.id));
      const url = `${settings.base_url.replace(/\/$/, '')}/chat/completions`;
      const started = performance.now();
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
          body: JSON.stringify({ model: settings.model, messages: [{ role: 'user', content: 'Reply with the word ok.' }], max_tokens: 5, temperature: 0 }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (err) {
        throw connectionError(err, settings.base_url);
      }
      const latency_ms = performance.now() - started;
      const body = await response.text();
      if (response.status === 401 || response.status === 403) throw new Error(`The server refused the key (HTTP ${response.status}). Check or replace the API key.`);
      if (response.status === 404) throw new Error(`HTTP 404: the URL should end in /v1 and the model "${settings.model}" must exist there.`);
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.slice(0, 200)}`);
      let reply: string;
      try {
        reply = (JSON.parse(body) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content ?? '';
      } catch {
        throw new Error('The server answered, but not with OpenAI-compatible JSON. Is this a chat-completions endpoint?');
      }
      return { latency_ms, reply: reply.slice(0, 80) };
    },
    async calibrate(judgeId, items: CalibrationItem[], onProgress, signal): Promise<AgreementFigures> {
      let judge: Judge;
      if (judgeId === 'rule') judge = new RuleJudge({ id: 'rule' });
      else if (judgeId === IN_BROWSER_JUDGE.id) judge = await loadBrowserModelJudge(IN_BROWSER_JUDGE.id, IN_BROWSER_JUDGE.path);
      else {
        const r = (await remotes()).find((x) => x.id === judgeId);
        if (!r) throw new Error(`No judge "${judgeId}"; save it first.`);
        judge = new RemoteJudge({ id: r.id, baseUrl: r.base_url, model: r.model, apiKey: await key(r.id) });
      }
      const { report, votes } = await calibrate([judge], items, { onItem: (done, total) => { signal.throwIfAborted(); onProgress(done, total); } });
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
      };
    },
  };
}
