/**
 * What an image's own config says (pure): its environment and labels as the OCI image spec stores them, and the
 * CUDA they name. The NVIDIA Container Toolkit decides at container start from exactly this environment
 * (NVIDIA_REQUIRE_*, CUDA_VERSION), so the gate reads the same values before the merge.
 *
 * OCI image config: https://github.com/opencontainers/image-spec/blob/v1.1.0/config.md (`config.Env` is a list of
 * `VARNAME=VARVALUE`, `config.Labels` a map); Docker's image config is the same shape
 * (https://github.com/moby/docker-image-spec/blob/v1.3.1/spec.md).
 */

/** The parts of an image config the checks use. */
export interface ImageConfig {
  readonly env: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** `linux/amd64`, `linux/arm64/v8`: the platform the config says it is for. */
  readonly platform: string;
}

/** An image config's JSON, read; a string says why it is not one. */
export function readImageConfig(json: unknown): ImageConfig | string {
  if (!isObject(json)) return 'the image config is not a JSON object';
  const config = json.config ?? {};
  if (!isObject(config)) return 'the image config has no "config" object';
  const env: Record<string, string> = {};
  const list = config.Env ?? [];
  if (!Array.isArray(list)) return 'the image config\'s "Env" is not a list';
  for (const entry of list) {
    if (typeof entry !== 'string') return 'the image config\'s "Env" holds a value that is not a string';
    const equals = entry.indexOf('=');
    // An entry without "=" is a name without value; Docker keeps it, the toolkit reads it as empty.
    if (equals < 0) env[entry] = '';
    else env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  const labels: Record<string, string> = {};
  const given = config.Labels ?? {};
  if (given !== null && !isObject(given)) return 'the image config\'s "Labels" is not a map';
  for (const [key, value] of Object.entries(given ?? {})) if (typeof value === 'string') labels[key] = value;
  const os = typeof json.os === 'string' ? json.os : 'unknown';
  const architecture = typeof json.architecture === 'string' ? json.architecture : 'unknown';
  const variant = typeof json.variant === 'string' ? `/${json.variant}` : '';
  return { env, labels, platform: `${os}/${architecture}${variant}` };
}

/**
 * The CUDA in an image, as NVIDIA's images record it: `CUDA_VERSION` (nvidia/cuda's `12.4.1`, NGC's four-part
 * `11.5.0.029`, whose first three parts are the release), inherited by every image built on them. An image without it
 * names no CUDA of NVIDIA's images: undefined. NVIDIA_REQUIRE_CUDA is not read as the CUDA: NGC images set it to
 * `cuda>=9.0` whatever they hold (triton-inference-server/server#6612).
 */
export function configCuda(config: Pick<ImageConfig, 'env'>): string | undefined {
  return /^(\d+\.\d+(?:\.\d+)?)(?:\.\d+)?$/.exec(config.env.CUDA_VERSION?.trim() ?? '')?.[1];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
