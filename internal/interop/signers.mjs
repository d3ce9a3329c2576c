// Recovers the signer of every commit, reveal and profile an arena exports,
// twice: with ethers 6 and with viem 2, each library hashing the messages
// its own way, under the EIP-712 domain the arena serves at /api/v1/domain
// and the message types docs/protocol.md gives. Each recovered address must
// be the entry's agent, an agent of the exported agents table; each
// exported submission's signatures must be those of its logged commit and
// reveal, and each agent's profile columns those of its latest signed
// profile.
//
// Usage: node signers.mjs BASE_URL
// Prints {"ethers","viem","commits","reveals","profiles","submissions"} as
// JSON and exits 0, or lists every mismatch on stderr and exits 1.
import { createRequire } from 'node:module';
import * as ethers from 'ethers';
import * as viem from 'viem';

const base = process.argv[2];
if (!base) {
  console.error('usage: node signers.mjs BASE_URL');
  process.exit(2);
}

async function get(path) {
  const resp = await fetch(new URL(path, base));
  if (!resp.ok) throw new Error(`GET ${path}: ${resp.status} ${await resp.text()}`);
  return resp;
}

async function table(name) {
  const text = await (await get(`/api/v1/export/${name}.jsonl`)).text();
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

const served = await (await get('/api/v1/domain')).json();
const domain = {
  name: served.name,
  version: served.version,
  chainId: served.chain_id,
  verifyingContract: served.verifying_contract,
};

const types = {
  Commit: [
    { name: 'roundId', type: 'uint256' },
    { name: 'commitHash', type: 'bytes32' },
    { name: 'reasoningHash', type: 'bytes32' },
    { name: 'agent', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  Reveal: [
    { name: 'roundId', type: 'uint256' },
    { name: 'predictionsHash', type: 'bytes32' },
    { name: 'salt', type: 'bytes32' },
    { name: 'agent', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  Profile: [
    { name: 'agent', type: 'address' },
    { name: 'name', type: 'string' },
    { name: 'organisation', type: 'string' },
    { name: 'model', type: 'string' },
    { name: 'homepage', type: 'string' },
    { name: 'description', type: 'string' },
    { name: 'version', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
};

const zero = '0x' + '00'.repeat(32);

// message is the signed message of a log entry; predictionsHash is the
// keccak256 of the predictions packed as uint16s, computed by the library
// that recovers.
function message(kind, d, predictionsHash) {
  switch (kind) {
    case 'commit':
      return ['Commit', { roundId: BigInt(d.round_id), commitHash: d.commit_hash, reasoningHash: d.reasoning_hash || zero,
        agent: d.agent, nonce: BigInt(d.nonce), deadline: BigInt(d.deadline) }];
    case 'reveal':
      return ['Reveal', { roundId: BigInt(d.round_id), predictionsHash: predictionsHash(d.predictions), salt: d.salt,
        agent: d.agent, nonce: BigInt(d.nonce), deadline: BigInt(d.deadline) }];
    default:
      return ['Profile', { agent: d.agent, name: d.name, organisation: d.organisation, model: d.model, homepage: d.homepage,
        description: d.description, version: BigInt(d.version), deadline: BigInt(d.deadline) }];
  }
}

const ethersPredictions = (p) => ethers.solidityPackedKeccak256(p.map(() => 'uint16'), p);
const viemPredictions = (p) => viem.keccak256(viem.encodePacked(p.map(() => 'uint16'), p));

const problems = [];
const agents = new Map((await table('agents')).map((a) => [a.address.toLowerCase(), a]));
const counts = { commits: 0, reveals: 0, profiles: 0, submissions: 0 };
const signed = new Map(); // kind/round/agent → signature, for the submissions
const latestProfile = new Map(); // agent → its latest profile entry

for (const e of await table('log_entries')) {
  if (!['commit', 'reveal', 'profile'].includes(e.kind) || e.sealed === 'true') continue;
  const d = JSON.parse(e.leaf).data;
  const [primaryType, ethersMsg] = message(e.kind, d, ethersPredictions);
  const [, viemMsg] = message(e.kind, d, viemPredictions);
  const fields = types[primaryType];
  const byEthers = ethers.verifyTypedData(domain, { [primaryType]: fields }, ethersMsg, d.signature);
  const byViem = await viem.recoverTypedDataAddress({ domain: { ...domain, chainId: BigInt(domain.chainId) },
    types: { [primaryType]: fields }, primaryType, message: viemMsg, signature: d.signature });
  const where = `log entry ${e.idx} (${e.kind})`;
  if (byEthers.toLowerCase() !== d.agent.toLowerCase()) problems.push(`${where}: ethers recovers ${byEthers}, the entry names ${d.agent}`);
  if (byViem.toLowerCase() !== d.agent.toLowerCase()) problems.push(`${where}: viem recovers ${byViem}, the entry names ${d.agent}`);
  if (!agents.has(byEthers.toLowerCase())) problems.push(`${where}: signer ${byEthers} is not in the exported agents`);
  counts[`${e.kind}s`]++;
  signed.set(`${e.kind}/${d.round_id}/${d.agent.toLowerCase()}`, d.signature.toLowerCase());
  if (e.kind === 'profile') latestProfile.set(d.agent.toLowerCase(), d);
}

for (const s of await table('submissions')) {
  const key = `${s.round_id}/${s.agent.toLowerCase()}`;
  counts.submissions++;
  if (signed.get(`commit/${key}`) !== s.commit_sig.toLowerCase()) problems.push(`submission ${key}: commit_sig is not the logged commit's signature`);
  if (s.reveal_sig && signed.get(`reveal/${key}`) !== s.reveal_sig.toLowerCase()) problems.push(`submission ${key}: reveal_sig is not the logged reveal's signature`);
}

for (const [address, a] of agents) {
  const p = latestProfile.get(address);
  const version = Number(a.profile_version);
  if (version === 0 && !p) continue;
  if (!p || p.version !== version || p.name !== a.name || p.model !== a.model || p.organisation !== a.organisation) {
    problems.push(`agent ${a.address}: profile columns (version ${a.profile_version}, name ${JSON.stringify(a.name)}) are not its latest signed profile's`);
  }
}

if (problems.length > 0) {
  const shown = problems.slice(0, 20);
  if (problems.length > shown.length) shown.push(`… and ${problems.length - shown.length} more`);
  console.error(shown.join('\n'));
  process.exit(1);
}
const require = createRequire(import.meta.url);
console.log(JSON.stringify({ ethers: ethers.version, viem: require('viem/package.json').version, ...counts }));
