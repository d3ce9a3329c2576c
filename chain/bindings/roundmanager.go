// Code generated - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package bindings

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/event"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = errors.New
	_ = big.NewInt
	_ = strings.NewReader
	_ = ethereum.NotFound
	_ = bind.Bind
	_ = common.Big1
	_ = types.BloomLookup
	_ = event.NewSubscription
	_ = abi.ConvertType
	_ = time.Tick
	_ = context.Background
)

// RoundManagerMetaData contains all meta data concerning the RoundManager contract.
var RoundManagerMetaData = &bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"curator_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BenchmarkRange\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BenchmarksSet\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BenchmarksTooEarly\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"MarketCount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotCurator\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"RoundExists\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"RoundIdZero\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"RoundInvalidated\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"RoundNotFound\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ScheduleInvalid\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint16[]\",\"name\":\"benchmarks\",\"type\":\"uint16[]\"}],\"name\":\"BenchmarksRecorded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"bytes32[]\",\"name\":\"conditionIds\",\"type\":\"bytes32[]\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"commitDeadline\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"revealStart\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"revealDeadline\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"grace\",\"type\":\"uint64\"}],\"name\":\"RoundCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"}],\"name\":\"RoundInvalidatedEvent\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"MAX_MARKETS\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"NO_BENCHMARK\",\"outputs\":[{\"internalType\":\"uint16\",\"name\":\"\",\"type\":\"uint16\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"}],\"name\":\"benchmarksOf\",\"outputs\":[{\"internalType\":\"uint16[]\",\"name\":\"\",\"type\":\"uint16[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"}],\"name\":\"conditionIdsOf\",\"outputs\":[{\"internalType\":\"bytes32[]\",\"name\":\"\",\"type\":\"bytes32[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"},{\"internalType\":\"bytes32[]\",\"name\":\"conditionIds\",\"type\":\"bytes32[]\"},{\"internalType\":\"uint64\",\"name\":\"commitDeadline\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"revealStart\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"revealDeadline\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"grace\",\"type\":\"uint64\"}],\"name\":\"createRound\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"curator\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"}],\"name\":\"getRound\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"exists\",\"type\":\"bool\"},{\"internalType\":\"bool\",\"name\":\"invalidated\",\"type\":\"bool\"},{\"internalType\":\"bool\",\"name\":\"benchmarksSet\",\"type\":\"bool\"},{\"internalType\":\"uint64\",\"name\":\"commitDeadline\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"revealStart\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"revealDeadline\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"grace\",\"type\":\"uint64\"},{\"internalType\":\"uint256\",\"name\":\"marketCount\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"}],\"name\":\"invalidateRound\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"},{\"internalType\":\"uint16[]\",\"name\":\"bps\",\"type\":\"uint16[]\"}],\"name\":\"setBenchmarks\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	Bin: "0x60a060405234801561000f575f5ffd5b50604051610c53380380610c5383398101604081905261002e9161003f565b6001600160a01b031660805261006c565b5f6020828403121561004f575f5ffd5b81516001600160a01b0381168114610065575f5ffd5b9392505050565b608051610bba6100995f395f818161020d015281816102d9015281816103be015261063c0152610bba5ff3fe608060405234801561000f575f5ffd5b5060043610610090575f3560e01c806380905e5f1161006357806380905e5f146100fb5780638f1327c01461011b57806396c73dfa146101d9578063bf2d1492146101ec578063e66f53b714610208575f5ffd5b80630e3b6f07146100945780632a697759146100bd578063410e3600146100d25780636f54f1e5146100e8575b5f5ffd5b6100a76100a236600461090e565b610247565b6040516100b49190610925565b60405180910390f35b6100d06100cb36600461090e565b6102ce565b005b6100da602081565b6040519081526020016100b4565b6100d06100f63660046109b2565b6103b3565b61010e61010936600461090e565b6105d2565b6040516100b491906109f9565b61018961012936600461090e565b5f9081526020819052604090206001810154815460029092015460ff80831694610100840482169462010000909404909116926001600160401b0380821693600160401b8304821693600160801b8404831693600160c01b900490921691565b6040805198151589529615156020890152941515958701959095526001600160401b0392831660608701529082166080860152811660a085015290911660c083015260e0820152610100016100b4565b6100d06101e7366004610a4b565b610631565b6101f561ffff81565b60405161ffff90911681526020016100b4565b61022f7f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b0390911681526020016100b4565b5f81815260208181526040918290206003018054835181840281018401909452808452606093928301828280156102c257602002820191905f5260205f20905f905b82829054906101000a900461ffff1661ffff16815260200190600201906020826001010492830192600103820291508084116102895790505b50505050509050919050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610317576040516356b381a560e01b815260040160405180910390fd5b5f818152602081905260409020600181015460ff1661034957604051631999c43d60e21b815260040160405180910390fd5b6001810154610100900460ff161561037457604051632323276560e21b815260040160405180910390fd5b60018101805461ff00191661010017905560405182907f801c4e5d89f27ae72245f15f0f9e91daa10bc7134e5bd4360c7471027afdc185905f90a25050565b336001600160a01b037f000000000000000000000000000000000000000000000000000000000000000016146103fc576040516356b381a560e01b815260040160405180910390fd5b5f838152602081905260409020600181015460ff1661042e57604051631999c43d60e21b815260040160405180910390fd5b6001810154610100900460ff161561045957604051632323276560e21b815260040160405180910390fd5b600181015462010000900460ff16156104885760405160016214f81160e11b0319815260040160405180910390fd5b80546001600160401b031642116104b25760405163e546c13960e01b815260040160405180910390fd5b600281015482146104d657604051637ddec55960e11b815260040160405180910390fd5b5f5b8281101561056d576127108484838181106104f5576104f5610ad4565b905060200201602081019061050a9190610af9565b61ffff16118015610547575061ffff84848381811061052b5761052b610ad4565b90506020020160208101906105409190610af9565b61ffff1614155b15610565576040516308d84bc760e31b815260040160405180910390fd5b6001016104d8565b5061057c600382018484610817565b5060018101805462ff000019166201000017905560405184907f4b087ed45e0c4f78dca0ea60bbd5ced57314df67a4d9bdbfc484570d604f0793906105c49086908690610b19565b60405180910390a250505050565b5f81815260208181526040918290206002018054835181840281018401909452808452606093928301828280156102c257602002820191905f5260205f20905b8154815260200190600101908083116106125750505050509050919050565b336001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000161461067a576040516356b381a560e01b815260040160405180910390fd5b865f0361069a5760405163d4b5d95d60e01b815260040160405180910390fd5b5f878152602081905260409020600181015460ff16156106cd57604051632892ec5b60e01b815260040160405180910390fd5b8515806106da5750602086115b156106f857604051637ddec55960e11b815260040160405180910390fd5b836001600160401b0316856001600160401b031610801561072b5750826001600160401b0316846001600160401b031611155b61074857604051631cb6252360e21b815260040160405180910390fd5b6001818101805460ff1916909117905580546001600160401b038681166fffffffffffffffffffffffffffffffff1990921691909117600160401b86831602176fffffffffffffffffffffffffffffffff16600160801b858316026001600160c01b031617600160c01b918416919091021781556107ca6002820188886108c1565b50877fd140b83d5c7d7c677c700d9a5ab45aa0e31eb1354e9202d9a141143b3eb5d34b88888888888860405161080596959493929190610b5e565b60405180910390a25050505050505050565b828054828255905f5260205f2090600f016010900481019282156108b1579160200282015f5b8382111561088157833561ffff1683826101000a81548161ffff021916908361ffff160217905550926020019260020160208160010104928301926001030261083d565b80156108af5782816101000a81549061ffff0219169055600201602081600101049283019260010302610881565b505b506108bd9291506108fa565b5090565b828054828255905f5260205f209081019282156108b1579160200282015b828111156108b15782358255916020019190600101906108df565b5b808211156108bd575f81556001016108fb565b5f6020828403121561091e575f5ffd5b5035919050565b602080825282518282018190525f918401906040840190835b8181101561096057835161ffff1683526020938401939092019160010161093e565b509095945050505050565b5f5f83601f84011261097b575f5ffd5b5081356001600160401b03811115610991575f5ffd5b6020830191508360208260051b85010111156109ab575f5ffd5b9250929050565b5f5f5f604084860312156109c4575f5ffd5b8335925060208401356001600160401b038111156109e0575f5ffd5b6109ec8682870161096b565b9497909650939450505050565b602080825282518282018190525f918401906040840190835b81811015610960578351835260209384019390920191600101610a12565b80356001600160401b0381168114610a46575f5ffd5b919050565b5f5f5f5f5f5f5f60c0888a031215610a61575f5ffd5b8735965060208801356001600160401b03811115610a7d575f5ffd5b610a898a828b0161096b565b9097509550610a9c905060408901610a30565b9350610aaa60608901610a30565b9250610ab860808901610a30565b9150610ac660a08901610a30565b905092959891949750929550565b634e487b7160e01b5f52603260045260245ffd5b803561ffff81168114610a46575f5ffd5b5f60208284031215610b09575f5ffd5b610b1282610ae8565b9392505050565b602080825281018290525f8360408301825b85811015610b545761ffff610b3f84610ae8565b16825260209283019290910190600101610b2b565b5095945050505050565b60a080825281018690525f6001600160fb1b03871115610b7c575f5ffd5b8660051b808960c08501376001600160401b039687166020840152948616604083015250918416606083015290921660808301520160c0019291505056",
}

