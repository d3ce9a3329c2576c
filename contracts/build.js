// Compiles src/*.sol with the pinned solc-js into build/<Contract>.abi and
// build/<Contract>.bin. Settings are fixed (optimizer, EVM version, no
// metadata hash) so that the output is byte-for-byte reproducible.
'use strict';
const fs = require('fs');
const path = require('path');
const solc = require('solc');

const srcDir = path.join(__dirname, 'src');
const outDir = path.join(__dirname, 'build');
const sources = {};
for (const f of fs.readdirSync(srcDir).filter((f) => f.endsWith('.sol')).sort()) {
  sources[f] = { content: fs.readFileSync(path.join(srcDir, f), 'utf8') };
}
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    metadata: { bytecodeHash: 'none', appendCBOR: false },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input), {
  import: (p) => {
    const f = path.join(srcDir, path.basename(p));
    return fs.existsSync(f) ? { contents: fs.readFileSync(f, 'utf8') } : { error: 'not found: ' + p };
  },
}));
let failed = false;
for (const e of out.errors || []) {
  process.stderr.write(e.formattedMessage + '\n');
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
fs.mkdirSync(outDir, { recursive: true });
const names = [];
for (const file of Object.keys(out.contracts).sort()) {
  for (const name of Object.keys(out.contracts[file]).sort()) {
    const c = out.contracts[file][name];
    if (!c.evm.bytecode.object) continue; // interfaces
    fs.writeFileSync(path.join(outDir, name + '.abi'), JSON.stringify(c.abi, null, 1) + '\n');
    fs.writeFileSync(path.join(outDir, name + '.bin'), c.evm.bytecode.object + '\n');
    names.push(name);
  }
}
fs.writeFileSync(path.join(outDir, 'VERSION'), 'solc ' + solc.version() + '\n');
process.stdout.write(names.join('\n') + '\n');
