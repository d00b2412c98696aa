/** The self-service pages (server-rendered; forms work without JavaScript). */
import type { ImageVerdict } from './image.js';
import { FILE_KIND_NAMES, formatOf } from '../parsers/formats.js';
import type { Finding, Report } from '../finding.js';
import { diff } from '../render/check-run.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { matrices, OS_CHOICES, PYTHON_CHOICES, type Recommendation, type RecommendInput } from './recommend.js';
import { compareDotted } from '../util/dotted.js';
import { esc, layout, options } from './html.js';

function gpuChoices(kb: KnowledgeBase): { value: string; label: string }[] {
  return kb
    .gpus()
    .flatMap((gpu) =>
      gpu.names.slice(0, 4).map((name) => ({ value: name, label: `${name} (compute capability ${gpu.cc})` })),
    );
}

function commandBlock(id: string, label: string, text: string): string {
  return `<h3 id="${id}-label">${esc(label)}</h3><div class="command"><pre id="${id}" aria-labelledby="${id}-label"><code>${esc(text)}</code></pre><button type="button" class="secondary" data-copy="${id}" aria-label="Copy ${esc(label)}">Copy</button></div>`;
}

export function recommendPage(
  kb: KnowledgeBase,
  input: RecommendInput | undefined,
  result: Recommendation | undefined,
): string {
  const torchVersions = [...kb.torchReleases()].reverse().map((row) => ({
    value: row.version,
    label: `${row.version}${row.confidence === 'unverified' ? ' (unverified)' : ''}`,
  }));
  // The default choice is the newest release the knowledge base has verified, not one marked unverified.
  const newestVerified = kb
    .torchReleases()
    .filter((row) => row.confidence !== 'unverified')
    .at(-1)?.version;
  const tfVersions = kb.tensorflowReleases().map((row) => ({ value: row.version, label: row.version }));
  const framework = input?.framework ?? 'pytorch';
  const form = `<h1>What do I install?</h1>
<p>Pick your GPU and framework; the answer lists the CUDA builds that work, the driver they need, a base image and exact install commands, with sources.</p>
<form class="grid" method="get" action="/cuda-gatekeeper/#answer">
<label>GPU model<select name="gpu" id="gpu"><option value="">(any)</option>${options(gpuChoices(kb), input?.gpu)}</select></label>
<label>Framework<select name="framework" id="framework">${options(
    [
      { value: 'pytorch', label: 'PyTorch' },
      { value: 'tensorflow', label: 'TensorFlow' },
    ],
    framework,
  )}</select></label>
<label>PyTorch version<select name="torch" id="torch">${options(torchVersions, (framework === 'pytorch' ? input?.version : undefined) ?? newestVerified)}</select></label>
<label>TensorFlow version<select name="tf" id="tf">${options(tfVersions, framework === 'tensorflow' ? input?.version : undefined)}</select></label>
<label>Python<select name="python" id="python"><option value="">(any)</option>${options(
    PYTHON_CHOICES.map((value) => ({ value, label: value })),
    input?.python,
  )}</select></label>
<label>Base image OS<select name="os" id="os">${options(
    OS_CHOICES.map((value) => ({ value, label: value })),
    input?.os ?? 'ubuntu22.04',
  )}</select></label>
<label>Your pools or node (optional)<textarea name="fleet" id="fleet" rows="3" placeholder="a pool from the baseline: { name: a100, driver: &quot;550.127.05&quot;, gpus: [A100] }&#10;or a node: nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv">${esc(input?.fleet ?? '')}</textarea></label>
${input?.driver ? `<input type="hidden" name="driver" value="${esc(input.driver)}">` : ''}
<button type="submit">Show what to install</button>
</form>
<p id="copy-status" role="status" aria-live="polite" class="sources"></p>`;
  return layout('What do I install?', form + (result ? resultSection(result) : ''), 'recommend');
}

