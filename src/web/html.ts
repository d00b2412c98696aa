/** Tiny HTML helpers: everything interpolated into a page goes through `esc`. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );
}

export function options(values: readonly { value: string; label: string }[], selected: string | undefined): string {
  return values
    .map(
      (option) =>
        `<option value="${esc(option.value)}"${option.value === selected ? ' selected' : ''}>${esc(option.label)}</option>`,
    )
    .join('');
}

export function layout(title: string, body: string, active: 'recommend' | 'image' | 'matrix' | 'check'): string {
  const nav = [
    ['recommend', '/cuda-gatekeeper/', 'What do I install?'],
    ['image', '/cuda-gatekeeper/image', 'Will this image run?'],
    ['matrix', '/cuda-gatekeeper/matrix', 'Compatibility matrix'],
    ['check', '/cuda-gatekeeper/check', 'Check a snippet'],
  ]
    .map(([key, href, label]) => `<a href="${href}"${key === active ? ' aria-current="page"' : ''}>${label}</a>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · cuda-gatekeeper</title>
<link rel="stylesheet" href="/cuda-gatekeeper/static/style.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>cuda-gatekeeper</strong><nav aria-label="Main">${nav}</nav></header>
<main id="main">
${body}
</main>
<footer>Facts from the cuda-gatekeeper knowledge base; every answer lists its sources. <a href="/cuda-gatekeeper/api">JSON API</a></footer>
<script src="/cuda-gatekeeper/static/app.js" defer></script>
</body>
</html>`;
}

export const STYLE = `
:root { --fg: #1b1f24; --muted: #57606a; --bg: #fff; --line: #d0d7de; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --accent: #0969da; font-family: system-ui, sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
nav { display: flex; flex-wrap: wrap; gap: .75rem; }
nav a { color: var(--accent); text-decoration: none; padding: .25rem .5rem; border-radius: 6px; }
nav a[aria-current="page"] { background: #ddf4ff; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
footer { max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: var(--muted); font-size: .9rem; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: #fff; padding: .5rem; }
form.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: .75rem 1rem; align-items: end; }
label { display: flex; flex-direction: column; gap: .25rem; font-weight: 600; font-size: .95rem; }
select, input, textarea, button { font: inherit; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 6px; }
textarea { width: 100%; min-height: 14rem; font-family: ui-monospace, monospace; font-size: .9rem; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
button.secondary { background: #f6f8fa; color: var(--fg); border-color: var(--line); }
:focus-visible { outline: 3px solid #54aeff; outline-offset: 2px; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow-x: auto; margin: 0; }
.command { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: .5rem; align-items: start; margin: .5rem 0 1rem; }
.command > * { min-width: 0; }
p, li, .problem, .note, td { overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; }
.scroll { overflow-x: auto; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
.problem { border-left: 4px solid var(--bad); padding: .25rem .75rem; background: #ffebe9; }
.note { border-left: 4px solid var(--accent); padding: .25rem .75rem; background: #ddf4ff; }
.sources { font-size: .85rem; color: var(--muted); overflow-wrap: anywhere; }
.sources a { color: var(--accent); }
.fix pre.diff { margin-top: .25rem; font-size: .85rem; }
.diff .add { color: var(--ok); } .diff .del { color: var(--bad); } .diff .file { color: var(--muted); }
@media (max-width: 40rem) { .command { grid-template-columns: minmax(0, 1fr); } }
`;

export const SCRIPT = `
// Progressive enhancement only: every form works without JavaScript.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const text = document.getElementById(button.dataset.copy).textContent;
  try { await navigator.clipboard.writeText(text); } catch { const area = document.createElement('textarea'); area.value = text; document.body.append(area); area.select(); document.execCommand('copy'); area.remove(); }
  const status = document.getElementById('copy-status');
  if (status) status.textContent = 'Copied: ' + button.getAttribute('aria-label').replace(/^Copy /, '');
  button.textContent = 'Copied';
  setTimeout(() => { button.textContent = 'Copy'; }, 1500);
});
`;
