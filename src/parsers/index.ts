import type { FileKind, ParsedFile } from '../facts.js';
import { FactSink } from '../facts.js';
import { SourceText } from '../source.js';
import { parseCondaEnvironment } from './conda/parse.js';
import { parseDockerfile } from './dockerfile/parse.js';
import { parseRequirements } from './requirements/parse.js';

/** Which parser reads a path, or undefined when the file is not one we check. */
export function classifyPath(path: string): FileKind | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const lower = name.toLowerCase();
  if (/^(dockerfile|containerfile)(\..+)?$/.test(lower) || /\.(dockerfile|containerfile)$/.test(lower)) return 'dockerfile';
  if (/^(environment|env|conda)([._-][^/]*)?\.ya?ml$/.test(lower) || /(^|[._-])(conda|environment)([._-][^/]*)?\.ya?ml$/.test(lower)) return 'conda';
  if (/\.txt$/.test(lower) && (/requirements/.test(lower) || /(^|\/)requirements\//.test(path.toLowerCase()) || /^constraints/.test(lower))) return 'requirements';
  if (/\.in$/.test(lower) && /requirements|constraints/.test(path.toLowerCase())) return 'requirements';
  return undefined;
}

const PARSERS: Readonly<Record<FileKind, (path: string, text: string) => ParsedFile>> = {
  dockerfile: parseDockerfile,
  requirements: parseRequirements,
  conda: parseCondaEnvironment,
};

/**
 * Parse a file of a known kind. A parser bug must not take the whole run down: it becomes a positioned
 * problem on the file (reported as parse-error) and the file contributes no facts.
 */
export function parseFile(path: string, text: string, kind: FileKind): ParsedFile {
  try {
    return PARSERS[kind](path, text);
  } catch (error) {
    const sink = new FactSink();
    sink.problems.push({ span: { start: 0, end: 0 }, message: `internal error while reading this file: ${(error as Error).message}` });
    return sink.finish(path, kind, new SourceText(path, text));
  }
}
