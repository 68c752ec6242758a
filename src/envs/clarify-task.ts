/**
 * clarify_task: an ambiguous request ("Book a room for the retro on Monday.") that leaves out some of the
 * five details a booking needs (day, time, room, people, minutes). The environment brings two tools:
 * `ask`, whose simulated user answers a question that names exactly one detail, and `book`, which books
 * whatever it is given, once. Level L leaves out 1, 2, 2, 3 and 4 details; from level 3 the prompt also
 * states another meeting's values for them, so a guess copies the wrong ones. In RECOVERY_SHARE of the
 * items the building books rooms by code: `book` with the room's name fails with the list of codes
 * (`cedar-2`), and success needs the corrected call.
 *
 * Success: every missing detail asked about before the booking, no question about a detail the task
 * already states (asking about everything is not clarifying), and the one booking right in all five
 * details. Either part alone is half credit. The calls are replayed on a fresh user to score them.
 */
import type { Task, ToolSchema, Trajectory } from '../contracts.ts';
import type { Rng } from '../rng.ts';
import {
  CLARIFY_INSTRUCTIONS,
  CLARIFY_PROMPT,
  DAYS,
  DECOY_FROM_LEVEL,
  MEETINGS,
  MINUTES,
  MISSING_PER_LEVEL,
  PEOPLE_RANGE,
  QUESTIONS,
  ROOM_CODE_DIGITS,
  ROOMS,
  SLOTS,
  TIMES,
  type Slot,
} from './data/clarify.ts';
import { RECOVERY_SHARE } from './data/multi-step.ts';
import { scoreParts } from './evidence.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { ownToolRefusal } from './own-tool-refusal.ts';
import { answerQuestion, bookRoom, type Booking, type ClarifyData, type Outcome } from './simulated-user.ts';
import type { EnvironmentSpec, OwnToolSession } from './types.ts';

const str = (description: string) => ({ type: 'string', description });
const SCHEMAS: ToolSchema[] = [
  {
    name: 'ask',
    description: 'Ask the user one question about one detail the task leaves out; the answer comes back.',
    parameters: {
      type: 'object',
      properties: { question: str('one question naming the detail, e.g. "Which day is it?"') },
      required: ['question'],
    },
  },
  {
    name: 'book',
    description: 'Book a meeting room (day Monday to Friday, time HH:MM). A booking is final.',
    parameters: {
      type: 'object',
      properties: {
        room: str('the room'),
        day: str('e.g. Tuesday'),
        time: str('e.g. 14:30'),
        people: str('how many'),
        minutes: str('how long'),
      },
      required: ['room', 'day', 'time', 'people', 'minutes'],
    },
  },
];
const schemaOf = new Map(SCHEMAS.map((s) => [s.name, s]));

/** One call on the episode's user and booking system; `booking` holds the booking made so far. */
function runCall(
  data: ClarifyData,
  state: { booking: Booking | null },
  name: string,
  args: Record<string, unknown>,
): Outcome {
  const schema = schemaOf.get(name);
  if (!schema) return { result: '', error: `unknown tool "${name}"; available tools: ask, book` };
  const refused = ownToolRefusal(schema, args);
  if (refused) return { result: '', error: refused };
  if (name === 'ask') return answerQuestion(data, String(args.question));
  const outcome = bookRoom(data, state.booking, args);
  if (outcome.booking) state.booking = outcome.booking;
  return outcome;
}

/** Values of the details the task leaves out, differing from the true ones: another meeting's. */
function decoyValues(rng: Rng, facts: Booking, missing: Slot[]): Partial<Booking> {
  const other = (pool: string[], not: string) => rng.pick(pool.filter((v) => v !== not));
  const pools: Record<Slot, string[]> = {
    day: DAYS,
    time: TIMES,
    room: ROOMS,
    people: range(...PEOPLE_RANGE),
    minutes: MINUTES.map(String),
  };
  return Object.fromEntries(missing.map((s) => [s, other(pools[s], facts[s])]));
}

const range = (lo: number, hi: number): string[] => Array.from({ length: hi - lo + 1 }, (_, i) => String(lo + i));
const PHRASES: Record<Slot, (v: string) => string> = {
  day: (v) => `on ${v}`,
  time: (v) => `at ${v}`,
  room: (v) => `in ${v}`,
  people: (v) => `for ${v} people`,
  minutes: (v) => `for ${v} minutes`,
};

