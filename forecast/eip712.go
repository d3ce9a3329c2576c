package forecast

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
)

// EIP-712 names and type strings. The digests are hand-built from
// these with keccak256 for speed; tests check them against ethers, the
// EIP-712 specification's own example and (in package chain, which links
// go-ethereum whole) go-ethereum's generic encoder.
const (
	DomainName    = "ForecastArena"
	DomainVersion = "1"

	domainType = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
	commitType = "Commit(uint256 roundId,bytes32 commitHash,bytes32 reasoningHash,address agent,uint256 nonce,uint256 deadline)"
	revealType = "Reveal(uint256 roundId,bytes32 predictionsHash,bytes32 salt,address agent,uint256 nonce,uint256 deadline)"
	// A profile has a version of its own instead of the agent's nonce, so
	// that updating it never makes a commit or reveal signed meanwhile
	// stale.
	profileType = "Profile(address agent,string name,string organisation,string model,string homepage,string description,uint256 version,uint256 deadline)"
)

var (
	domainTypeHash  = crypto.Keccak256Hash([]byte(domainType))
	commitTypeHash  = crypto.Keccak256Hash([]byte(commitType))
	revealTypeHash  = crypto.Keccak256Hash([]byte(revealType))
	profileTypeHash = crypto.Keccak256Hash([]byte(profileType))
	nameHash        = crypto.Keccak256Hash([]byte(DomainName))
	versionHash     = crypto.Keccak256Hash([]byte(DomainVersion))
)

// Domain is the EIP-712 domain an arena signs under. Without a chain both
// fields are zero (chainId 0, the zero address); the domain always encodes
// all four fields, so a signature never transfers between arenas that
// differ in either.
type Domain struct {
	ChainID  uint64         `json:"chain_id"`
	Contract common.Address `json:"verifying_contract"`
}

// DeploymentKey is the setting that holds this deployment's identifier.
const DeploymentKey = "forecast.deployment_id"

// LocalDomain returns d, unless d names no chain (chain id 0 and no
// contract): then the verifying contract is this deployment's own
// identifier, drawn at random the first time and kept in s (the first
// writer wins across replicas). A signature made for one arena is thereby
// void at every other, so a commit cannot be replayed elsewhere.
func LocalDomain(ctx context.Context, d Domain, s arena.SettingStore) (Domain, error) {
	if d.ChainID != 0 || d.Contract != (common.Address{}) {
		return d, nil
	}
	var id common.Address
	if _, err := rand.Read(id[:]); err != nil {
		return Domain{}, fmt.Errorf("forecast: draw the deployment identifier: %w", err)
	}
	v, err := s.InitSetting(ctx, DeploymentKey, id.Hex())
	if err != nil {
		return Domain{}, err
	}
	if !common.IsHexAddress(v) {
		return Domain{}, fmt.Errorf("forecast: stored deployment identifier %q is not an address", v)
	}
	d.Contract = common.HexToAddress(v)
	return d, nil
}

// Commit is the signed commit message. ReasoningHash is zero when the agent
// commits no reasoning. Deadline is a Unix time in seconds.
type Commit struct {
	RoundID       uint64         `json:"round_id"`
	CommitHash    common.Hash    `json:"commit_hash"`
	ReasoningHash common.Hash    `json:"reasoning_hash"`
	Agent         common.Address `json:"agent"`
	Nonce         uint64         `json:"nonce"`
	Deadline      uint64         `json:"deadline"`
}

// Reveal is the signed reveal message. It is signed over
// PredictionsHash(Predictions), so the predictions travel in clear next to
// the signature.
type Reveal struct {
	RoundID     uint64         `json:"round_id"`
	Predictions []uint16       `json:"predictions"`
	Salt        common.Hash    `json:"salt"`
	Agent       common.Address `json:"agent"`
	Nonce       uint64         `json:"nonce"`
	Deadline    uint64         `json:"deadline"`
}

// Profile is the signed profile message: what an agent says about itself.
// Version is the agent's count of accepted profile updates, this one
// included (1 for the first); Deadline is a Unix time in seconds.
type Profile struct {
	Agent common.Address `json:"agent"`
	ProfileFields
	Version  uint64 `json:"version"`
	Deadline uint64 `json:"deadline"`
}

// Separator is the EIP-712 domain separator hashStruct(EIP712Domain).
func (d Domain) Separator() common.Hash {
	return separator(nameHash, versionHash, d.ChainID, d.Contract)
}

