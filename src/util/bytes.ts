/** Sizes as people read them: 512 bytes, 48 KiB, 1.3 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  const mib = bytes / (1024 * 1024);
  return `${mib < 10 ? mib.toFixed(1).replace(/\.0$/, '') : Math.round(mib)} MiB`;
}

/** "1.3 MiB, over the 1 MiB size limit": why a file was not read. */
export function overLimit(bytes: number, limit: number): string {
  return `${formatBytes(bytes)}, over the ${formatBytes(limit)} size limit`;
}
