/**
 * Catalog data for clarify_task: the details a booking needs, their values, the words a question must
 * use to name each one, how many are left out per level, and wording.
 */

export const SLOTS = ['day', 'time', 'room', 'people', 'minutes'] as const;
export type Slot = (typeof SLOTS)[number];

/** Details left out of the task per level (of five). Never all five: asking about every detail then asks about a stated one. */
export const MISSING_PER_LEVEL: Record<number, number> = { 1: 1, 2: 2, 3: 2, 4: 3, 5: 4 };
/** From this level the prompt also states another meeting's values for the missing details: a guess copies them. */
export const DECOY_FROM_LEVEL = 3;

export const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
/** Half hours from 09:00 to 16:30. */
export const TIMES = Array.from(
  { length: 16 },
  (_, i) => `${String(9 + Math.floor(i / 2)).padStart(2, '0')}:${i % 2 ? '30' : '00'}`,
);
export const ROOMS = ['Cedar', 'Birch', 'Oak', 'Maple', 'Elm', 'Pine', 'Aspen', 'Willow', 'Hazel', 'Alder'];
export const PEOPLE_RANGE: [number, number] = [3, 14];
export const MINUTES = [15, 30, 45, 60, 90];
export const MEETINGS = [
  'team sync',
  'design review',
  'budget review',
  'sprint planning',
  'retro',
  'hiring panel',
  'roadmap chat',
  'demo prep',
];
/** In a recovery item the building books rooms by code (`cedar-2`): the room's name alone is refused. */
export const ROOM_CODE_DIGITS: [number, number] = [1, 4];

/**
 * The words that name a detail in a question. A question must name exactly one detail: the user does not
 * answer "what is missing?" (finding that out is the task) nor several details at once.
 */
export const SLOT_WORDS: Record<Slot, RegExp> = {
  day: /\b(day|date|weekday|monday|tuesday|wednesday|thursday|friday)\b/,
  time: /\b(time|hour|o'clock|start|starts)\b/,
  room: /\b(room|where|place|venue)\b/,
  people: /\b(people|persons?|attendees|attending|participants|headcount|guests|coming)\b/,
  minutes: /\b(long|duration|minutes|length|lasts?)\b/,
};

/** The expert's question per detail: each names its detail only. */
export const QUESTIONS: Record<Slot, string> = {
  day: 'Which day is it?',
  time: 'What time does it start?',
  room: 'Which room should it be in?',
  people: 'How many people are coming?',
  minutes: 'How long is it, in minutes?',
};

export const CLARIFY_PROMPT = 'Book {room} for the {meeting}{details}.{decoy}';
export const CLARIFY_INSTRUCTIONS =
  'The task may leave out details the booking needs: ask the user about each one that is missing, one at a time, then book.';
