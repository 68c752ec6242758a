/**
 * A turn in a few words, for a cell of the group table (playground GroupCompare): each call's name with
 * its arguments on one line and the first line of what came back, a failed call's error instead; a turn
 * without calls shows the start of its prose. The full turn opens on click; this only has to tell turns apart.
 */
import type { AssistantTurn } from '../../pipeline/app/episode-turns.ts';
import { splitAssistantText } from './segments.ts';

export interface CallSummary {
  name: string;
  /** The arguments' values, strings unquoted, "27 x 13" or "1, true"; shortened. */
  args: string;
  /** The observation's (or the error's) first line, shortened. */
  result: string;
  failed: boolean;
}

export interface TurnSummary {
  calls: CallSummary[];
  /** The turn's prose (no reasoning, no call markup), first line, shortened; '' when there is none. */
  text: string;
}

/** `s` cut to `max` characters with an ellipsis. */
export function shorten(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

const firstLine = (s: string) =>
  s
    .trim()
    .split('\n')
    .find((l) => l.trim())
    ?.trim() ?? '';

/** A call's argument values in one line: the names are what every call of a tool shares, the values tell calls apart. */
function argumentValues(parameters: Record<string, unknown>): string {
  return Object.values(parameters)
    .map((v) => (typeof v === 'string' ? v.replace(/\s+/g, ' ') : JSON.stringify(v)))
    .join(', ');
}

export function summarizeTurn(turn: AssistantTurn, argsMax = 48, resultMax = 64): TurnSummary {
  const calls = turn.steps.map((step): CallSummary => {
    const call = step.tool_call;
    const failed = !!call?.error;
    return {
      name: call?.tool_name ?? 'observation',
      args: call ? shorten(argumentValues(call.parameters), argsMax) : '',
      result: shorten(
        firstLine(failed ? call!.error! : call ? call.result || step.observation : step.observation),
        resultMax,
      ),
      failed,
    };
  });
  const prose = splitAssistantText(turn.text)
    .filter((s) => s.kind === 'text')
    .map((s) => s.text)
    .join(' ');
  return { calls, text: shorten(firstLine(prose), resultMax) };
}