func separator(nameHash, versionHash common.Hash, chainID uint64, contract common.Address) common.Hash {
	var buf [5 * 32]byte
	copy(buf[0:], domainTypeHash[:])
	copy(buf[32:], nameHash[:])
	copy(buf[64:], versionHash[:])
	putUint256(buf[96:128], chainID)
	copy(buf[128+12:], contract[:])
	return crypto.Keccak256Hash(buf[:])
}

// CommitDigest is the EIP-712 digest keccak256(0x1901 ‖ separator ‖ hashStruct(c)) an agent signs.
func (d Domain) CommitDigest(c Commit) common.Hash {
	var buf [7 * 32]byte
	copy(buf[0:], commitTypeHash[:])
	putUint256(buf[32:64], c.RoundID)
	copy(buf[64:], c.CommitHash[:])
	copy(buf[96:], c.ReasoningHash[:])
	copy(buf[128+12:], c.Agent[:])
	putUint256(buf[160:192], c.Nonce)
	putUint256(buf[192:224], c.Deadline)
	return d.digest(crypto.Keccak256Hash(buf[:]))
}

// RevealDigest is the EIP-712 digest of a reveal.
func (d Domain) RevealDigest(r Reveal) common.Hash {
	var buf [7 * 32]byte
	ph := PredictionsHash(r.Predictions)
	copy(buf[0:], revealTypeHash[:])
	putUint256(buf[32:64], r.RoundID)
	copy(buf[64:], ph[:])
	copy(buf[96:], r.Salt[:])
	copy(buf[128+12:], r.Agent[:])
	putUint256(buf[160:192], r.Nonce)
	putUint256(buf[192:224], r.Deadline)
	return d.digest(crypto.Keccak256Hash(buf[:]))
}

// ProfileDigest is the EIP-712 digest of a profile; each string is
// encoded as the keccak256 of its UTF-8 bytes.
func (d Domain) ProfileDigest(p Profile) common.Hash {
	var buf [9 * 32]byte
	copy(buf[0:], profileTypeHash[:])
	copy(buf[32+12:], p.Agent[:])
	for i, s := range []string{p.Name, p.Organisation, p.Model, p.Homepage, p.Description} {
		h := crypto.Keccak256Hash([]byte(s))
		copy(buf[64+32*i:], h[:])
	}
	putUint256(buf[224:256], p.Version)
	putUint256(buf[256:288], p.Deadline)
	return d.digest(crypto.Keccak256Hash(buf[:]))
}

func (d Domain) digest(structHash common.Hash) common.Hash {
	return typedDigest(d.Separator(), structHash)
}

func typedDigest(sep, structHash common.Hash) common.Hash {
	var buf [2 + 64]byte
	buf[0], buf[1] = 0x19, 0x01
	copy(buf[2:], sep[:])
	copy(buf[34:], structHash[:])
	return crypto.Keccak256Hash(buf[:])
}

func putUint256(w []byte, v uint64) {
	clear(w[:24])
	binary.BigEndian.PutUint64(w[24:32], v)
}

// VerifyCommit checks sig over c's digest and that it was made by c.Agent.
// A signature for another domain recovers some other address, so it fails
// with signer_mismatch.
func (d Domain) VerifyCommit(c Commit, sig []byte) error {
	return verify(d.CommitDigest(c), sig, c.Agent)
}

// VerifyReveal checks sig over r's digest and that it was made by r.Agent.
func (d Domain) VerifyReveal(r Reveal, sig []byte) error {
	return verify(d.RevealDigest(r), sig, r.Agent)
}

// VerifyProfile checks sig over p's digest and that it was made by p.Agent.
func (d Domain) VerifyProfile(p Profile, sig []byte) error {
	return verify(d.ProfileDigest(p), sig, p.Agent)
}

func verify(digest common.Hash, sig []byte, agent common.Address) error {
	signer, err := Recover(digest, sig)
	if err != nil {
		return err
	}
	if signer != agent {
		return Reject(CodeSignerMismatch, "signature is by %s, not by agent %s", signer.Hex(), agent.Hex())
	}
	return nil
}

// CheckRequest compares the chain id and verifying contract a request names,
// when it names them (nil: not given), with d.
func (d Domain) CheckRequest(chainID *uint64, contract *common.Address) error {
	if chainID != nil && *chainID != d.ChainID {
		return Reject(CodeDomainMismatch, "chain id %d: this arena signs with chain id %d", *chainID, d.ChainID)
	}
	if contract != nil && *contract != d.Contract {
		return Reject(CodeDomainMismatch, "verifying contract %s: this arena signs with %s", contract.Hex(), d.Contract.Hex())
	}
	return nil
}