// RoundManagerABI is the input ABI used to generate the binding from.
// Deprecated: Use RoundManagerMetaData.ABI instead.
var RoundManagerABI = RoundManagerMetaData.ABI

// RoundManagerBin is the compiled bytecode used for deploying new contracts.
// Deprecated: Use RoundManagerMetaData.Bin instead.
var RoundManagerBin = RoundManagerMetaData.Bin

// DeployRoundManager deploys a new Ethereum contract, binding an instance of RoundManager to it.
func DeployRoundManager(auth *bind.TransactOpts, backend bind.ContractBackend, curator_ common.Address) (common.Address, *types.Transaction, *RoundManager, error) {
	parsed, err := RoundManagerMetaData.GetAbi()
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	if parsed == nil {
		return common.Address{}, nil, nil, errors.New("GetABI returned nil")
	}

	address, tx, contract, err := bind.DeployContract(auth, *parsed, common.FromHex(RoundManagerBin), backend, curator_)
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	return address, tx, &RoundManager{RoundManagerCaller: RoundManagerCaller{contract: contract}, RoundManagerTransactor: RoundManagerTransactor{contract: contract}, RoundManagerFilterer: RoundManagerFilterer{contract: contract}}, nil
}

// RoundManager is an auto generated Go binding around an Ethereum contract.
type RoundManager struct {
	RoundManagerCaller     // Read-only binding to the contract
	RoundManagerTransactor // Write-only binding to the contract
	RoundManagerFilterer   // Log filterer for contract events
}

// RoundManagerCaller is an auto generated read-only Go binding around an Ethereum contract.
type RoundManagerCaller struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// RoundManagerTransactor is an auto generated write-only Go binding around an Ethereum contract.
type RoundManagerTransactor struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// RoundManagerFilterer is an auto generated log filtering Go binding around an Ethereum contract events.
type RoundManagerFilterer struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// RoundManagerSession is an auto generated Go binding around an Ethereum contract,
// with pre-set call and transact options.
type RoundManagerSession struct {
	Contract     *RoundManager     // Generic contract binding to set the session for
	CallOpts     bind.CallOpts     // Call options to use throughout this session
	TransactOpts bind.TransactOpts // Transaction auth options to use throughout this session
}