function resultSection(result: Recommendation): string {
  const parts: string[] = ['<section aria-labelledby="answer"><h2 id="answer">Answer</h2>'];
  for (const problem of result.problems) parts.push(`<p class="problem">${esc(problem)}</p>`);
  for (const note of result.notes) parts.push(`<p class="note">${esc(note)}</p>`);
  if (result.pools?.length) {
    const word = { runs: 'runs', minor: 'runs under minor-version compatibility', fails: 'does not run' } as const;
    parts.push(
      `<p>On your pools: ${result.pools.map((pool) => `<span class="${pool.verdict === 'fails' ? 'bad' : 'ok'}">${esc(pool.name)} (driver ${esc(pool.driver)}) ${word[pool.verdict]}${pool.reason ? `: ${esc(pool.reason)}` : ''}</span>`).join('; ')}.</p>`,
    );
  }
  if (result.gpu)
    parts.push(
      `<p>${esc(result.gpu.name)}: compute capability ${esc(result.gpu.cc)}, needs CUDA ≥ ${esc(result.gpu.minCuda)}.</p>`,
    );
  // The commands first: on a phone the first one is on the screen with the answer; the table of every build follows.
  if (result.install) {
    const install = result.install;
    parts.push(
      `<h3>Recommended: CUDA ${esc(install.cuda)}, driver ≥ ${esc(install.driverFull)} (≥ ${esc(install.driverFloor)} under minor-version compatibility)</h3>`,
    );
    parts.push(commandBlock('image', 'Base image', install.image));
    parts.push(commandBlock('pip', 'pip', install.pip));
    parts.push(commandBlock('requirements', 'requirements.txt', install.requirements));
    if (install.conda) parts.push(commandBlock('conda', 'conda', install.conda));
    else if (install.condaNote) parts.push(`<p class="note">${esc(install.condaNote)}</p>`);
    parts.push(commandBlock('dockerfile', 'Dockerfile', install.dockerfile));
  }
  if (result.options.length) {
    parts.push(
      `<h3>CUDA builds of ${esc(result.input.framework === 'tensorflow' ? 'TensorFlow' : 'torch')} ${esc(result.version ?? '')}</h3><div class="scroll"><table><thead><tr><th scope="col">CUDA</th><th scope="col">Works</th><th scope="col">Driver (full support)</th><th scope="col">Driver floor (minor-version compatibility)</th><th scope="col">Notes</th></tr></thead><tbody>`,
    );
    for (const option of result.options) {
      parts.push(
        `<tr><td>${esc(option.cuda)}${option.tag ? ` (${esc(option.tag)}${option.pypi ? ', PyPI' : ''})` : ''}</td><td class="${option.works ? 'ok' : 'bad'}">${option.works ? 'yes' : 'no'}</td><td>≥ ${esc(option.driverFull ?? '?')}</td><td>≥ ${esc(option.driverFloor ?? '?')}</td><td>${esc(option.reasons.join('; '))}</td></tr>`,
      );
    }
    parts.push('</tbody></table></div>');
  }
  parts.push(
    `<h3>Sources</h3><ul class="sources">${result.sources.map((source) => `<li>${linkedSource(source)}</li>`).join('')}</ul></section>`,
  );
  return parts.join('\n');
}

export function matrixPage(kb: KnowledgeBase): string {
  const data = matrices(kb);
  const torchRows = data.torch.rows
    .slice()
    .sort((a, b) => compareDotted(b.version, a.version))
    .map(
      (row) =>
        `<tr><th scope="row">${esc(row.version)}${row.unverified ? ' *' : ''}</th>${row.cells.map((cell) => `<td>${cell === 'pypi' ? '● PyPI' : cell === 'index' ? '●' : ''}</td>`).join('')}</tr>`,
    )
    .join('');
  const driverRows = data.drivers
    .map(
      (row) =>
        `<tr><th scope="row">${esc(row.cuda)}${row.unverified ? ' *' : ''}</th><td>${esc(row.ga || '—')}</td><td>${esc(row.latest || '—')}</td><td>${esc(row.floor)}</td></tr>`,
    )
    .join('');
  return layout(
    'Compatibility matrix',
    `<h1>Compatibility matrix</h1>
<p>Data retrieved ${esc(data.retrieved)}. ● a CUDA wheel on download.pytorch.org; PyTorch's plain PyPI wheel for Linux x86_64 is marked PyPI. * unverified.</p>
<h2>PyTorch × CUDA</h2><div class="scroll"><table><thead><tr><th scope="col">torch</th>${data.torch.columns.map((tag) => `<th scope="col">${esc(tag)}</th>`).join('')}</tr></thead><tbody>${torchRows}</tbody></table></div>
<h2>CUDA × NVIDIA driver (Linux)</h2><div class="scroll"><table><thead><tr><th scope="col">CUDA</th><th scope="col">GA driver</th><th scope="col">newest update's driver</th><th scope="col">minor-version-compatibility floor</th></tr></thead><tbody>${driverRows}</tbody></table></div>
<p class="sources">Sources: NVIDIA CUDA Toolkit Release Notes (Table 3); pytorch.org published_versions.json and previous-versions; PyTorch RELEASE.md.</p>`,
    'matrix',
  );
}