// TypedData is a message as EIP-712 typed data: the JSON that
// eth_signTypedData_v4 takes, for agents that sign with a wallet.
// Integers are decimal strings, hashes and addresses hex strings.
type TypedData struct {
	Types       map[string][]TypedField `json:"types"`
	PrimaryType string                  `json:"primaryType"`
	Domain      TypedDomain             `json:"domain"`
	Message     map[string]any          `json:"message"`
}

// TypedField is one field of an EIP-712 struct type.
type TypedField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// TypedDomain is the EIP712Domain of a TypedData.
type TypedDomain struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	ChainID           uint64 `json:"chainId"`
	VerifyingContract string `json:"verifyingContract"`
}

// typedDataTypes are the field lists of the type strings above. A fresh
// map each call, so callers may modify what they get.
func typedDataTypes() map[string][]TypedField {
	return map[string][]TypedField{
		"EIP712Domain": {
			{Name: "name", Type: "string"},
			{Name: "version", Type: "string"},
			{Name: "chainId", Type: "uint256"},
			{Name: "verifyingContract", Type: "address"},
		},
		"Commit": {
			{Name: "roundId", Type: "uint256"},
			{Name: "commitHash", Type: "bytes32"},
			{Name: "reasoningHash", Type: "bytes32"},
			{Name: "agent", Type: "address"},
			{Name: "nonce", Type: "uint256"},
			{Name: "deadline", Type: "uint256"},
		},
		"Reveal": {
			{Name: "roundId", Type: "uint256"},
			{Name: "predictionsHash", Type: "bytes32"},
			{Name: "salt", Type: "bytes32"},
			{Name: "agent", Type: "address"},
			{Name: "nonce", Type: "uint256"},
			{Name: "deadline", Type: "uint256"},
		},
		"Profile": {
			{Name: "agent", Type: "address"},
			{Name: "name", Type: "string"},
			{Name: "organisation", Type: "string"},
			{Name: "model", Type: "string"},
			{Name: "homepage", Type: "string"},
			{Name: "description", Type: "string"},
			{Name: "version", Type: "uint256"},
			{Name: "deadline", Type: "uint256"},
		},
	}
}

func (d Domain) typedDataDomain() TypedDomain {
	return TypedDomain{Name: DomainName, Version: DomainVersion, ChainID: d.ChainID, VerifyingContract: d.Contract.Hex()}
}

func dec(v uint64) string { return strconv.FormatUint(v, 10) }

// CommitTypedData is c as EIP-712 typed data.
func (d Domain) CommitTypedData(c Commit) TypedData {
	return TypedData{
		Types:       typedDataTypes(),
		PrimaryType: "Commit",
		Domain:      d.typedDataDomain(),
		Message: map[string]any{
			"roundId":       dec(c.RoundID),
			"commitHash":    c.CommitHash.Hex(),
			"reasoningHash": c.ReasoningHash.Hex(),
			"agent":         c.Agent.Hex(),
			"nonce":         dec(c.Nonce),
			"deadline":      dec(c.Deadline),
		},
	}
}

// RevealTypedData is r as EIP-712 typed data.
func (d Domain) RevealTypedData(r Reveal) TypedData {
	return TypedData{
		Types:       typedDataTypes(),
		PrimaryType: "Reveal",
		Domain:      d.typedDataDomain(),
		Message: map[string]any{
			"roundId":         dec(r.RoundID),
			"predictionsHash": PredictionsHash(r.Predictions).Hex(),
			"salt":            r.Salt.Hex(),
			"agent":           r.Agent.Hex(),
			"nonce":           dec(r.Nonce),
			"deadline":        dec(r.Deadline),
		},
	}
}

// ProfileTypedData is p as EIP-712 typed data.
func (d Domain) ProfileTypedData(p Profile) TypedData {
	return TypedData{
		Types:       typedDataTypes(),
		PrimaryType: "Profile",
		Domain:      d.typedDataDomain(),
		Message: map[string]any{
			"agent":        p.Agent.Hex(),
			"name":         p.Name,
			"organisation": p.Organisation,
			"model":        p.Model,
			"homepage":     p.Homepage,
			"description":  p.Description,
			"version":      dec(p.Version),
			"deadline":     dec(p.Deadline),
		},
	}
}
