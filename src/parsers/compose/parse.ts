/**
 * Docker Compose files: every service, with its image (or the Dockerfile its `build` names) and whether it gets NVIDIA
 * GPUs, read as the containers of a Kubernetes manifest are (ContainerFact), so the same rules judge them.
 *
 * What the Compose Specification says (github.com/compose-spec/compose-spec, spec.md; docs.docker.com/reference/
 * compose-file/):
 * - A service gets GPUs through a device reservation, `deploy.resources.reservations.devices` with `driver: nvidia` or
 *   the `gpu` capability (docs.docker.com/compose/how-tos/gpu-support/: "capabilities … required … gpu"), through the
 *   service's `gpus` attribute (`gpus: all`, or a list of devices), or through the legacy `runtime: nvidia` of
 *   NVIDIA's container runtime.
 * - `build` is a context path (relative to the Compose file's folder; a Git URL is a remote context), or a mapping
 *   with `context`, `dockerfile` (relative to the context; default `Dockerfile`), `dockerfile_inline` and `target`
 *   (the stage built). With `image` beside it, `image` names what is built.
 * - Values are interpolated from the environment and the `.env` file: `${VAR:-default}` and `${VAR-default}` take
 *   the default where the variable is not set; `${VAR}`, `$VAR` and `${VAR:?message}` say nothing of the value here.
 *
 * YAML's anchors, aliases and merge keys (`<<: *gpu`, how Compose files share a GPU reservation between services, the
 * `x-` extension fields of the spec) are followed, and so is `extends` of a service of the same file (its GPU
 * reservation, image and build keys where the service does not say them, as Compose merges them).
 *
 * A service that gets GPUs but whose image cannot be known (a variable without a default, a remote build context, an
 * inline Dockerfile) is said not checked, never passed; so is one that extends a service of another file and builds
 * what that one's build names (a notice: that file is checked on its own).
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type YAMLMap } from 'yaml';
import type { ContainerFact, FactSink, ParsedFile } from '../facts.js';
import { parseImageRef } from '../image-ref.js';
import type { SourceText, Span } from '../source.js';
import { readYamlDocument, scalarText } from '../yaml-text.js';
import { MappedBuilder, type Mapped } from '../mapped.js';
import { IMAGE_REFERENCE } from '../kubernetes/parse.js';

/** A variable's name after `$` or `${`. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** A value with its variables interpolated as far as the file says, or why it cannot be. */
interface Interpolated {
  readonly value: Mapped;
  readonly unknown?: string;
}

/**
 * A scalar with Compose's interpolation applied (docs.docker.com/reference/compose-file/interpolation/): `$$` is a `$`;
 * a default (`${TAG:-24.05-py3}`, `${TAG-24.05-py3}`, nested: `${REG:-${ORG:-nvcr.io}}`) stands for its variable and
 * maps to its characters in the file (an edit of the tag lands in the default); a variable without one (`$TAG`,
 * `${TAG}`, `${TAG:?message}`, `${TAG:+alternative}`) leaves the value unknown, said by `unknown`.
 */