/** A fix as the pull request shows it: its title and safety, and the edit as a diff of the pasted file. */
function fixBlock(fix: NonNullable<Finding['fix']>, text: string): string {
  const shown = diff(fix.edits, new Map(fix.edits.map((edit) => [edit.path, text])));
  return `<div class="fix"><span>Fix (${esc(fix.safety)}): ${esc(fix.title)}</span>${
    shown
      ? `<pre class="diff" aria-label="The fix as a diff">${shown
          .split('\n')
          .map(
            (line) =>
              `<span class="${line.startsWith('+ ') ? 'add' : line.startsWith('- ') ? 'del' : 'file'}">${esc(line)}</span>`,
          )
          .join('\n')}</pre>`
      : ''
  }</div>`;
}

/** A source as text with its web addresses as links (the knowledge base cites pages by URL). */
export function linkedSource(source: string): string {
  return source
    .split(/(https?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:])/)
    .map((part, i) => (i % 2 === 1 ? `<a href="${esc(part)}" rel="noopener noreferrer">${esc(part)}</a>` : esc(part)))
    .join('');
}

export const KINDS = FILE_KIND_NAMES.map((value) => ({ value, label: formatOf(value).fileName }));

export function checkPage(
  input: { kind?: string; text?: string; baseline?: string; custom?: string },
  report: Report | undefined,
  policyProblems: readonly string[],
  error?: string,
): string {
  const findings = report
    ? report.findings.length === 0
      ? '<p class="ok">No problems found.</p>'
      : `<ol>${report.findings
          .map(
            (finding) =>
              `<li><strong class="${finding.severity === 'error' ? 'bad' : finding.severity === 'warning' ? 'warn' : ''}">${esc(finding.severity)}</strong> line ${finding.location.start.line}: ${esc(finding.message)} <code>${esc(finding.ruleId)}</code>${finding.help ? `<br><span class="sources">${linkedSource(finding.help)}</span>` : ''}${finding.fix ? fixBlock(finding.fix, input.text ?? '') : ''}</li>`,
          )
          .join('')}</ol>`
    : '';
  const problems = policyProblems.map((problem) => `<p class="problem">Baseline: ${esc(problem)}</p>`).join('');
  return layout(
    'Check a snippet',
    `<h1>Check a snippet</h1>
<p>Paste a Dockerfile, requirements file or conda environment: you get the same findings and fixes as on a pull request.</p>
${error ? `<p class="problem" role="alert">Not checked: ${esc(error)}</p>` : ''}
<form method="post" action="/cuda-gatekeeper/check">
<div class="grid" style="display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.75rem 1rem">
<label>File type<select name="kind" id="kind">${options(
      KINDS.map((kind) => ({ ...kind })),
      input.kind ?? 'requirements',
    )}</select></label>
<label>Baseline<select name="baseline" id="baseline">${options(
      [
        { value: 'bundled', label: 'cuda-gatekeeper default' },
        { value: 'none', label: 'none (consistency rules only)' },
        { value: 'custom', label: 'my own (below)' },
      ],
      input.baseline ?? 'bundled',
    )}</select></label>
</div>
<label>File content<textarea name="text" id="text" spellcheck="false" required>${esc(input.text ?? '')}</textarea></label>
<label>Your baseline (YAML, used when "my own" is selected)<textarea name="custom" id="custom" spellcheck="false" style="min-height:6rem">${esc(input.custom ?? '')}</textarea></label>
<p><button type="submit">Check</button></p>
</form>
${report ? `<section aria-labelledby="results"><h2 id="results">Findings</h2>${problems}${findings}</section>` : ''}`,
    'check',
  );
}

