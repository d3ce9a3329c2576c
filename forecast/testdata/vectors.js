// Generates testdata/vectors.json independently of the Go code (ethers v6):
//   npm install ethers@6 && node vectors.js > vectors.json
// The Go tests check the package against the committed output.
const { ethers } = require('ethers');
const key = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const w = new ethers.Wallet(key);
const preds = [6500, 0, 10000, 3333, 5000, 120, 9999];
const salt = '0x' + Array.from({length:32},(_,i)=>(i+1).toString(16).padStart(2,'0')).join('');
const roundId = 42n;
const types = ['uint256','address', ...preds.map(()=> 'uint16'), 'bytes32'];
const commitHash = ethers.solidityPackedKeccak256(types, [roundId, w.address, ...preds, salt]);
const compat = ethers.solidityPackedKeccak256(['uint256','uint16','uint16','bytes32'], [1n, 7500, 3000, '0x'+'00'.repeat(31)+'01']);
const predictionsHash = ethers.solidityPackedKeccak256(preds.map(()=>'uint16'), preds);
const reasons = ["Polls \"tighten\" <b>&</b> / ok", "line1\nline2\ttab\u0001\u001f\u007f", "émoji 🎲 \u2028 sep", "", "back\\slash", "\b\f\r", "plain"];
const canon = JSON.stringify(reasons);
const reasoningHash = ethers.keccak256(ethers.toUtf8Bytes(canon));
const T = {
  Commit: [
    {name:'roundId',type:'uint256'},{name:'commitHash',type:'bytes32'},{name:'reasoningHash',type:'bytes32'},
    {name:'agent',type:'address'},{name:'nonce',type:'uint256'},{name:'deadline',type:'uint256'}],
  Reveal: [
    {name:'roundId',type:'uint256'},{name:'predictionsHash',type:'bytes32'},{name:'salt',type:'bytes32'},
    {name:'agent',type:'address'},{name:'nonce',type:'uint256'},{name:'deadline',type:'uint256'}],
};
const domains = [
  {name:'ForecastArena', version:'1', chainId: 0, verifyingContract: ethers.ZeroAddress},
  {name:'ForecastArena', version:'1', chainId: 31337, verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3'},
];
const deadline = 1767225600n;
const out = {key, address: w.address, round_id: 42, predictions: preds, salt, commit_hash: commitHash,
  predictions_hash: predictionsHash, reasons, canonical_reasoning: canon, reasoning_hash: reasoningHash,
  compat_commit_hash: compat, deadline: Number(deadline), domains: []};
(async () => {
for (const d of domains) {
  const c = {roundId, commitHash, reasoningHash, agent: w.address, nonce: 0n, deadline};
  const r = {roundId, predictionsHash, salt, agent: w.address, nonce: 1n, deadline};
  const ct = {Commit: T.Commit}, rt = {Reveal: T.Reveal};
  out.domains.push({chain_id: d.chainId, verifying_contract: d.verifyingContract,
    separator: ethers.TypedDataEncoder.hashDomain(d),
    commit_digest: ethers.TypedDataEncoder.hash(d, ct, c),
    commit_signature: await w.signTypedData(d, ct, c),
    reveal_digest: ethers.TypedDataEncoder.hash(d, rt, r),
    reveal_signature: await w.signTypedData(d, rt, r)});
}
console.log(JSON.stringify(out, null, 2));
})();
