/**
 * One copy of each string for the life of a report. Findings repeat their messages and help texts (a monorepo's
 * projects share their problems), and each copy a rule builds is a tree of cons strings that would otherwise be
 * kept with its finding for the whole run (docs/performance.md has what it saves).
 */
export class TextPool {
  private readonly texts = new Map<string, string>();

  /** The pool's copy of `text` (the first one it was given). */
  readonly share = (text: string): string => {
    const shared = this.texts.get(text);
    if (shared !== undefined) return shared;
    this.texts.set(text, text);
    return text;
  };
}
