/** Checks an OpenAI-compatible API base URL; returns what is wrong, or null. */
export function baseUrlProblem(text: string): string | null {
  if (!text.trim()) return 'Enter the API base URL, e.g. https://api.openai.com/v1';
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return 'Not a URL: it should look like https://host/v1';
  }
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1';
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:'))
    return 'Use https:// (plain http only for localhost).';
  return null;
}