function interpolate(mapped: Mapped, depth = 0): Interpolated {
  const text = mapped.text;
  if (!text.includes('$')) return { value: mapped };
  const builder = new MappedBuilder();
  let unknown: string | undefined;
  const unknownOf = (name: string) =>
    `"${text}" takes \${${name}} from the environment or the .env file, and the file gives it no default`;
  let at = 0;
  let i = text.indexOf('$');
  while (i >= 0) {
    builder.pushMapped(mapped.slice(at, i));
    if (text[i + 1] === '$') {
      builder.pushMapped(mapped.slice(i, i + 1));
      at = i + 2;
    } else if (text[i + 1] === '{') {
      const name = NAME.exec(text.slice(i + 2))?.[0];
      const end = closingBrace(text, i + 2);
      if (!name || end < 0) {
        unknown ??= `"${text}" has an interpolation Compose cannot read`;
        builder.pushSegment(text.slice(i), -1, mapped.site(i, text.length));
        at = text.length;
        break;
      }
      const rest = i + 2 + name.length;
      const modifier = /^:?[-?+]/.exec(text.slice(rest, end))?.[0];
      const reference = mapped.site(i, end + 1);
      if ((modifier === ':-' || modifier === '-') && depth < 8) {
        const inner = interpolate(mapped.slice(rest + modifier.length, end), depth + 1);
        unknown ??= inner.unknown;
        for (const piece of inner.value.pieces())
          builder.pushSegment(inner.value.text.slice(piece.from, piece.to), piece.origin, reference, {
            name,
            reference,
          });
      } else {
        unknown ??= unknownOf(name);
        builder.pushSegment(text.slice(i, end + 1), -1, reference);
      }
      at = end + 1;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (name) {
        unknown ??= unknownOf(name);
        builder.pushSegment(`$${name}`, -1, mapped.site(i, i + 1 + name.length));
        at = i + 1 + name.length;
      } else {
        builder.pushMapped(mapped.slice(i, i + 1));
        at = i + 1;
      }
    }
    i = text.indexOf('$', at);
  }
  builder.pushMapped(mapped.slice(at));
  return { value: builder.build(), ...(unknown ? { unknown } : {}) };
}