// RoundManagerCallerSession is an auto generated read-only Go binding around an Ethereum contract,
// with pre-set call options.
type RoundManagerCallerSession struct {
	Contract *RoundManagerCaller // Generic contract caller binding to set the session for
	CallOpts bind.CallOpts       // Call options to use throughout this session
}

// RoundManagerTransactorSession is an auto generated write-only Go binding around an Ethereum contract,
// with pre-set transact options.
type RoundManagerTransactorSession struct {
	Contract     *RoundManagerTransactor // Generic contract transactor binding to set the session for
	TransactOpts bind.TransactOpts       // Transaction auth options to use throughout this session
}

// RoundManagerRaw is an auto generated low-level Go binding around an Ethereum contract.
type RoundManagerRaw struct {
	Contract *RoundManager // Generic contract binding to access the raw methods on
}

// RoundManagerCallerRaw is an auto generated low-level read-only Go binding around an Ethereum contract.
type RoundManagerCallerRaw struct {
	Contract *RoundManagerCaller // Generic read-only contract binding to access the raw methods on
}

// RoundManagerTransactorRaw is an auto generated low-level write-only Go binding around an Ethereum contract.
type RoundManagerTransactorRaw struct {
	Contract *RoundManagerTransactor // Generic write-only contract binding to access the raw methods on
}

// NewRoundManager creates a new instance of RoundManager, bound to a specific deployed contract.
func NewRoundManager(address common.Address, backend bind.ContractBackend) (*RoundManager, error) {
	contract, err := bindRoundManager(address, backend, backend, backend)
	if err != nil {
		return nil, err
	}
	return &RoundManager{RoundManagerCaller: RoundManagerCaller{contract: contract}, RoundManagerTransactor: RoundManagerTransactor{contract: contract}, RoundManagerFilterer: RoundManagerFilterer{contract: contract}}, nil
}

// NewRoundManagerCaller creates a new read-only instance of RoundManager, bound to a specific deployed contract.
func NewRoundManagerCaller(address common.Address, caller bind.ContractCaller) (*RoundManagerCaller, error) {
	contract, err := bindRoundManager(address, caller, nil, nil)
	if err != nil {
		return nil, err
	}
	return &RoundManagerCaller{contract: contract}, nil
}

// NewRoundManagerTransactor creates a new write-only instance of RoundManager, bound to a specific deployed contract.
func NewRoundManagerTransactor(address common.Address, transactor bind.ContractTransactor) (*RoundManagerTransactor, error) {
	contract, err := bindRoundManager(address, nil, transactor, nil)
	if err != nil {
		return nil, err
	}
	return &RoundManagerTransactor{contract: contract}, nil
}

// NewRoundManagerFilterer creates a new log filterer instance of RoundManager, bound to a specific deployed contract.
func NewRoundManagerFilterer(address common.Address, filterer bind.ContractFilterer) (*RoundManagerFilterer, error) {
	contract, err := bindRoundManager(address, nil, nil, filterer)
	if err != nil {
		return nil, err
	}
	return &RoundManagerFilterer{contract: contract}, nil
}

// bindRoundManager binds a generic wrapper to an already deployed contract.
func bindRoundManager(address common.Address, caller bind.ContractCaller, transactor bind.ContractTransactor, filterer bind.ContractFilterer) (*bind.BoundContract, error) {
	parsed, err := RoundManagerMetaData.GetAbi()
	if err != nil {
		return nil, err
	}
	return bind.NewBoundContract(address, *parsed, caller, transactor, filterer), nil
}

// Call invokes the (constant) contract method with params as input values and
// sets the output to result. The result type might be a single field for simple
// returns, a slice of interfaces for anonymous returns and a struct for named
// returns.
func (_RoundManager *RoundManagerRaw) Call(opts *bind.CallOpts, result *[]interface{}, method string, params ...interface{}) error {
	return _RoundManager.Contract.RoundManagerCaller.contract.Call(opts, result, method, params...)
}

// Transfer initiates a plain transaction to move funds to the contract, calling
// its default method if one is available.
func (_RoundManager *RoundManagerRaw) Transfer(opts *bind.TransactOpts) (*types.Transaction, error) {
	return _RoundManager.Contract.RoundManagerTransactor.contract.Transfer(opts)
}

// Transact invokes the (paid) contract method with params as input values.
func (_RoundManager *RoundManagerRaw) Transact(opts *bind.TransactOpts, method string, params ...interface{}) (*types.Transaction, error) {
	return _RoundManager.Contract.RoundManagerTransactor.contract.Transact(opts, method, params...)
}

// Call invokes the (constant) contract method with params as input values and
// sets the output to result. The result type might be a single field for simple
// returns, a slice of interfaces for anonymous returns and a struct for named
// returns.
func (_RoundManager *RoundManagerCallerRaw) Call(opts *bind.CallOpts, result *[]interface{}, method string, params ...interface{}) error {
	return _RoundManager.Contract.contract.Call(opts, result, method, params...)
}

// Transfer initiates a plain transaction to move funds to the contract, calling
// its default method if one is available.
func (_RoundManager *RoundManagerTransactorRaw) Transfer(opts *bind.TransactOpts) (*types.Transaction, error) {
	return _RoundManager.Contract.contract.Transfer(opts)
}

// Transact invokes the (paid) contract method with params as input values.
func (_RoundManager *RoundManagerTransactorRaw) Transact(opts *bind.TransactOpts, method string, params ...interface{}) (*types.Transaction, error) {
	return _RoundManager.Contract.contract.Transact(opts, method, params...)
}

