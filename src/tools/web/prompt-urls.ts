/** At most this many URLs are fetched from one prompt (Gemini CLI's limit). */
export const MAX_URLS = 20;

/**
 * The http(s) URLs in a web_fetch prompt, in order, each once, with the
 * punctuation a sentence puts after a URL dropped; GitHub `blob` pages become
 * their raw file (`raw.githubusercontent.com`), as Gemini CLI does, so the
 * model gets the file rather than GitHub's page around it.
 */
export function extractUrls(prompt: string): string[] {
  const found: string[] = [];
  for (const match of prompt.matchAll(/\bhttps?:\/\/[^\s<>"'`]+/gi)) {
    const text = match[0].replace(/[.,;:!?)\]}]+$/, '');
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      continue;
    }
    const normalized = githubRawUrl(url) ?? url.href;
    if (!found.includes(normalized)) found.push(normalized);
  }
  return found;
}

/** `https://github.com/o/r/blob/ref/path` → `https://raw.githubusercontent.com/o/r/ref/path`. */
function githubRawUrl(url: URL): string | undefined {
  if (url.hostname !== 'github.com') return undefined;
  const parts = url.pathname.split('/');
  // ['', owner, repo, 'blob', ref, ...path]
  if (parts.length < 6 || parts[3] !== 'blob') return undefined;
  return `https://raw.githubusercontent.com/${parts[1]}/${parts[2]}/${parts.slice(4).join('/')}`;
}