/** The index of the `}` that closes a `${` whose name starts at `from`, braces nested; -1 where none does. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let k = from; k < text.length; k++) {
    if (text[k] === '{') depth++;
    else if (text[k] === '}' && --depth === 0) return k;
  }
  return -1;
}

export function parseCompose(path: string, text: string): ParsedFile {
  const { source, sink, doc } = readYamlDocument(path, text);
  if (!doc) return sink.finish(path, 'compose', source);
  const reader = new ServiceReader(path, source, sink, doc);
  const services = reader.get(doc.contents, 'services');
  if (isMap(services)) reader.services(services);
  return sink.finish(path, 'compose', source);
}

class ServiceReader {
  private readonly folder: string;

  constructor(
    path: string,
    private readonly source: SourceText,
    private readonly sink: FactSink,
    private readonly doc: Document,
  ) {
    this.folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  }

  /** The file's services, for `extends` within it. */
  private all: YAMLMap | undefined;

  services(services: YAMLMap): void {
    this.all = services;
    for (const pair of services.items) {
      const name = this.scalar(pair.key as Node)?.text;
      const value = this.resolve(pair.value as Node);
      if (name && isMap(value)) this.service(name, pair.key as Node, value);
    }
  }

  /** A node with an alias followed to its anchor (once: an anchor is never itself an alias). */
  resolve(node: Node | null | undefined): Node | undefined {
    if (!node) return undefined;
    return isAlias(node) ? ((node.resolve(this.doc) as Node | undefined) ?? undefined) : node;
  }

  /**
   * A key's value in a mapping, its own or, failing that, one its merge keys bring (`<<: *gpu`, `<<: [*a, *b]`: the
   * first that has it, YAML's merge order), aliases followed.
   */
  get(node: Node | null | undefined, key: string, depth = 0): Node | undefined {
    const map = this.resolve(node);
    if (!isMap(map)) return undefined;
    let merged: Node | undefined;
    for (const pair of map.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (name === key) return this.resolve(pair.value as Node);
      if (name === '<<' && merged === undefined && depth < 8) {
        const source = this.resolve(pair.value as Node);
        const sources = isSeq(source) ? source.items : [source];
        for (const item of sources) {
          merged = this.get(item as Node, key, depth + 1);
          if (merged !== undefined) break;
        }
      }
    }
    return merged;
  }

  /**
   * The service a service extends (docs.docker.com/reference/compose-file/services/#extends): the mapping of one of
   * this file (`extends: base`, `extends: {service: base}`), or the file and service named elsewhere.
   */
  private extended(service: YAMLMap): { base: YAMLMap } | { file: string; service: string } | undefined {
    const node = this.get(service, 'extends');
    if (!node) return undefined;
    const named = isMap(node) ? this.scalar(this.get(node, 'service'))?.text : this.scalar(node)?.text;
    const file = isMap(node) ? this.scalar(this.get(node, 'file'))?.text : undefined;
    if (!named) return undefined;
    if (file) return { file, service: named };
    const base = this.resolve(this.all?.get(named, true) as Node | undefined);
    return isMap(base) && base !== service ? { base } : undefined;
  }

  private service(name: string, key: Node, service: YAMLMap): void {
    const extended = this.extended(service);
    // What a service of this file it extends says, where the service does not say it: its GPU reservation, its image,
    // its build's keys (Compose merges the two, the extending service's keys over the base's).
    const base = extended && 'base' in extended ? extended.base : undefined;
    const gpu = getsGpus(service, this) || (base !== undefined && getsGpus(base, this));
    const keySpan = this.spanOf(key);
    const workload = `compose service ${name}`;
    const containerName = this.scalar(this.get(service, 'container_name'))?.text ?? name;
    const imageNode = this.get(service, 'image') ?? (base ? this.get(base, 'image') : undefined);
    const imageText = this.scalar(imageNode);
    const ownBuild = this.get(service, 'build');
    // A service that extends one of another file and names no build context or Dockerfile of its own builds what the
    // other's build names: read there, not as this file's folder's Dockerfile.
    const target = isMap(ownBuild) ? this.scalar(this.get(ownBuild, 'target'))?.text : undefined;
    if (
      extended &&
      'file' in extended &&
      !imageText &&
      (!ownBuild || (isMap(ownBuild) && !this.get(ownBuild, 'context') && !this.get(ownBuild, 'dockerfile')))
    ) {
      const reason = `it extends service ${extended.service} of ${extended.file}, whose image or build and resources it takes where it does not say them, and that file's services are not read with this one: what it runs${target ? ` (target ${target})` : ''} is not checked here (${extended.file} is checked on its own)`;
      // One that says it gets GPUs fails closed; one whose GPUs would come from the other file too is said.
      if (gpu) this.notChecked(keySpan, name, `it gets NVIDIA GPUs, but ${reason}`);
      else this.sink.unresolved.push({ span: keySpan, text: `service ${name}`, reason });
      return;
    }
    const inherited = base ? this.get(base, 'build') : undefined;
    const read = this.build(ownBuild ?? inherited, inherited);
    // A build it takes whole from the service it extends is said at this service, not at the other's lines.
    const build = read && !('unknown' in read) && !ownBuild ? { ...read, span: keySpan } : read;
    if (build && 'unknown' in build) {
      if (gpu) this.notChecked(keySpan, name, build.unknown);
      return;
    }
    if (!imageText && !build) {
      if (gpu)
        this.notChecked(
          keySpan,
          name,
          extended
            ? 'it gets NVIDIA GPUs, but its image comes from the service it extends, which is not read'
            : 'it gets NVIDIA GPUs, but names neither an image nor a build',
        );
      return;
    }
    const span = imageText
      ? (imageText.origin(0, imageText.length) ?? imageText.site(0, imageText.length))
      : build!.span;
    const interpolated = imageText ? interpolate(imageText) : undefined;
    // A built image is named by its Dockerfile; `image` beside `build` only tags it.
    const reference = interpolated?.value.text ?? `the image of service ${name}`;
    const parts = interpolated && !interpolated.unknown ? parseImageRef(reference) : { repository: reference };
    const image = interpolated?.value;
    const tagMap =
      image && 'tagOffset' in parts && parts.tagOffset !== undefined
        ? image.slice(parts.tagOffset, parts.tagOffset + parts.tag!.length)
        : undefined;
    const tagSpan = tagMap?.origin(0, tagMap.length);
    let dockerfile: ContainerFact['dockerfile'];
    if (build) {
      dockerfile = {
        path: build.dockerfile,
        span: build.span,
        how: 'compose',
        include: this.sink.includes.length,
        ...(build.target ? { stage: build.target } : {}),
        ...(build.args ? { args: build.args } : {}),
        ...(build.argValues ? { argValues: build.argValues } : {}),
      };
      this.sink.includes.push({
        kind: 'dockerfile',
        target: build.dockerfile,
        targetSpan: build.span,
        span: build.span,
        context: -1,
      });
    }
    const invalid =
      interpolated && !interpolated.unknown && !IMAGE_REFERENCE.test(reference)
        ? `"${reference}" is not an image reference`
        : undefined;
    const unresolved = build ? undefined : (interpolated?.unknown ?? invalid);
    this.sink.containers.push({
      span,
      workload,
      name: containerName,
      image: {
        span,
        stage: this.sink.containers.length,
        reference,
        ...parts,
        ...(tagSpan && !build ? { tagSpan, tagMap: tagMap! } : {}),
        ...(unresolved ? { unresolved } : {}),
      },
      gpu,
      placement: { selector: [], terms: [] },
      ...(dockerfile ? { dockerfile } : {}),
    });
    if (gpu && unresolved)
      this.notChecked(span, name, `the image of the service, which gets NVIDIA GPUs, cannot be judged: ${unresolved}`);
  }

  /**
   * The Dockerfile a `build` names, as a path from the repository root, and the stage it builds; `unknown` where no
   * file of the repository is it (a remote context, an inline Dockerfile, a path from a variable without a default).
   */
  private build(
    node: Node | undefined,
    /** The build of the service it extends, whose keys it takes where it does not say them. */
    inherited?: Node,
  ):
    | { dockerfile: string; span: Span; target?: string; args?: string[]; argValues?: Record<string, string> }
    | { unknown: string }
    | undefined {
    if (!node) return undefined;
    let context: Mapped | undefined;
    let file: Mapped | undefined;
    let target: string | undefined;
    let args: string[] | undefined;
    let argValues: Record<string, string> | undefined;
    if (isScalar(node)) context = this.scalar(node);
    else if (isMap(node)) {
      if (this.get(node, 'dockerfile_inline') !== undefined)
        return {
          unknown: 'it gets NVIDIA GPUs, but its image is built from a Dockerfile written inline, which is not read',
        };
      const key = (name: string): Node | undefined =>
        this.get(node, name) ?? (inherited && inherited !== node ? this.get(inherited, name) : undefined);
      context = this.scalar(key('context'));
      file = this.scalar(key('dockerfile'));
      target = this.scalar(key('target'))?.text;
      args = this.argNames(key('args'));
      argValues = this.argValues(key('args'));
    } else return undefined;
    const contextText = context ? interpolate(context) : undefined;
    const fileText = file ? interpolate(file) : undefined;
    const unknown = contextText?.unknown ?? fileText?.unknown;
    if (unknown) return { unknown: `it gets NVIDIA GPUs, but its build cannot be read: ${unknown}` };
    const contextPath = contextText?.value.text ?? '.';
    if (/^[a-z][a-z0-9+.-]*:\/\/|^git@|\.git(?:#|$)/i.test(contextPath))
      return {
        unknown: `it gets NVIDIA GPUs, but its image is built from a remote context (${contextPath}), which is not read`,
      };
    const dockerfile = joinPath(this.folder, contextPath, fileText?.value.text ?? 'Dockerfile');
    if (dockerfile === undefined)
      return { unknown: `it gets NVIDIA GPUs, but its build context ${contextPath} is outside the repository` };
    // Where the service says it: a Dockerfile or context it takes from the service it extends is said at its own build.
    const own = isScalar(node) || (isMap(node) && (this.get(node, 'dockerfile') ?? this.get(node, 'context')));
    const at = own ? (file ?? context) : undefined;
    const span = at ? (at.origin(0, at.length) ?? at.site(0, at.length)) : this.spanOf(node);
    return {
      dockerfile,
      span,
      ...(target ? { target } : {}),
      ...(args?.length ? { args } : {}),
      ...(argValues && Object.keys(argValues).length ? { argValues } : {}),
    };
  }

  /** The names `build.args` sets: a mapping (`CUDA: 12.4.1`) or a list (`- CUDA=12.4.1`, `- CUDA`). */
  private argNames(node: Node | undefined): string[] | undefined {
    if (isMap(node)) return node.items.flatMap((pair) => (isScalar(pair.key) ? [String(pair.key.value)] : []));
    if (isSeq(node))
      return node.items.flatMap((item) => {
        const text = this.scalar(this.resolve(item as Node))?.text;
        return text ? [text.split('=')[0]!.trim()] : [];
      });
    return undefined;
  }

  /**
   * The values `build.args` gives where the file says them: a literal, or the default of an interpolation
   * (`CUDA_VER: ${CUDA_VER:-12.9.0}`, as the file's own value; the environment may give another). An argument without
   * a value (`- CUDA`, taken from the environment) or one only the environment gives has none here.
   */
  private argValues(node: Node | undefined): Record<string, string> | undefined {
    const values: Record<string, string> = {};
    const add = (name: string, written: Mapped | undefined): void => {
      if (!written) return;
      const value = interpolate(written);
      if (!value.unknown) values[name] = value.value.text;
    };
    if (isMap(node))
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        add(String(pair.key.value), this.scalar(this.resolve(pair.value as Node)));
      }
    else if (isSeq(node))
      for (const item of node.items) {
        const text = this.scalar(this.resolve(item as Node));
        const equals = text?.text.indexOf('=') ?? -1;
        if (text && equals > 0) add(text.text.slice(0, equals).trim(), text.slice(equals + 1));
      }
    return values;
  }

  private notChecked(span: Span, name: string, reason: string): void {
    this.sink.unresolved.push({ span, text: `service ${name}`, reason, fails: true });
  }

  scalar(node: Node | null | undefined): Mapped | undefined {
    return scalarText(node, this.source);
  }

  private spanOf(node: unknown): Span {
    const range = (node as Node | undefined)?.range;
    return range ? { start: range[0], end: range[1] } : { start: 0, end: 0 };
  }
}