// MAXMARKETS is a free data retrieval call binding the contract method 0x410e3600.
//
// Solidity: function MAX_MARKETS() view returns(uint256)
func (_RoundManager *RoundManagerCaller) MAXMARKETS(opts *bind.CallOpts) (*big.Int, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "MAX_MARKETS")

	if err != nil {
		return *new(*big.Int), err
	}

	out0 := *abi.ConvertType(out[0], new(*big.Int)).(**big.Int)

	return out0, err

}

// MAXMARKETS is a free data retrieval call binding the contract method 0x410e3600.
//
// Solidity: function MAX_MARKETS() view returns(uint256)
func (_RoundManager *RoundManagerSession) MAXMARKETS() (*big.Int, error) {
	return _RoundManager.Contract.MAXMARKETS(&_RoundManager.CallOpts)
}

// MAXMARKETS is a free data retrieval call binding the contract method 0x410e3600.
//
// Solidity: function MAX_MARKETS() view returns(uint256)
func (_RoundManager *RoundManagerCallerSession) MAXMARKETS() (*big.Int, error) {
	return _RoundManager.Contract.MAXMARKETS(&_RoundManager.CallOpts)
}

// NOBENCHMARK is a free data retrieval call binding the contract method 0xbf2d1492.
//
// Solidity: function NO_BENCHMARK() view returns(uint16)
func (_RoundManager *RoundManagerCaller) NOBENCHMARK(opts *bind.CallOpts) (uint16, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "NO_BENCHMARK")

	if err != nil {
		return *new(uint16), err
	}

	out0 := *abi.ConvertType(out[0], new(uint16)).(*uint16)

	return out0, err

}

// NOBENCHMARK is a free data retrieval call binding the contract method 0xbf2d1492.
//
// Solidity: function NO_BENCHMARK() view returns(uint16)
func (_RoundManager *RoundManagerSession) NOBENCHMARK() (uint16, error) {
	return _RoundManager.Contract.NOBENCHMARK(&_RoundManager.CallOpts)
}

// NOBENCHMARK is a free data retrieval call binding the contract method 0xbf2d1492.
//
// Solidity: function NO_BENCHMARK() view returns(uint16)
func (_RoundManager *RoundManagerCallerSession) NOBENCHMARK() (uint16, error) {
	return _RoundManager.Contract.NOBENCHMARK(&_RoundManager.CallOpts)
}

// BenchmarksOf is a free data retrieval call binding the contract method 0x0e3b6f07.
//
// Solidity: function benchmarksOf(uint256 roundId) view returns(uint16[])
func (_RoundManager *RoundManagerCaller) BenchmarksOf(opts *bind.CallOpts, roundId *big.Int) ([]uint16, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "benchmarksOf", roundId)

	if err != nil {
		return *new([]uint16), err
	}

	out0 := *abi.ConvertType(out[0], new([]uint16)).(*[]uint16)

	return out0, err

}

// BenchmarksOf is a free data retrieval call binding the contract method 0x0e3b6f07.
//
// Solidity: function benchmarksOf(uint256 roundId) view returns(uint16[])
func (_RoundManager *RoundManagerSession) BenchmarksOf(roundId *big.Int) ([]uint16, error) {
	return _RoundManager.Contract.BenchmarksOf(&_RoundManager.CallOpts, roundId)
}

// BenchmarksOf is a free data retrieval call binding the contract method 0x0e3b6f07.
//
// Solidity: function benchmarksOf(uint256 roundId) view returns(uint16[])
func (_RoundManager *RoundManagerCallerSession) BenchmarksOf(roundId *big.Int) ([]uint16, error) {
	return _RoundManager.Contract.BenchmarksOf(&_RoundManager.CallOpts, roundId)
}

// ConditionIdsOf is a free data retrieval call binding the contract method 0x80905e5f.
//
// Solidity: function conditionIdsOf(uint256 roundId) view returns(bytes32[])
func (_RoundManager *RoundManagerCaller) ConditionIdsOf(opts *bind.CallOpts, roundId *big.Int) ([][32]byte, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "conditionIdsOf", roundId)

	if err != nil {
		return *new([][32]byte), err
	}

	out0 := *abi.ConvertType(out[0], new([][32]byte)).(*[][32]byte)

	return out0, err

}

// ConditionIdsOf is a free data retrieval call binding the contract method 0x80905e5f.
//
// Solidity: function conditionIdsOf(uint256 roundId) view returns(bytes32[])
func (_RoundManager *RoundManagerSession) ConditionIdsOf(roundId *big.Int) ([][32]byte, error) {
	return _RoundManager.Contract.ConditionIdsOf(&_RoundManager.CallOpts, roundId)
}

// ConditionIdsOf is a free data retrieval call binding the contract method 0x80905e5f.
//
// Solidity: function conditionIdsOf(uint256 roundId) view returns(bytes32[])
func (_RoundManager *RoundManagerCallerSession) ConditionIdsOf(roundId *big.Int) ([][32]byte, error) {
	return _RoundManager.Contract.ConditionIdsOf(&_RoundManager.CallOpts, roundId)
}

// Curator is a free data retrieval call binding the contract method 0xe66f53b7.
//
// Solidity: function curator() view returns(address)
func (_RoundManager *RoundManagerCaller) Curator(opts *bind.CallOpts) (common.Address, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "curator")

	if err != nil {
		return *new(common.Address), err
	}

	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)

	return out0, err

}

// Curator is a free data retrieval call binding the contract method 0xe66f53b7.
//
// Solidity: function curator() view returns(address)
func (_RoundManager *RoundManagerSession) Curator() (common.Address, error) {
	return _RoundManager.Contract.Curator(&_RoundManager.CallOpts)
}

// Curator is a free data retrieval call binding the contract method 0xe66f53b7.
//
// Solidity: function curator() view returns(address)
func (_RoundManager *RoundManagerCallerSession) Curator() (common.Address, error) {
	return _RoundManager.Contract.Curator(&_RoundManager.CallOpts)
}