export const API_DOC = `cuda-gatekeeper JSON API

GET  /cuda-gatekeeper/api/recommend?framework=pytorch|tensorflow&version=2.7.1&gpu=H100&python=3.11&os=ubuntu22.04&driver=550.54.14  (or &fleet=<pasted pools or an nvidia-smi line>)
     → { input, problems[], notes[], gpu?, version, options[{ cuda, tag, works, reasons[], driverFull, driverFloor, pypi }], install?{ cuda, image, pip, requirements, conda?, condaNote?, dockerfile, driverFull, driverFloor }, pools?[{ name, driver, verdict: runs|minor|fails, reason? }], sources[] }
GET  /cuda-gatekeeper/api/image?image=nvcr.io/nvidia/tritonserver:25.10-py3&fleet=<pasted pools or an nvidia-smi line>
GET  /cuda-gatekeeper/api/matrix
     → { torch: { columns[], rows[{ version, unverified, cells[] }] }, drivers[{ cuda, ga, latest, floor, unverified }], retrieved }
POST /cuda-gatekeeper/api/check   (application/json) { "kind": "dockerfile|requirements|conda", "text": "...", "baseline": "bundled|none|<YAML>" }
     → { counts, findings[] } (the same findings as cuda-gatekeeper check --format json), or 400 with { error } for bad input
GET  /healthz → { status: "ok" }
GET  /metrics → Prometheus text format
`;

/** "Will this image run on my pools?": an image reference and pasted pools in, the verdict per pool out. */
export function imagePage(
  input: { readonly image?: string; readonly fleet?: string },
  verdict: ImageVerdict | undefined,
): string {
  const form = `<h1>Will this image run?</h1>
<p>Name an image and paste your pools (or a node's <code>nvidia-smi</code> line): the answer says its CUDA, with the source, and whether each pool's driver and container toolkit run it.</p>
<form class="grid" method="get" action="/cuda-gatekeeper/image#image-answer">
<label>Image<input name="image" id="image" required maxlength="256" spellcheck="false" placeholder="nvcr.io/nvidia/tritonserver:25.10-py3" value="${esc(input.image ?? '')}"></label>
<label>Your pools or node<textarea name="fleet" id="image-fleet" rows="3" placeholder="{ name: a100, driver: &quot;550.127.05&quot;, gpus: [A100], runtime: legacy }">${esc(input.fleet ?? '')}</textarea></label>
<button type="submit">Check the image</button>
</form>`;
  return layout('Will this image run?', form + (verdict ? imageSection(verdict) : ''), 'image');
}

function imageSection(verdict: ImageVerdict): string {
  const word: Readonly<Record<string, string>> = {
    runs: 'runs',
    minor: 'runs under minor-version compatibility',
    forward: 'runs through forward compatibility',
    unknown: 'may not run (what decides it is not known)',
    fails: 'does not run',
    'not-scheduled': 'is not scheduled there',
  };
  const parts = ['<section aria-labelledby="image-answer"><h2 id="image-answer">Answer</h2>'];
  for (const problem of verdict.problems) parts.push(`<p class="problem">${esc(problem)}</p>`);
  if (verdict.cuda)
    parts.push(
      `<p>${esc(verdict.image)} is CUDA ${esc(verdict.cuda.version)}${verdict.cuda.source ? ` (${linkedSource(verdict.cuda.source)})` : ''}.</p>`,
    );
  else if (verdict.unknown)
    parts.push(`<p class="note">The CUDA of ${esc(verdict.image)} is not known: ${esc(verdict.unknown)}.</p>`);
  if (verdict.pools.length)
    parts.push(
      `<ul>${verdict.pools.map((pool) => `<li class="${pool.cell.tier === 'fails' ? 'bad' : 'ok'}">${esc(pool.name)} (driver ${esc(pool.driver)}) ${word[pool.cell.tier] ?? pool.cell.tier}${pool.cell.reason ? `: ${esc(pool.cell.reason)}` : ''}</li>`).join('')}</ul>`,
    );
  for (const finding of verdict.findings)
    parts.push(
      `<p class="${finding.severity === 'error' ? 'bad' : 'note'}">${esc(finding.severity)}: ${esc(finding.message)} [${esc(finding.ruleId)}]${finding.help ? `<br><span class="sources">${esc(finding.help)}</span>` : ''}</p>`,
    );
  parts.push('</section>');
  return parts.join('\n');
}