export const clarifyTask: EnvironmentSpec = {
  name: 'clarify_task',
  description:
    'Book a meeting room from a request that leaves details out: ask the user about each missing one, then book.',
  tags: ['clarify', 'own-tools', 'multi-step', 'tool-use', 'curriculum-4'],
  requiredTools: [],
  instructions: CLARIFY_INSTRUCTIONS,
  ownTools: SCHEMAS,
  sample(rng, difficulty) {
    const meeting = rng.pick(MEETINGS);
    const facts: Booking = {
      day: rng.pick(DAYS),
      time: rng.pick(TIMES),
      room: rng.pick(ROOMS),
      people: String(rng.int(...PEOPLE_RANGE)),
      minutes: String(rng.pick(MINUTES)),
    };
    const missing = rng
      .shuffle(SLOTS)
      .slice(0, MISSING_PER_LEVEL[difficulty])
      .sort((a, b) => SLOTS.indexOf(a) - SLOTS.indexOf(b));
    const recovery = rng.chance(RECOVERY_SHARE);
    const roomCodes = recovery
      ? Object.fromEntries(ROOMS.map((r) => [r, `${r.toLowerCase()}-${rng.int(...ROOM_CODE_DIGITS)}`]))
      : null;
    const decoy = difficulty >= DECOY_FROM_LEVEL ? decoyValues(rng, facts, missing) : {};
    const stated = SLOTS.filter((s) => s !== 'room' && !missing.includes(s));
    const decoyText = Object.keys(decoy).length
      ? ` The ${rng.pick(MEETINGS.filter((m) => m !== meeting))} is ${missing.map((s) => PHRASES[s](decoy[s]!)).join(' ')}.`
      : '';
    const details = stated.map((s) => ` ${PHRASES[s](facts[s])}`).join('');
    const prompt = CLARIFY_PROMPT.replace('{room}', missing.includes('room') ? 'a room' : `the ${facts.room} room`)
      .replace('{meeting}', meeting)
      .replace('{details}', details)
      .replace('{decoy}', decoyText);
    const data: ClarifyData = { meeting, facts, missing, roomCodes, decoy, recovery };
    return { prompt, data, key: JSON.stringify([meeting, facts, missing, roomCodes !== null, decoy]) };
  },
  async openTools(task): Promise<OwnToolSession> {
    const data = task.data as ClarifyData;
    const state = { booking: null as Booking | null };
    return {
      call: async (name, args) => {
        const { result, error } = runCall(data, state, name, args);
        return { result, error };
      },
      dispose() {},
    };
  },
  evaluate(task: Task, trajectory: Trajectory) {
    const data = task.data as ClarifyData;
    const state = { booking: null as Booking | null };
    const outcomes = trajectory.steps.flatMap((s) =>
      s.tool_call && schemaOf.has(s.tool_call.tool_name)
        ? [runCall(data, state, s.tool_call.tool_name, s.tool_call.parameters)]
        : [],
    );
    const bookedAt = outcomes.findIndex((o) => o.booking);
    const before = bookedAt < 0 ? outcomes : outcomes.slice(0, bookedAt);
    const asked =
      data.missing.every((slot) => before.some((o) => o.asked === slot && !o.stated)) &&
      !outcomes.some((o) => o.stated);
    const booking = bookedAt < 0 ? null : outcomes[bookedAt].booking!;
    return scoreParts(asked, booking !== null && SLOTS.every((s) => booking[s] === data.facts[s]));
  },
  expert(task) {
    const { facts, missing, roomCodes } = task.data as ClarifyData;
    const turns = missing.map((slot) =>
      callTurn(`The ${slot === 'people' ? 'number of people' : slot} is missing. Ask.`, [
        { name: 'ask', arguments: { question: QUESTIONS[slot] } },
      ]),
    );
    const book = (room: string) => ({
      name: 'book',
      arguments: { room, day: facts.day, time: facts.time, people: facts.people, minutes: facts.minutes },
    });
    turns.push(callTurn(missing.length ? 'I have every detail. Book.' : 'Book.', [book(facts.room)]));
    if (roomCodes) turns.push(callTurn('Rooms go by code here.', [book(roomCodes[facts.room])]));
    return [...turns, answerTurn('Booked.')];
  },
};