// GetRound is a free data retrieval call binding the contract method 0x8f1327c0.
//
// Solidity: function getRound(uint256 roundId) view returns(bool exists, bool invalidated, bool benchmarksSet, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace, uint256 marketCount)
func (_RoundManager *RoundManagerCaller) GetRound(opts *bind.CallOpts, roundId *big.Int) (struct {
	Exists         bool
	Invalidated    bool
	BenchmarksSet  bool
	CommitDeadline uint64
	RevealStart    uint64
	RevealDeadline uint64
	Grace          uint64
	MarketCount    *big.Int
}, error) {
	var out []interface{}
	err := _RoundManager.contract.Call(opts, &out, "getRound", roundId)

	outstruct := new(struct {
		Exists         bool
		Invalidated    bool
		BenchmarksSet  bool
		CommitDeadline uint64
		RevealStart    uint64
		RevealDeadline uint64
		Grace          uint64
		MarketCount    *big.Int
	})
	if err != nil {
		return *outstruct, err
	}

	outstruct.Exists = *abi.ConvertType(out[0], new(bool)).(*bool)
	outstruct.Invalidated = *abi.ConvertType(out[1], new(bool)).(*bool)
	outstruct.BenchmarksSet = *abi.ConvertType(out[2], new(bool)).(*bool)
	outstruct.CommitDeadline = *abi.ConvertType(out[3], new(uint64)).(*uint64)
	outstruct.RevealStart = *abi.ConvertType(out[4], new(uint64)).(*uint64)
	outstruct.RevealDeadline = *abi.ConvertType(out[5], new(uint64)).(*uint64)
	outstruct.Grace = *abi.ConvertType(out[6], new(uint64)).(*uint64)
	outstruct.MarketCount = *abi.ConvertType(out[7], new(*big.Int)).(**big.Int)

	return *outstruct, err

}

// GetRound is a free data retrieval call binding the contract method 0x8f1327c0.
//
// Solidity: function getRound(uint256 roundId) view returns(bool exists, bool invalidated, bool benchmarksSet, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace, uint256 marketCount)
func (_RoundManager *RoundManagerSession) GetRound(roundId *big.Int) (struct {
	Exists         bool
	Invalidated    bool
	BenchmarksSet  bool
	CommitDeadline uint64
	RevealStart    uint64
	RevealDeadline uint64
	Grace          uint64
	MarketCount    *big.Int
}, error) {
	return _RoundManager.Contract.GetRound(&_RoundManager.CallOpts, roundId)
}

// GetRound is a free data retrieval call binding the contract method 0x8f1327c0.
//
// Solidity: function getRound(uint256 roundId) view returns(bool exists, bool invalidated, bool benchmarksSet, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace, uint256 marketCount)
func (_RoundManager *RoundManagerCallerSession) GetRound(roundId *big.Int) (struct {
	Exists         bool
	Invalidated    bool
	BenchmarksSet  bool
	CommitDeadline uint64
	RevealStart    uint64
	RevealDeadline uint64
	Grace          uint64
	MarketCount    *big.Int
}, error) {
	return _RoundManager.Contract.GetRound(&_RoundManager.CallOpts, roundId)
}

// CreateRound is a paid mutator transaction binding the contract method 0x96c73dfa.
//
// Solidity: function createRound(uint256 roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace) returns()
func (_RoundManager *RoundManagerTransactor) CreateRound(opts *bind.TransactOpts, roundId *big.Int, conditionIds [][32]byte, commitDeadline uint64, revealStart uint64, revealDeadline uint64, grace uint64) (*types.Transaction, error) {
	return _RoundManager.contract.Transact(opts, "createRound", roundId, conditionIds, commitDeadline, revealStart, revealDeadline, grace)
}

// CreateRound is a paid mutator transaction binding the contract method 0x96c73dfa.
//
// Solidity: function createRound(uint256 roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace) returns()
func (_RoundManager *RoundManagerSession) CreateRound(roundId *big.Int, conditionIds [][32]byte, commitDeadline uint64, revealStart uint64, revealDeadline uint64, grace uint64) (*types.Transaction, error) {
	return _RoundManager.Contract.CreateRound(&_RoundManager.TransactOpts, roundId, conditionIds, commitDeadline, revealStart, revealDeadline, grace)
}

// CreateRound is a paid mutator transaction binding the contract method 0x96c73dfa.
//
// Solidity: function createRound(uint256 roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace) returns()
func (_RoundManager *RoundManagerTransactorSession) CreateRound(roundId *big.Int, conditionIds [][32]byte, commitDeadline uint64, revealStart uint64, revealDeadline uint64, grace uint64) (*types.Transaction, error) {
	return _RoundManager.Contract.CreateRound(&_RoundManager.TransactOpts, roundId, conditionIds, commitDeadline, revealStart, revealDeadline, grace)
}

// InvalidateRound is a paid mutator transaction binding the contract method 0x2a697759.
//
// Solidity: function invalidateRound(uint256 roundId) returns()
func (_RoundManager *RoundManagerTransactor) InvalidateRound(opts *bind.TransactOpts, roundId *big.Int) (*types.Transaction, error) {
	return _RoundManager.contract.Transact(opts, "invalidateRound", roundId)
}

// InvalidateRound is a paid mutator transaction binding the contract method 0x2a697759.
//
// Solidity: function invalidateRound(uint256 roundId) returns()
func (_RoundManager *RoundManagerSession) InvalidateRound(roundId *big.Int) (*types.Transaction, error) {
	return _RoundManager.Contract.InvalidateRound(&_RoundManager.TransactOpts, roundId)
}

