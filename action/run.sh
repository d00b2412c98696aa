#!/usr/bin/env bash
# The GitHub Action's check step: workflow annotations on stdout, a SARIF file for code scanning, and the
# CLI's exit status (1 when there are error-level findings).
set -uo pipefail
cli="node ${GITHUB_ACTION_PATH:?}/bin/cuda-gatekeeper.js"
args=(check)
read -r -a paths <<< "${INPUT_PATHS:-.}"
args+=("${paths[@]}")
[ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")
[ -n "${INPUT_CHANGED_SINCE:-}" ] && args+=(--changed-since "$INPUT_CHANGED_SINCE")
sarif="${INPUT_SARIF:-cuda-gatekeeper.sarif}"

$cli "${args[@]}" --format sarif > "$sarif"
sarif_status=$?
if [ "$sarif_status" -ge 2 ]; then
  # Bad usage or an invalid baseline: the CLI printed why on stderr.
  exit "$sarif_status"
fi
$cli "${args[@]}" --format github
status=$?
[ -n "${GITHUB_OUTPUT:-}" ] && echo "sarif=$sarif" >> "$GITHUB_OUTPUT"
exit "$status"
