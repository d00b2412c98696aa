import { projectName } from '../../src/analysis/packages.js';
import type { UnitPackage } from '../../src/analysis/units.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { publicVersion } from '../../src/versions.js';

export default defineRule({
  id: 'companion-mismatch',
  description: 'torch, torchvision, torchaudio, xformers and triton versions belong together',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: {
    companion: '{{name}} {{version}} does not belong to torch {{torch}} (it belongs to {{expected}})',
    noCompanion: '{{name}} {{version}} is installed with torch {{torch}}, for which PyTorch published no {{name}} release',
    pinnedTorch: '{{name}} {{version}} is built against torch {{expected}}, but torch {{torch}} is pinned',
    triton: 'triton {{version}} is installed with torch {{torch}}, whose Linux wheel requires triton {{expected}}',
  },
  check({ units, kb, report }) {
    for (const unit of units) {
      const torch = unit.packages.find(({ pkg }) => projectName(pkg) === 'torch' && pkg.exact);
      if (!torch) continue;
      const torchVersion = publicVersion(torch.pkg.exact!);
      const release = kb.torchRelease(torchVersion);
      const related = [{ file: torch.file, span: torch.pkg.span, message: `torch ${torchVersion} is pinned here` }];
      for (const entry of unit.packages) {
        const { file, pkg } = entry;
        const name = projectName(pkg);
        if (!pkg.exact || entry === torch) continue;
        const version = publicVersion(pkg.exact);
        if ((name === 'torchvision' || name === 'torchaudio') && release) {
          const allowed = release[name];
          if (allowed.includes(version)) continue;
          if (allowed.length === 0) {
            report({ messageId: 'noCompanion', data: { name, version, torch: torchVersion }, file, span: pkg.span, related, severity: 'notice', help: `${release.note ?? ''} Source: ${cite(release)}` });
            continue;
          }
          const owner = kb.torchForCompanion(name, version)[0];
          const fix = companionFix(entry, allowed[0]!);
          report({
            messageId: 'companion',
            data: { name, version, torch: torchVersion, expected: owner ? `torch ${owner.version}` : 'no torch release in the knowledge base' },
            file,
            span: pkg.span,
            related,
            unverified: isUnverified(release),
            help: `Each torch release has one matching ${name} release, built against its C++ ABI; mixing them fails at import ("undefined symbol") or pulls another torch. torch ${torchVersion} pairs with ${name} ${allowed.join(' or ')}. Source: ${cite(release)}`,
            ...(fix ? { fix } : {}),
          });
        } else if (name === 'xformers') {
          const pin = kb.companionPins('xformers').find((row) => row.version === version);
          if (!pin || pin.torch === torchVersion) continue;
          report({ messageId: 'pinnedTorch', data: { name, version, expected: pin.torch, torch: torchVersion }, file, span: pkg.span, related, unverified: isUnverified(pin), help: `xformers wheels are compiled against one exact torch and require it; pip would replace torch ${torchVersion} or the import fails. ${pin.note ?? ''} Source: ${cite(pin)}` });
        } else if (name === 'triton' && pkg.ecosystem === 'pip') {
          const pin = kb.companionPins('triton').find((row) => row.torch === torchVersion);
          if (!pin || pin.version === version) continue;
          report({ messageId: 'triton', data: { version, torch: torchVersion, expected: pin.version }, file, span: pkg.span, related, unverified: isUnverified(pin), help: `The torch wheel pins triton exactly (Requires-Dist), so pip either refuses the combination or replaces one of them. Source: ${cite(pin)}` });
        }
      }
    }
  },
});

function companionFix({ file, pkg }: UnitPackage, version: string): Fix | undefined {
  const clause = pkg.clauses[0];
  if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version) return undefined;
  const current = publicVersion(clause.version);
  return { title: `Use ${pkg.rawName} ${version}`, safety: 'safe', edits: [{ path: file.path, range: [clause.versionSpan.start, clause.versionSpan.start + current.length], text: version }] };
}
