import { extname } from 'node:path';

/** Media the model receives as inlineData rather than text. */
const INLINE_MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.pdf': 'application/pdf',
};

/**
 * The MIME type of a file sent to the model as inlineData (images and PDF),
 * by extension, or undefined for everything else. SVG is text and is read
 * as text.
 */
export function inlineMediaType(path: string): string | undefined {
  return INLINE_MEDIA_TYPES[extname(path).toLowerCase()];
}
