/**
 * The self-service page in a real browser: Debian's Chromium driven by playwright-core (no browser download).
 * Selects options with the keyboard and the mouse, copies a command, pastes a snippet. Screenshots go to
 * test-artifacts/ (and the README's screenshots to docs/screenshots/ when UPDATE_SCREENSHOTS=1).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { loadFiles } from '../../src/cli/discover.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { renderCheckRun } from '../../src/render/check-run.js';
import { webHandler } from '../../src/web/handler.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts');
const README_SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : undefined;

let server: Server;
let base: string;
let browser: Browser;

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  if (README_SHOTS) await page.screenshot({ path: join(README_SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (.ci/run does)`);
  server = createServer(
    (req, res) => void webHandler(req, res).then((handled) => handled || (res.writeHead(404), res.end())),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('self-service page in Chromium', () => {
  it('answers "what do I install?" with the keyboard and copies the pip command', async () => {
    const context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await context.newPage();
    await page.goto(`${base}/cuda-gatekeeper/`);
    await page.getByLabel('GPU model').selectOption('RTX 5090');
    await page.getByLabel('PyTorch version').selectOption('2.7.1');
    await page.getByLabel('Python').selectOption('3.11');
    // The node as nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader prints it.
    await page.getByLabel('Your pools or node (optional)').fill('NVIDIA GeForce RTX 5090, 570.124.06, 12.0');
    await page.getByLabel('Your pools or node (optional)').press('Tab');
    await page.keyboard.press('Enter'); // submit from the keyboard
    await page.waitForSelector('#answer');
    await expect(page.locator('#answer').locator('..').textContent()).resolves.toContain('(driver 570.124.06) runs');
    await expect(page.locator('#pip').textContent()).resolves.toBe(
      'pip install torch==2.7.1+cu128 torchvision==0.22.1+cu128 torchaudio==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128',
    );
    await page.getByRole('button', { name: 'Copy pip' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toContain('torch==2.7.1+cu128');
    await expect(page.locator('#copy-status').textContent()).resolves.toBe('Copied: pip');
    await shot(page, 'self-service');
    await context.close();
  }, 60_000);

  it('shows long URLs and long commands on a phone without widening the page', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    for (const path of [
      // A pip command with an index URL, and notes that quote URLs.
      '/cuda-gatekeeper/?gpu=H100&framework=pytorch&torch=2.3.1&os=ubuntu22.04',
      '/cuda-gatekeeper/?framework=pytorch&torch=2.5.1&os=rockylinux9&python=3.12',
      // An image reference far longer than the screen.
      `/cuda-gatekeeper/image?ref=${encodeURIComponent(`registry.example.com/${'very-long-team-name/'.repeat(6)}trainer:2025.11-cuda12.8.1-cudnn-runtime-ubuntu24.04`)}`,
    ]) {
      await page.goto(`${base}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, path).toBeLessThanOrEqual(390);
    }
    await context.close();
  }, 60_000);

  it('is usable on a phone-sized screen', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${base}/cuda-gatekeeper/?gpu=H100&framework=pytorch&torch=2.6.0&os=ubuntu22.04`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    // The first install command is within one screen of the answer's heading.
    const answerTop = await page
      .locator('#answer')
      .evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
    const commandBottom = await page
      .locator('#image')
      .evaluate((element) => element.getBoundingClientRect().bottom + window.scrollY);
    expect(commandBottom - answerTop).toBeLessThanOrEqual(844);
    // Words are not broken mid-word, and the sources are links.
    const breakAll = await page.evaluate(
      () =>
        [...document.querySelectorAll('*')].filter((element) => getComputedStyle(element).wordBreak === 'break-all')
          .length,
    );
    expect(breakAll).toBe(0);
    const links = await page.locator('ul.sources a[href^="https://"]').count();
    expect(links).toBeGreaterThan(0);
    await shot(page, 'self-service-mobile');
    await context.close();
  }, 60_000);

  it('checks a pasted snippet and shows the findings', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`${base}/cuda-gatekeeper/check`);
    await page.getByLabel('File type').selectOption('dockerfile');
    await page.locator('select#baseline').selectOption('none');
    await page.getByLabel('File content').fill(
      codeBlock`
        FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
        RUN pip install torch==2.4.1+cu124 --index-url https://download.pytorch.org/whl/cu124
      `,
    );
    await page.getByRole('button', { name: 'Check' }).click();
    await page.waitForSelector('#results');
    await expect(page.locator('section[aria-labelledby="results"]').textContent()).resolves.toContain(
      'torch==2.4.1+cu124 is built for CUDA 12.4, but nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04 sets CUDA 12.1',
    );
    // Each fix is shown as a diff of the pasted file.
    const diffs = page.locator('section[aria-labelledby="results"] pre.diff');
    expect(await diffs.count()).toBeGreaterThan(0);
    await expect(diffs.first().locator('.add').first().textContent()).resolves.toMatch(/^\+ /);
    await shot(page, 'check-snippet');
    await page.goto(`${base}/cuda-gatekeeper/matrix`);
    await expect(page.getByRole('heading', { name: 'PyTorch × CUDA' }).isVisible()).resolves.toBe(true);
    await shot(page, 'matrix');
    await page.close();
  }, 60_000);

  it('renders a check-run summary from real output (for the README)', async () => {
    const root = join(ROOT, 'fixtures', 'repos', 'demo');
    const { files } = loadFiles(root, ['Dockerfile', 'requirements.txt', 'environment.yml']);
    const policy = loadBaseline('.github/cuda-gatekeeper.yml', readFileSync(join(root, 'baseline.yaml'), 'utf8'));
    const report = gate(files, policy.baseline, defaultKnowledgeBase(), { policy });
    const output = renderCheckRun(report, {
      baselineOrigin: 'octo-org/demo:.github/cuda-gatekeeper.yml@4f2c1a9',
      knowledgeRetrieved: defaultKnowledgeBase().retrieved,
      texts: new Map(files.map((file) => [file.path, file.source.text])),
      skipped: [],
      relevantFiles: 3,
    });
    const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    await page.setContent(
      `<!doctype html><html><body style="font-family:system-ui,sans-serif;max-width:860px;margin:1rem auto;color:#1f2328"><div style="border:1px solid #d0d7de;border-radius:6px;padding:1rem"><h2 style="margin-top:0">✗ CUDA gatekeeper — ${output.title}</h2>${markdown(output.summary)}</div></body></html>`,
    );
    await shot(page, 'check-run-summary');
    await expect(page.locator('table').first().textContent()).resolves.toContain('requirements.txt');
    await page.close();
  }, 60_000);
});

/** Just enough Markdown for a check-run summary (headings, tables, fenced code, bold, code spans). */
function markdown(text: string): string {
  const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const inline = (value: string) =>
    escape(value)
      .replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>')
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/&lt;sub&gt;(.*)&lt;\/sub&gt;/, '<sub>$1</sub>');
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      const code: string[] = [];
      while (++i < lines.length && !lines[i]!.startsWith('```')) code.push(lines[i]!);
      out.push(
        `<pre style="background:#f6f8fa;padding:.5rem;border-radius:6px">${code.map((row) => `<span style="color:${row.startsWith('+') ? '#1a7f37' : row.startsWith('-') ? '#cf222e' : 'inherit'}">${escape(row)}</span>`).join('\n')}</pre>`,
      );
    } else if (line.startsWith('|')) {
      const rows: string[] = [];
      for (; i < lines.length && lines[i]!.startsWith('|'); i++)
        if (!/^\|[-:|]+\|$/.test(lines[i]!)) rows.push(lines[i]!);
      i--;
      out.push(
        `<table style="border-collapse:collapse">${rows
          .map(
            (row, index) =>
              `<tr>${row
                .slice(1, -1)
                .split('|')
                .map(
                  (cell) =>
                    `<${index ? 'td' : 'th'} style="border:1px solid #d0d7de;padding:.25rem .5rem">${inline(cell.trim())}</${index ? 'td' : 'th'}>`,
                )
                .join('')}</tr>`,
          )
          .join('')}</table>`,
      );
    } else if (line.startsWith('### ')) out.push(`<h3>${inline(line.slice(4))}</h3>`);
    else if (line.trim()) out.push(`<p>${inline(line)}</p>`);
  }
  return out.join('\n');
}
