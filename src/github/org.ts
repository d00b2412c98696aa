/**
 * What the organisation baseline's jobs share: the organisation's repositories, and a default branch judged under a
 * baseline. The jobs have a file each: the preview of a pull request to `<org>/.github` (org-preview.ts), the re-check
 * of open pull requests after a new baseline lands or an installation changes (org-recheck.ts), and migration pull
 * requests (org-migrate.ts).
 */
import { gate } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { gateOptionsFor, layerBaselines, ORG_CONFIG_REPO, type ConfigBlob } from '../baseline/layers.js';
import { readBranch, repositoryInfo } from './repository.js';
import type { PathIndex } from './path-index.js';
import type { GitHub } from './types.js';
import { bundledBaseline, today } from '../util/package-root.js';

/** Every repository of the installation under `owner` but the config repository (archived ones left out). */
export async function organisationRepositories(github: GitHub, owner: string, withConfig = false) {
  const repos = await github.paginate(github.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
  return repos.filter(
    (repo) =>
      !repo.archived &&
      (withConfig || repo.name !== ORG_CONFIG_REPO) &&
      repo.owner.login.toLowerCase() === owner.toLowerCase(),
  );
}

/** A repository's default branch checked under the organisation baseline and its own file (sweeps, migrations). */
export async function evaluateDefaultBranch(
  github: GitHub,
  owner: string,
  repo: string,
  orgConfig: ConfigBlob | null,
  index?: PathIndex,
) {
  const info = await repositoryInfo(github, { owner, repo }, 1);
  const resolved = layerBaselines(owner, repo, info?.repoConfig, orgConfig, bundledBaseline());
  if (!info)
    return {
      resolved,
      headSha: '',
      report: gate([], resolved.baseline, defaultKnowledgeBase()),
      texts: new Map<string, string>(),
      files: 0,
      parsed: [],
    };
  const branch = await readBranch(github, { owner, repo }, info.headSha, index);
  const options = gateOptionsFor(resolved, owner, repo, { today: today(), noFile: branch.noFile });
  const report = gate(branch.files, resolved.baseline, defaultKnowledgeBase(), options);
  return {
    resolved,
    headSha: info.headSha,
    report,
    texts: branch.texts,
    files: branch.files.length,
    parsed: branch.files,
    options,
  };
}
