package chain

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/forecast-arena/arena/chain/bindings"
)

// Addresses are a deployment's contracts.
type Addresses struct {
	RoundManager      common.Address `json:"round_manager"`
	PredictionArena   common.Address `json:"prediction_arena"`
	ConditionalTokens common.Address `json:"conditional_tokens"`
}

// Backend is what deployment and the relayer need of a chain client.
type Backend interface {
	bind.ContractBackend
	bind.DeployBackend
}

// Deploy deploys a RoundManager whose curator is curator and a
// PredictionArena reading outcomes from ctf; with a zero ctf it first
// deploys a MockConditionalTokens (local chains and tests). It waits for
// each deployment to be mined when wait is set (a simulated backend mines
// on Commit instead, so its callers pass false and commit).
func Deploy(opts *bind.TransactOpts, b Backend, curator, ctf common.Address, wait func(*types.Transaction) error) (Addresses, error) {
	var a Addresses
	if ctf == (common.Address{}) {
		addr, tx, _, err := bindings.DeployMockConditionalTokens(opts, b)
		if err != nil {
			return a, fmt.Errorf("chain: deploy MockConditionalTokens: %w", err)
		}
		next(opts)
		if err := wait(tx); err != nil {
			return a, fmt.Errorf("chain: deploy MockConditionalTokens: %w", err)
		}
		ctf = addr
	}
	a.ConditionalTokens = ctf
	addr, tx, _, err := bindings.DeployRoundManager(opts, b, curator)
	if err != nil {
		return a, fmt.Errorf("chain: deploy RoundManager: %w", err)
	}
	next(opts)
	if err := wait(tx); err != nil {
		return a, fmt.Errorf("chain: deploy RoundManager: %w", err)
	}
	a.RoundManager = addr
	addr, tx, _, err = bindings.DeployPredictionArena(opts, b, a.RoundManager, ctf)
	if err != nil {
		return a, fmt.Errorf("chain: deploy PredictionArena: %w", err)
	}
	next(opts)
	if err := wait(tx); err != nil {
		return a, fmt.Errorf("chain: deploy PredictionArena: %w", err)
	}
	a.PredictionArena = addr
	return a, nil
}

// next advances an explicit nonce in opts past a sent transaction.
func next(opts *bind.TransactOpts) {
	if opts.Nonce != nil {
		opts.Nonce = new(big.Int).Add(opts.Nonce, big.NewInt(1))
	}
}

// WaitMined returns a wait function for Deploy that blocks until the
// transaction is mined and fails when it reverted. For a deployment it
// also waits until the contract's code is visible at the latest block: a
// node may answer with the receipt a moment before it moves its head to
// the receipt's block, and a status read in that moment finds no contract.
func WaitMined(ctx context.Context, b bind.DeployBackend) func(*types.Transaction) error {
	return func(tx *types.Transaction) error {
		r, err := bind.WaitMined(ctx, b, tx)
		if err != nil {
			return err
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
		}
		if tx.To() != nil {
			return nil
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			code, err := b.CodeAt(ctx, r.ContractAddress, nil)
			if err != nil {
				return err
			}
			if len(code) > 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("no code at %s after its deployment was mined: %w", r.ContractAddress.Hex(), ctx.Err())
			case <-tick.C:
			}
		}
	}
}