// InvalidateRound is a paid mutator transaction binding the contract method 0x2a697759.
//
// Solidity: function invalidateRound(uint256 roundId) returns()
func (_RoundManager *RoundManagerTransactorSession) InvalidateRound(roundId *big.Int) (*types.Transaction, error) {
	return _RoundManager.Contract.InvalidateRound(&_RoundManager.TransactOpts, roundId)
}

// SetBenchmarks is a paid mutator transaction binding the contract method 0x6f54f1e5.
//
// Solidity: function setBenchmarks(uint256 roundId, uint16[] bps) returns()
func (_RoundManager *RoundManagerTransactor) SetBenchmarks(opts *bind.TransactOpts, roundId *big.Int, bps []uint16) (*types.Transaction, error) {
	return _RoundManager.contract.Transact(opts, "setBenchmarks", roundId, bps)
}

// SetBenchmarks is a paid mutator transaction binding the contract method 0x6f54f1e5.
//
// Solidity: function setBenchmarks(uint256 roundId, uint16[] bps) returns()
func (_RoundManager *RoundManagerSession) SetBenchmarks(roundId *big.Int, bps []uint16) (*types.Transaction, error) {
	return _RoundManager.Contract.SetBenchmarks(&_RoundManager.TransactOpts, roundId, bps)
}

// SetBenchmarks is a paid mutator transaction binding the contract method 0x6f54f1e5.
//
// Solidity: function setBenchmarks(uint256 roundId, uint16[] bps) returns()
func (_RoundManager *RoundManagerTransactorSession) SetBenchmarks(roundId *big.Int, bps []uint16) (*types.Transaction, error) {
	return _RoundManager.Contract.SetBenchmarks(&_RoundManager.TransactOpts, roundId, bps)
}

// RoundManagerBenchmarksRecordedIterator is returned from FilterBenchmarksRecorded and is used to iterate over the raw logs and unpacked data for BenchmarksRecorded events raised by the RoundManager contract.
type RoundManagerBenchmarksRecordedIterator struct {
	Event *RoundManagerBenchmarksRecorded // Event containing the contract specifics and raw log

	contract *bind.BoundContract // Generic contract to use for unpacking event data
	event    string              // Event name to use for unpacking event data

	logs chan types.Log        // Log channel receiving the found contract events
	sub  ethereum.Subscription // Subscription for errors, completion and termination
	done bool                  // Whether the subscription completed delivering logs
	fail error                 // Occurred error to stop iteration
}

// Next advances the iterator to the subsequent event, returning whether there
// are any more events found. In case of a retrieval or parsing error, false is
// returned and Error() can be queried for the exact failure.
func (it *RoundManagerBenchmarksRecordedIterator) Next() bool {
	// If the iterator failed, stop iterating
	if it.fail != nil {
		return false
	}
	// If the iterator completed, deliver directly whatever's available
	if it.done {
		select {
		case log := <-it.logs:
			it.Event = new(RoundManagerBenchmarksRecorded)
			if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
				it.fail = err
				return false
			}
			it.Event.Raw = log
			return true

		default:
			return false
		}
	}
	// Iterator still in progress, wait for either a data or an error event
	select {
	case log := <-it.logs:
		it.Event = new(RoundManagerBenchmarksRecorded)
		if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
			it.fail = err
			return false
		}
		it.Event.Raw = log
		return true

	case err := <-it.sub.Err():
		it.done = true
		it.fail = err
		return it.Next()
	}
}

// Error returns any retrieval or parsing error occurred during filtering.
func (it *RoundManagerBenchmarksRecordedIterator) Error() error {
	return it.fail
}

// Close terminates the iteration process, releasing any pending underlying
// resources.
func (it *RoundManagerBenchmarksRecordedIterator) Close() error {
	it.sub.Unsubscribe()
	return nil
}

// RoundManagerBenchmarksRecorded represents a BenchmarksRecorded event raised by the RoundManager contract.
type RoundManagerBenchmarksRecorded struct {
	RoundId    *big.Int
	Benchmarks []uint16
	Raw        types.Log // Blockchain specific contextual infos
}

// FilterBenchmarksRecorded is a free log retrieval operation binding the contract event 0x4b087ed45e0c4f78dca0ea60bbd5ced57314df67a4d9bdbfc484570d604f0793.
//
// Solidity: event BenchmarksRecorded(uint256 indexed roundId, uint16[] benchmarks)
func (_RoundManager *RoundManagerFilterer) FilterBenchmarksRecorded(opts *bind.FilterOpts, roundId []*big.Int) (*RoundManagerBenchmarksRecordedIterator, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.FilterLogs(opts, "BenchmarksRecorded", roundIdRule)
	if err != nil {
		return nil, err
	}
	return &RoundManagerBenchmarksRecordedIterator{contract: _RoundManager.contract, event: "BenchmarksRecorded", logs: logs, sub: sub}, nil
}

// WatchBenchmarksRecorded is a free log subscription operation binding the contract event 0x4b087ed45e0c4f78dca0ea60bbd5ced57314df67a4d9bdbfc484570d604f0793.
//
// Solidity: event BenchmarksRecorded(uint256 indexed roundId, uint16[] benchmarks)
func (_RoundManager *RoundManagerFilterer) WatchBenchmarksRecorded(opts *bind.WatchOpts, sink chan<- *RoundManagerBenchmarksRecorded, roundId []*big.Int) (event.Subscription, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.WatchLogs(opts, "BenchmarksRecorded", roundIdRule)
	if err != nil {
		return nil, err
	}
	return event.NewSubscription(func(quit <-chan struct{}) error {
		defer sub.Unsubscribe()
		for {
			select {
			case log := <-logs:
				// New log arrived, parse the event and forward to the user
				event := new(RoundManagerBenchmarksRecorded)
				if err := _RoundManager.contract.UnpackLog(event, "BenchmarksRecorded", log); err != nil {
					// If the signature doesn't match, skip this log.
					if errors.Is(err, bind.ErrEventSignatureMismatch) {
						continue
					}
					return err
				}
				event.Raw = log

				select {
				case sink <- event:
				case err := <-sub.Err():
					return err
				case <-quit:
					return nil
				}
			case err := <-sub.Err():
				return err
			case <-quit:
				return nil
			}
		}
	}), nil
}

