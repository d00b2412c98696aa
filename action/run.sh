#!/usr/bin/env bash
# The GitHub Action's check step: workflow annotations on stdout, a SARIF file for code scanning, and the
# CLI's exit status (1 when there are error-level findings).
set -uo pipefail
cli="node ${GITHUB_ACTION_PATH:?}/bin/cuda-gatekeeper.js"
args=(check)
read -r -a paths <<< "${INPUT_PATHS:-.}"
args+=("${paths[@]}")
[ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")
# The baseline comes from the base branch on pull requests, so a pull request cannot switch rules off for itself:
# `baseline-ref` names the ref ("checkout" reads the pull request's own files).
ref="${INPUT_BASELINE_REF:-}"
if [ -z "$ref" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  if git fetch --no-tags --depth=1 origin "+refs/heads/${GITHUB_BASE_REF}:refs/remotes/origin/${GITHUB_BASE_REF}" >/dev/null 2>&1; then
    ref="origin/${GITHUB_BASE_REF}"
  else
    echo "::warning::cuda-gatekeeper could not fetch the base branch ${GITHUB_BASE_REF}; the baseline is read from the checkout"
  fi
fi
[ -n "$ref" ] && [ "$ref" != "checkout" ] && args+=(--baseline-ref "$ref")
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
