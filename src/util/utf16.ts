/**
 * UTF-16 text files, told by their byte-order mark (Windows editors write requirements files so; pip's `auto_decode`
 * reads them by it). The CLI reads them from disk, the App from a blob GitHub calls binary (it has zero bytes).
 */

/**
 * A UTF-16 text file: its text, or undefined for anything else with zero bytes (binary).
 */
export function utf16Text(buffer: Uint8Array): string | undefined {
  const encoding = utf16Encoding(buffer);
  if (!encoding || buffer.length % 2 !== 0) return undefined;
  const text = new TextDecoder(encoding, { fatal: false }).decode(buffer);
  return text.includes('\0') ? undefined : text;
}

/** `utf-16le` or `utf-16be` where the bytes start with that byte-order mark. */
export function utf16Encoding(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}
