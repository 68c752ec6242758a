/**
 * clarify_task's own tools as pure functions of the task and the calls so far, so an episode's session
 * and the scorer's replay give the same answers: the simulated user behind `ask`, and the booking system
 * behind `book`.
 *
 * The user answers a question that names exactly one detail (by the words in SLOT_WORDS): with its value
 * when the task left it out, with a reminder when the task already states it (which the scorer counts
 * against the episode). A question that names no detail ("what is missing?") or several is refused with
 * an error saying so: finding out what is missing is the task.
 */
import { DAYS, ROOMS, SLOT_WORDS, SLOTS, type Slot } from './data/clarify.ts';

export type Booking = Record<Slot, string>;

export interface ClarifyData {
  meeting: string;
  /** The true details: day, time (HH:MM), room name, people and minutes as integer text. */
  facts: Booking;
  /** The details the prompt leaves out, in SLOTS order. */
  missing: Slot[];
  /** Room name → code in a recovery item (the building books rooms by code), else null. */
  roomCodes: Record<string, string> | null;
  /** Another meeting's values for the missing details, stated in the prompt from DECOY_FROM_LEVEL. */
  decoy: Partial<Booking>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

export interface Outcome {
  result: string;
  error: string | null;
  /** The detail a question named. */
  asked?: Slot;
  /** The named detail was already in the task. */
  stated?: boolean;
  /** The booking this call made. */
  booking?: Booking;
}

const ANSWERS: Record<Slot, (v: string) => string> = {
  day: (v) => `On ${v}.`,
  time: (v) => `At ${v}.`,
  room: (v) => `The ${v} room.`,
  people: (v) => `${v} people.`,
  minutes: (v) => `${v} minutes.`,
};
const DETAIL_NAMES = 'the day, the time, the room, the people coming or how long it runs';

export function answerQuestion(data: ClarifyData, question: string): Outcome {
  const text = question.toLowerCase();
  const named = SLOTS.filter((s) => SLOT_WORDS[s].test(text));
  if (named.length === 0)
    return {
      result: '',
      error: `ask: the user does not know what you are asking. Ask about one detail by name: ${DETAIL_NAMES}.`,
    };
  if (named.length > 1)
    return {
      result: '',
      error: `ask: one detail at a time, please (that question asks about ${named.join(' and ')}).`,
    };
  const slot = named[0];
  const value = data.facts[slot];
  if (!data.missing.includes(slot))
    return {
      result: `The request already says: ${ANSWERS[slot](value).toLowerCase()}`,
      error: null,
      asked: slot,
      stated: true,
    };
  return { result: ANSWERS[slot](value), error: null, asked: slot, stated: false };
}

/** The room a `room` argument names, or null: by code in a recovery item, else by name. */
function roomNamed(data: ClarifyData, arg: string): string | null {
  const wanted = arg
    .trim()
    .toLowerCase()
    .replace(/\s+room$/, '');
  return ROOMS.find((r) => (data.roomCodes ? data.roomCodes[r] === wanted : r.toLowerCase() === wanted)) ?? null;
}

export function bookRoom(data: ClarifyData, booked: Booking | null, args: Record<string, unknown>): Outcome {
  if (booked)
    return {
      result: '',
      error: `book: the ${data.meeting} is already booked (${describe(booked)}); a booking is final.`,
    };
  const arg = (k: Slot) => String(args[k]).trim();
  const day = DAYS.find((d) => d.toLowerCase() === arg('day').toLowerCase());
  if (!day) return { result: '', error: `book: day must be one of ${DAYS.join(', ')} (got "${arg('day')}")` };
  const time = /^(\d{1,2}):(\d{2})$/.exec(arg('time'));
  if (!time) return { result: '', error: `book: time must be HH:MM, e.g. 14:30 (got "${arg('time')}")` };
  const people = /^\d+$/.test(arg('people')) ? Number(arg('people')) : NaN;
  if (!(people >= 1 && people <= 50))
    return { result: '', error: `book: people must be a whole number from 1 to 50 (got "${arg('people')}")` };
  const minutes = /^\d+$/.test(arg('minutes')) ? Number(arg('minutes')) : NaN;
  if (!(minutes >= 5 && minutes <= 480))
    return { result: '', error: `book: minutes must be a whole number from 5 to 480 (got "${arg('minutes')}")` };
  const room = roomNamed(data, arg('room'));
  if (!room) {
    const names = data.roomCodes ? ROOMS.map((r) => `${data.roomCodes![r]} (${r})`) : ROOMS;
    return {
      result: '',
      error: `book: no room "${arg('room')}"; ${data.roomCodes ? 'this building books rooms by code' : 'rooms'}: ${names.join(', ')}`,
    };
  }
  const booking: Booking = {
    day,
    time: `${time[1].padStart(2, '0')}:${time[2]}`,
    room,
    people: String(people),
    minutes: String(minutes),
  };
  return { result: `Booked ${describe(booking)}.`, error: null, booking };
}

const describe = (b: Booking): string =>
  `${b.room} on ${b.day} at ${b.time} for ${b.people} people, ${b.minutes} minutes`;
