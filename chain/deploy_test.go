package chain

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// laggingHead answers with a deployment's receipt while its latest block
// still has no code for hiddenFor more reads, as a node does between
// writing a block and moving its head to it.
type laggingHead struct {
	hiddenFor int
	codeReads int
}

func (b *laggingHead) TransactionReceipt(context.Context, common.Hash) (*types.Receipt, error) {
	return &types.Receipt{Status: types.ReceiptStatusSuccessful, ContractAddress: common.HexToAddress("0xc0de")}, nil
}

func (b *laggingHead) CodeAt(_ context.Context, _ common.Address, block *big.Int) ([]byte, error) {
	if block != nil {
		return nil, errors.New("want the latest block")
	}
	b.codeReads++
	if b.codeReads <= b.hiddenFor {
		return nil, nil
	}
	return []byte{0x60}, nil
}

// A deployment's wait returns once the contract is readable at the latest
// block, not at its receipt; a call's wait does not read code.
func TestWaitMinedWaitsForCode(t *testing.T) {
	deployment := types.NewTx(&types.LegacyTx{Nonce: 1})
	b := &laggingHead{hiddenFor: 2}
	if err := WaitMined(context.Background(), b)(deployment); err != nil {
		t.Fatal(err)
	}
	if b.codeReads != 3 {
		t.Fatalf("returned after %d reads of the code, want 3", b.codeReads)
	}

	call := types.NewTx(&types.LegacyTx{Nonce: 2, To: &common.Address{1}})
	b = &laggingHead{hiddenFor: 1 << 30}
	if err := WaitMined(context.Background(), b)(call); err != nil || b.codeReads != 0 {
		t.Fatalf("call: %v after %d reads of code", err, b.codeReads)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	b = &laggingHead{hiddenFor: 1 << 30}
	if err := WaitMined(ctx, b)(deployment); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("code never visible: %v", err)
	}
}
