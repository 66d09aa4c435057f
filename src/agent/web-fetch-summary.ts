import type { WebFetchSummaryInput } from '../tools/web/web-fetch-tool.js';
import type { ContentGenerator } from './gemini-client.js';

const PAGE_SEPARATOR = '\n\n';

/**
 * web_fetch's answer through the model, as Gemini CLI's fallback path does
 * it: the prompt and each page's text in one request, the model's text back.
 * Streams (the same call the agent makes), so it works against any endpoint
 * the agent's client works against.
 */
export function webFetchSummarizer(options: { client: ContentGenerator; model: string }) {
  return async (input: WebFetchSummaryInput, signal: AbortSignal): Promise<string> => {
    const pages = input.pages.map((page, index) => `[${index + 1}] ${page.url}\n${page.text}`).join(PAGE_SEPARATOR);
    const stream = await options.client.generateContentStream({
      model: options.model,
      contents: [
        {
          role: 'user',
          parts: [
            {
              text: `The user's request: ${input.prompt}\n\nAnswer it from the content of these pages only, citing them by their [number]. Say so if they do not hold the answer.\n\n${pages}`,
            },
          ],
        },
      ],
      config: { abortSignal: signal },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    if (text.trim() === '') throw new Error('the model returned no text');
    return text.trim();
  };
}