/** Whether a service gets NVIDIA GPUs (see the file's comment for the three ways a Compose file says so). */
function getsGpus(service: YAMLMap, reader: ServiceReader): boolean {
  const text = (node: Node | undefined) => reader.scalar(node)?.text.trim().toLowerCase();
  if (text(reader.get(service, 'runtime')) === 'nvidia') return true;
  if (reader.get(service, 'gpus') !== undefined) return true;
  const reservations = reader.get(reader.get(reader.get(service, 'deploy'), 'resources'), 'reservations');
  const devices = reader.get(reservations, 'devices');
  if (!isSeq(devices)) return false;
  return devices.items.some((device) => {
    const capabilities = reader.get(device as Node, 'capabilities');
    return (
      text(reader.get(device as Node, 'driver')) === 'nvidia' ||
      (isSeq(capabilities) && capabilities.items.some((item) => text(reader.resolve(item as Node)) === 'gpu'))
    );
  });
}

/**
 * `folder/context/file` as a path from the repository root, `.` and `..` resolved; undefined where it leaves the
 * repository, or where either is absolute (a path of the machine that builds).
 */
function joinPath(folder: string, context: string, file: string): string | undefined {
  // An absolute path names a place on the machine that builds, not in the repository.
  if (context.startsWith('/') || file.startsWith('/')) return undefined;
  const joined = `${folder ? `${folder}/` : ''}${context}/${file}`;
  const out: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}
