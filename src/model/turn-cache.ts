/**
 * The turn caches of episodes in flight (sampling.ts TurnCache), by episode: a multi-turn episode's
 * next prompt begins with its last prompt and what it sampled, so its next turn prefills only the tool
 * observation and the new prompt. An entry is used only when its tokens begin the new prompt and the
 * weights it was made with are still the model's (an update between two turns assigns new tensors to
 * the trained variables); otherwise it is dropped and the turn prefills in full. Entries are released
 * when their episode ends (Policy.releaseEpisode), and beyond `budgetBytes` the least recently stored
 * go first (an episode whose worker was given up never says it ended).
 */
import { disposeTurnCache, turnCacheBytes, type TurnCache } from './sampling.ts';
import { TARGET_MODULES, type TransformerModel } from './transformer.ts';

interface Entry {
  cache: TurnCache;
  bytes: number;
  weights: unknown[];
}

export class TurnCacheStore {
  private readonly entries = new Map<string, Entry>();
  private heldBytes = 0;
  /** Lookups that found a usable cache, and those of an episode whose entry was stale (dropped). */
  readonly stats = { hits: 0, stale: 0 };

  constructor(readonly budgetBytes: number) {}

  /** The cache kept for `episode` if it begins `prompt` and the weights are those it was made with; null otherwise (and a stale entry is dropped). */
  lookup(episode: string | undefined, prompt: number[], model: TransformerModel, useLora: boolean): TurnCache | null {
    if (episode === undefined) return null;
    const entry = this.entries.get(episode);
    if (!entry) return null;
    const { tokens } = entry.cache;
    const weights = weightsOf(model, useLora);
    const fits =
      tokens.length < prompt.length &&
      tokens.every((t, i) => prompt[i] === t) &&
      entry.weights.length === weights.length &&
      entry.weights.every((w, i) => w === weights[i]);
    if (fits) {
      this.stats.hits++;
      return entry.cache;
    }
    this.stats.stale++;
    this.release(episode);
    return null;
  }

  /** Keeps `cache` for the episode's next turn (the store owns it from here), in place of what it held. */
  put(episode: string | undefined, cache: TurnCache | null, model: TransformerModel, useLora: boolean): void {
    if (episode === undefined || !cache) {
      disposeTurnCache(cache);
      return;
    }
    this.release(episode);
    const bytes = turnCacheBytes(cache);
    this.entries.set(episode, { cache, bytes, weights: weightsOf(model, useLora) });
    this.heldBytes += bytes;
    for (const [key] of this.entries) {
      if (this.heldBytes <= this.budgetBytes || key === episode) break;
      this.release(key);
    }
  }

  /** Forgets the episode's cache (it ended, or was given up). */
  release(episode: string): void {
    const entry = this.entries.get(episode);
    if (!entry) return;
    this.entries.delete(episode);
    this.heldBytes -= entry.bytes;
    disposeTurnCache(entry.cache);
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.release(key);
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.heldBytes;
  }
}

/**
 * What a cache's keys and values depend on: the model, whether LoRA is on, and the data of every weight
 * (a variable's dataId changes when it is assigned, as an optimizer step does).
 */
function weightsOf(model: TransformerModel, useLora: boolean): unknown[] {
  const lora = useLora && model.lora !== null;
  const out: unknown[] = [model, lora];
  for (const p of model.namedParameters())
    out.push(p.variable?.dataId ?? p.half?.packed.dataId ?? p.int8!.packed.dataId);
  if (lora)
    for (const layer of model.layers)
      for (const m of TARGET_MODULES) if (layer[m].lora) out.push(layer[m].lora!.A.dataId, layer[m].lora!.B.dataId);
  return out;
}