// ParseBenchmarksRecorded is a log parse operation binding the contract event 0x4b087ed45e0c4f78dca0ea60bbd5ced57314df67a4d9bdbfc484570d604f0793.
//
// Solidity: event BenchmarksRecorded(uint256 indexed roundId, uint16[] benchmarks)
func (_RoundManager *RoundManagerFilterer) ParseBenchmarksRecorded(log types.Log) (*RoundManagerBenchmarksRecorded, error) {
	event := new(RoundManagerBenchmarksRecorded)
	if err := _RoundManager.contract.UnpackLog(event, "BenchmarksRecorded", log); err != nil {
		return nil, err
	}
	event.Raw = log
	return event, nil
}

// RoundManagerRoundCreatedIterator is returned from FilterRoundCreated and is used to iterate over the raw logs and unpacked data for RoundCreated events raised by the RoundManager contract.
type RoundManagerRoundCreatedIterator struct {
	Event *RoundManagerRoundCreated // Event containing the contract specifics and raw log

	contract *bind.BoundContract // Generic contract to use for unpacking event data
	event    string              // Event name to use for unpacking event data

	logs chan types.Log        // Log channel receiving the found contract events
	sub  ethereum.Subscription // Subscription for errors, completion and termination
	done bool                  // Whether the subscription completed delivering logs
	fail error                 // Occurred error to stop iteration
}

// Next advances the iterator to the subsequent event, returning whether there
// are any more events found. In case of a retrieval or parsing error, false is
// returned and Error() can be queried for the exact failure.
func (it *RoundManagerRoundCreatedIterator) Next() bool {
	// If the iterator failed, stop iterating
	if it.fail != nil {
		return false
	}
	// If the iterator completed, deliver directly whatever's available
	if it.done {
		select {
		case log := <-it.logs:
			it.Event = new(RoundManagerRoundCreated)
			if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
				it.fail = err
				return false
			}
			it.Event.Raw = log
			return true

		default:
			return false
		}
	}
	// Iterator still in progress, wait for either a data or an error event
	select {
	case log := <-it.logs:
		it.Event = new(RoundManagerRoundCreated)
		if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
			it.fail = err
			return false
		}
		it.Event.Raw = log
		return true

	case err := <-it.sub.Err():
		it.done = true
		it.fail = err
		return it.Next()
	}
}

// Error returns any retrieval or parsing error occurred during filtering.
func (it *RoundManagerRoundCreatedIterator) Error() error {
	return it.fail
}

// Close terminates the iteration process, releasing any pending underlying
// resources.
func (it *RoundManagerRoundCreatedIterator) Close() error {
	it.sub.Unsubscribe()
	return nil
}

// RoundManagerRoundCreated represents a RoundCreated event raised by the RoundManager contract.
type RoundManagerRoundCreated struct {
	RoundId        *big.Int
	ConditionIds   [][32]byte
	CommitDeadline uint64
	RevealStart    uint64
	RevealDeadline uint64
	Grace          uint64
	Raw            types.Log // Blockchain specific contextual infos
}

// FilterRoundCreated is a free log retrieval operation binding the contract event 0xd140b83d5c7d7c677c700d9a5ab45aa0e31eb1354e9202d9a141143b3eb5d34b.
//
// Solidity: event RoundCreated(uint256 indexed roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace)
func (_RoundManager *RoundManagerFilterer) FilterRoundCreated(opts *bind.FilterOpts, roundId []*big.Int) (*RoundManagerRoundCreatedIterator, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.FilterLogs(opts, "RoundCreated", roundIdRule)
	if err != nil {
		return nil, err
	}
	return &RoundManagerRoundCreatedIterator{contract: _RoundManager.contract, event: "RoundCreated", logs: logs, sub: sub}, nil
}

// WatchRoundCreated is a free log subscription operation binding the contract event 0xd140b83d5c7d7c677c700d9a5ab45aa0e31eb1354e9202d9a141143b3eb5d34b.
//
// Solidity: event RoundCreated(uint256 indexed roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace)
func (_RoundManager *RoundManagerFilterer) WatchRoundCreated(opts *bind.WatchOpts, sink chan<- *RoundManagerRoundCreated, roundId []*big.Int) (event.Subscription, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.WatchLogs(opts, "RoundCreated", roundIdRule)
	if err != nil {
		return nil, err
	}
	return event.NewSubscription(func(quit <-chan struct{}) error {
		defer sub.Unsubscribe()
		for {
			select {
			case log := <-logs:
				// New log arrived, parse the event and forward to the user
				event := new(RoundManagerRoundCreated)
				if err := _RoundManager.contract.UnpackLog(event, "RoundCreated", log); err != nil {
					// If the signature doesn't match, skip this log.
					if errors.Is(err, bind.ErrEventSignatureMismatch) {
						continue
					}
					return err
				}
				event.Raw = log

				select {
				case sink <- event:
				case err := <-sub.Err():
					return err
				case <-quit:
					return nil
				}
			case err := <-sub.Err():
				return err
			case <-quit:
				return nil
			}
		}
	}), nil
}

// ParseRoundCreated is a log parse operation binding the contract event 0xd140b83d5c7d7c677c700d9a5ab45aa0e31eb1354e9202d9a141143b3eb5d34b.
//
// Solidity: event RoundCreated(uint256 indexed roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealStart, uint64 revealDeadline, uint64 grace)
func (_RoundManager *RoundManagerFilterer) ParseRoundCreated(log types.Log) (*RoundManagerRoundCreated, error) {
	event := new(RoundManagerRoundCreated)
	if err := _RoundManager.contract.UnpackLog(event, "RoundCreated", log); err != nil {
		return nil, err
	}
	event.Raw = log
	return event, nil
}

// RoundManagerRoundInvalidatedEventIterator is returned from FilterRoundInvalidatedEvent and is used to iterate over the raw logs and unpacked data for RoundInvalidatedEvent events raised by the RoundManager contract.
type RoundManagerRoundInvalidatedEventIterator struct {
	Event *RoundManagerRoundInvalidatedEvent // Event containing the contract specifics and raw log

	contract *bind.BoundContract // Generic contract to use for unpacking event data
	event    string              // Event name to use for unpacking event data

	logs chan types.Log        // Log channel receiving the found contract events
	sub  ethereum.Subscription // Subscription for errors, completion and termination
	done bool                  // Whether the subscription completed delivering logs
	fail error                 // Occurred error to stop iteration
}

// Next advances the iterator to the subsequent event, returning whether there
// are any more events found. In case of a retrieval or parsing error, false is
// returned and Error() can be queried for the exact failure.
func (it *RoundManagerRoundInvalidatedEventIterator) Next() bool {
	// If the iterator failed, stop iterating
	if it.fail != nil {
		return false
	}
	// If the iterator completed, deliver directly whatever's available
	if it.done {
		select {
		case log := <-it.logs:
			it.Event = new(RoundManagerRoundInvalidatedEvent)
			if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
				it.fail = err
				return false
			}
			it.Event.Raw = log
			return true

		default:
			return false
		}
	}
	// Iterator still in progress, wait for either a data or an error event
	select {
	case log := <-it.logs:
		it.Event = new(RoundManagerRoundInvalidatedEvent)
		if err := it.contract.UnpackLog(it.Event, it.event, log); err != nil {
			it.fail = err
			return false
		}
		it.Event.Raw = log
		return true

	case err := <-it.sub.Err():
		it.done = true
		it.fail = err
		return it.Next()
	}
}

// Error returns any retrieval or parsing error occurred during filtering.
func (it *RoundManagerRoundInvalidatedEventIterator) Error() error {
	return it.fail
}

// Close terminates the iteration process, releasing any pending underlying
// resources.
func (it *RoundManagerRoundInvalidatedEventIterator) Close() error {
	it.sub.Unsubscribe()
	return nil
}

// RoundManagerRoundInvalidatedEvent represents a RoundInvalidatedEvent event raised by the RoundManager contract.
type RoundManagerRoundInvalidatedEvent struct {
	RoundId *big.Int
	Raw     types.Log // Blockchain specific contextual infos
}

// FilterRoundInvalidatedEvent is a free log retrieval operation binding the contract event 0x801c4e5d89f27ae72245f15f0f9e91daa10bc7134e5bd4360c7471027afdc185.
//
// Solidity: event RoundInvalidatedEvent(uint256 indexed roundId)
func (_RoundManager *RoundManagerFilterer) FilterRoundInvalidatedEvent(opts *bind.FilterOpts, roundId []*big.Int) (*RoundManagerRoundInvalidatedEventIterator, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.FilterLogs(opts, "RoundInvalidatedEvent", roundIdRule)
	if err != nil {
		return nil, err
	}
	return &RoundManagerRoundInvalidatedEventIterator{contract: _RoundManager.contract, event: "RoundInvalidatedEvent", logs: logs, sub: sub}, nil
}

// WatchRoundInvalidatedEvent is a free log subscription operation binding the contract event 0x801c4e5d89f27ae72245f15f0f9e91daa10bc7134e5bd4360c7471027afdc185.
//
// Solidity: event RoundInvalidatedEvent(uint256 indexed roundId)
func (_RoundManager *RoundManagerFilterer) WatchRoundInvalidatedEvent(opts *bind.WatchOpts, sink chan<- *RoundManagerRoundInvalidatedEvent, roundId []*big.Int) (event.Subscription, error) {

	var roundIdRule []interface{}
	for _, roundIdItem := range roundId {
		roundIdRule = append(roundIdRule, roundIdItem)
	}

	logs, sub, err := _RoundManager.contract.WatchLogs(opts, "RoundInvalidatedEvent", roundIdRule)
	if err != nil {
		return nil, err
	}
	return event.NewSubscription(func(quit <-chan struct{}) error {
		defer sub.Unsubscribe()
		for {
			select {
			case log := <-logs:
				// New log arrived, parse the event and forward to the user
				event := new(RoundManagerRoundInvalidatedEvent)
				if err := _RoundManager.contract.UnpackLog(event, "RoundInvalidatedEvent", log); err != nil {
					// If the signature doesn't match, skip this log.
					if errors.Is(err, bind.ErrEventSignatureMismatch) {
						continue
					}
					return err
				}
				event.Raw = log

				select {
				case sink <- event:
				case err := <-sub.Err():
					return err
				case <-quit:
					return nil
				}
			case err := <-sub.Err():
				return err
			case <-quit:
				return nil
			}
		}
	}), nil
}

// ParseRoundInvalidatedEvent is a log parse operation binding the contract event 0x801c4e5d89f27ae72245f15f0f9e91daa10bc7134e5bd4360c7471027afdc185.
//
// Solidity: event RoundInvalidatedEvent(uint256 indexed roundId)
func (_RoundManager *RoundManagerFilterer) ParseRoundInvalidatedEvent(log types.Log) (*RoundManagerRoundInvalidatedEvent, error) {
	event := new(RoundManagerRoundInvalidatedEvent)
	if err := _RoundManager.contract.UnpackLog(event, "RoundInvalidatedEvent", log); err != nil {
		return nil, err
	}
	event.Raw = log
	return event, nil
}
