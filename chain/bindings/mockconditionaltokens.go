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

// MockConditionalTokensMetaData contains all meta data concerning the MockConditionalTokens contract.
var MockConditionalTokensMetaData = &bind.MetaData{
	ABI: "[{\"inputs\":[],\"name\":\"AlreadyReported\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NoPayout\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"conditionId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint256[]\",\"name\":\"payoutNumerators\",\"type\":\"uint256[]\"}],\"name\":\"ConditionResolution\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"name\":\"payoutDenominator\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"name\":\"payoutNumerators\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"conditionId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[]\",\"name\":\"numerators\",\"type\":\"uint256[]\"}],\"name\":\"reportPayouts\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	Bin: "0x6080604052348015600e575f5ffd5b506103358061001c5f395ff3fe608060405234801561000f575f5ffd5b506004361061003f575f3560e01c80630504c81414610043578063c49298ac14610068578063dd34de671461007d575b5f5ffd5b610056610051366004610214565b61009c565b60405190815260200160405180910390f35b61007b610076366004610234565b6100c6565b005b61005661008b3660046102ae565b60016020525f908152604090205481565b5f602052815f5260405f2081815481106100b4575f80fd5b905f5260205f20015f91509150505481565b5f83815260016020526040902054156100f25760405163770c15e360e01b815260040160405180910390fd5b5f805b8281101561012b5783838281811061010f5761010f6102c5565b905060200201358261012191906102d9565b91506001016100f5565b50805f0361014c5760405163439ece7760e01b815260040160405180910390fd5b5f8481526020819052604090206101649084846101b7565b505f84815260016020526040908190208290555184907ffbd3494747d87a8762583f3697021d2eae7789c823492b672da727715c3cb367906101a990869086906102fe565b60405180910390a250505050565b828054828255905f5260205f209081019282156101f0579160200282015b828111156101f05782358255916020019190600101906101d5565b506101fc929150610200565b5090565b5b808211156101fc575f8155600101610201565b5f5f60408385031215610225575f5ffd5b50508035926020909101359150565b5f5f5f60408486031215610246575f5ffd5b83359250602084013567ffffffffffffffff811115610263575f5ffd5b8401601f81018613610273575f5ffd5b803567ffffffffffffffff811115610289575f5ffd5b8660208260051b840101111561029d575f5ffd5b939660209190910195509293505050565b5f602082840312156102be575f5ffd5b5035919050565b634e487b7160e01b5f52603260045260245ffd5b808201808211156102f857634e487b7160e01b5f52601160045260245ffd5b92915050565b602080825281018290525f6001600160fb1b0383111561031c575f5ffd5b8260051b8085604085013791909101604001939250505056",
}

// MockConditionalTokensABI is the input ABI used to generate the binding from.
// Deprecated: Use MockConditionalTokensMetaData.ABI instead.
var MockConditionalTokensABI = MockConditionalTokensMetaData.ABI

// MockConditionalTokensBin is the compiled bytecode used for deploying new contracts.
// Deprecated: Use MockConditionalTokensMetaData.Bin instead.
var MockConditionalTokensBin = MockConditionalTokensMetaData.Bin

// DeployMockConditionalTokens deploys a new Ethereum contract, binding an instance of MockConditionalTokens to it.
func DeployMockConditionalTokens(auth *bind.TransactOpts, backend bind.ContractBackend) (common.Address, *types.Transaction, *MockConditionalTokens, error) {
	parsed, err := MockConditionalTokensMetaData.GetAbi()
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	if parsed == nil {
		return common.Address{}, nil, nil, errors.New("GetABI returned nil")
	}

	address, tx, contract, err := bind.DeployContract(auth, *parsed, common.FromHex(MockConditionalTokensBin), backend)
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	return address, tx, &MockConditionalTokens{MockConditionalTokensCaller: MockConditionalTokensCaller{contract: contract}, MockConditionalTokensTransactor: MockConditionalTokensTransactor{contract: contract}, MockConditionalTokensFilterer: MockConditionalTokensFilterer{contract: contract}}, nil
}

// MockConditionalTokens is an auto generated Go binding around an Ethereum contract.
type MockConditionalTokens struct {
	MockConditionalTokensCaller     // Read-only binding to the contract
	MockConditionalTokensTransactor // Write-only binding to the contract
	MockConditionalTokensFilterer   // Log filterer for contract events
}

// MockConditionalTokensCaller is an auto generated read-only Go binding around an Ethereum contract.
type MockConditionalTokensCaller struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// MockConditionalTokensTransactor is an auto generated write-only Go binding around an Ethereum contract.
type MockConditionalTokensTransactor struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// MockConditionalTokensFilterer is an auto generated log filtering Go binding around an Ethereum contract events.
type MockConditionalTokensFilterer struct {
	contract *bind.BoundContract // Generic contract wrapper for the low level calls
}

// MockConditionalTokensSession is an auto generated Go binding around an Ethereum contract,
// with pre-set call and transact options.
type MockConditionalTokensSession struct {
	Contract     *MockConditionalTokens // Generic contract binding to set the session for
	CallOpts     bind.CallOpts          // Call options to use throughout this session
	TransactOpts bind.TransactOpts      // Transaction auth options to use throughout this session
}

// MockConditionalTokensCallerSession is an auto generated read-only Go binding around an Ethereum contract,
// with pre-set call options.
type MockConditionalTokensCallerSession struct {
	Contract *MockConditionalTokensCaller // Generic contract caller binding to set the session for
	CallOpts bind.CallOpts                // Call options to use throughout this session
}

// MockConditionalTokensTransactorSession is an auto generated write-only Go binding around an Ethereum contract,
// with pre-set transact options.
type MockConditionalTokensTransactorSession struct {
	Contract     *MockConditionalTokensTransactor // Generic contract transactor binding to set the session for
	TransactOpts bind.TransactOpts                // Transaction auth options to use throughout this session
}

// MockConditionalTokensRaw is an auto generated low-level Go binding around an Ethereum contract.
type MockConditionalTokensRaw struct {
	Contract *MockConditionalTokens // Generic contract binding to access the raw methods on
}

// MockConditionalTokensCallerRaw is an auto generated low-level read-only Go binding around an Ethereum contract.
type MockConditionalTokensCallerRaw struct {
	Contract *MockConditionalTokensCaller // Generic read-only contract binding to access the raw methods on
}

// MockConditionalTokensTransactorRaw is an auto generated low-level write-only Go binding around an Ethereum contract.
type MockConditionalTokensTransactorRaw struct {
	Contract *MockConditionalTokensTransactor // Generic write-only contract binding to access the raw methods on
}

// NewMockConditionalTokens creates a new instance of MockConditionalTokens, bound to a specific deployed contract.
func NewMockConditionalTokens(address common.Address, backend bind.ContractBackend) (*MockConditionalTokens, error) {
	contract, err := bindMockConditionalTokens(address, backend, backend, backend)
	if err != nil {
		return nil, err
	}
	return &MockConditionalTokens{MockConditionalTokensCaller: MockConditionalTokensCaller{contract: contract}, MockConditionalTokensTransactor: MockConditionalTokensTransactor{contract: contract}, MockConditionalTokensFilterer: MockConditionalTokensFilterer{contract: contract}}, nil
}

// NewMockConditionalTokensCaller creates a new read-only instance of MockConditionalTokens, bound to a specific deployed contract.
func NewMockConditionalTokensCaller(address common.Address, caller bind.ContractCaller) (*MockConditionalTokensCaller, error) {
	contract, err := bindMockConditionalTokens(address, caller, nil, nil)
	if err != nil {
		return nil, err
	}
	return &MockConditionalTokensCaller{contract: contract}, nil
}

// NewMockConditionalTokensTransactor creates a new write-only instance of MockConditionalTokens, bound to a specific deployed contract.
func NewMockConditionalTokensTransactor(address common.Address, transactor bind.ContractTransactor) (*MockConditionalTokensTransactor, error) {
	contract, err := bindMockConditionalTokens(address, nil, transactor, nil)
	if err != nil {
		return nil, err
	}
	return &MockConditionalTokensTransactor{contract: contract}, nil
}

// NewMockConditionalTokensFilterer creates a new log filterer instance of MockConditionalTokens, bound to a specific deployed contract.
func NewMockConditionalTokensFilterer(address common.Address, filterer bind.ContractFilterer) (*MockConditionalTokensFilterer, error) {
	contract, err := bindMockConditionalTokens(address, nil, nil, filterer)
	if err != nil {
		return nil, err
	}
	return &MockConditionalTokensFilterer{contract: contract}, nil
}

// bindMockConditionalTokens binds a generic wrapper to an already deployed contract.
func bindMockConditionalTokens(address common.Address, caller bind.ContractCaller, transactor bind.ContractTransactor, filterer bind.ContractFilterer) (*bind.BoundContract, error) {
	parsed, err := MockConditionalTokensMetaData.GetAbi()
	if err != nil {
		return nil, err
	}
	return bind.NewBoundContract(address, *parsed, caller, transactor, filterer), nil
}

// Call invokes the (constant) contract method with params as input values and
// sets the output to result. The result type might be a single field for simple
// returns, a slice of interfaces for anonymous returns and a struct for named
// returns.
func (_MockConditionalTokens *MockConditionalTokensRaw) Call(opts *bind.CallOpts, result *[]interface{}, method string, params ...interface{}) error {
	return _MockConditionalTokens.Contract.MockConditionalTokensCaller.contract.Call(opts, result, method, params...)
}

// Transfer initiates a plain transaction to move funds to the contract, calling
// its default method if one is available.
func (_MockConditionalTokens *MockConditionalTokensRaw) Transfer(opts *bind.TransactOpts) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.MockConditionalTokensTransactor.contract.Transfer(opts)
}

// Transact invokes the (paid) contract method with params as input values.
func (_MockConditionalTokens *MockConditionalTokensRaw) Transact(opts *bind.TransactOpts, method string, params ...interface{}) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.MockConditionalTokensTransactor.contract.Transact(opts, method, params...)
}

// Call invokes the (constant) contract method with params as input values and
// sets the output to result. The result type might be a single field for simple
// returns, a slice of interfaces for anonymous returns and a struct for named
// returns.
func (_MockConditionalTokens *MockConditionalTokensCallerRaw) Call(opts *bind.CallOpts, result *[]interface{}, method string, params ...interface{}) error {
	return _MockConditionalTokens.Contract.contract.Call(opts, result, method, params...)
}

// Transfer initiates a plain transaction to move funds to the contract, calling
// its default method if one is available.
func (_MockConditionalTokens *MockConditionalTokensTransactorRaw) Transfer(opts *bind.TransactOpts) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.contract.Transfer(opts)
}

// Transact invokes the (paid) contract method with params as input values.
func (_MockConditionalTokens *MockConditionalTokensTransactorRaw) Transact(opts *bind.TransactOpts, method string, params ...interface{}) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.contract.Transact(opts, method, params...)
}

// PayoutDenominator is a free data retrieval call binding the contract method 0xdd34de67.
//
// Solidity: function payoutDenominator(bytes32 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensCaller) PayoutDenominator(opts *bind.CallOpts, arg0 [32]byte) (*big.Int, error) {
	var out []interface{}
	err := _MockConditionalTokens.contract.Call(opts, &out, "payoutDenominator", arg0)

	if err != nil {
		return *new(*big.Int), err
	}

	out0 := *abi.ConvertType(out[0], new(*big.Int)).(**big.Int)

	return out0, err

}

// PayoutDenominator is a free data retrieval call binding the contract method 0xdd34de67.
//
// Solidity: function payoutDenominator(bytes32 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensSession) PayoutDenominator(arg0 [32]byte) (*big.Int, error) {
	return _MockConditionalTokens.Contract.PayoutDenominator(&_MockConditionalTokens.CallOpts, arg0)
}

// PayoutDenominator is a free data retrieval call binding the contract method 0xdd34de67.
//
// Solidity: function payoutDenominator(bytes32 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensCallerSession) PayoutDenominator(arg0 [32]byte) (*big.Int, error) {
	return _MockConditionalTokens.Contract.PayoutDenominator(&_MockConditionalTokens.CallOpts, arg0)
}

// PayoutNumerators is a free data retrieval call binding the contract method 0x0504c814.
//
// Solidity: function payoutNumerators(bytes32 , uint256 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensCaller) PayoutNumerators(opts *bind.CallOpts, arg0 [32]byte, arg1 *big.Int) (*big.Int, error) {
	var out []interface{}
	err := _MockConditionalTokens.contract.Call(opts, &out, "payoutNumerators", arg0, arg1)

	if err != nil {
		return *new(*big.Int), err
	}

	out0 := *abi.ConvertType(out[0], new(*big.Int)).(**big.Int)

	return out0, err

}

// PayoutNumerators is a free data retrieval call binding the contract method 0x0504c814.
//
// Solidity: function payoutNumerators(bytes32 , uint256 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensSession) PayoutNumerators(arg0 [32]byte, arg1 *big.Int) (*big.Int, error) {
	return _MockConditionalTokens.Contract.PayoutNumerators(&_MockConditionalTokens.CallOpts, arg0, arg1)
}

// PayoutNumerators is a free data retrieval call binding the contract method 0x0504c814.
//
// Solidity: function payoutNumerators(bytes32 , uint256 ) view returns(uint256)
func (_MockConditionalTokens *MockConditionalTokensCallerSession) PayoutNumerators(arg0 [32]byte, arg1 *big.Int) (*big.Int, error) {
	return _MockConditionalTokens.Contract.PayoutNumerators(&_MockConditionalTokens.CallOpts, arg0, arg1)
}

// ReportPayouts is a paid mutator transaction binding the contract method 0xc49298ac.
//
// Solidity: function reportPayouts(bytes32 conditionId, uint256[] numerators) returns()
func (_MockConditionalTokens *MockConditionalTokensTransactor) ReportPayouts(opts *bind.TransactOpts, conditionId [32]byte, numerators []*big.Int) (*types.Transaction, error) {
	return _MockConditionalTokens.contract.Transact(opts, "reportPayouts", conditionId, numerators)
}

// ReportPayouts is a paid mutator transaction binding the contract method 0xc49298ac.
//
// Solidity: function reportPayouts(bytes32 conditionId, uint256[] numerators) returns()
func (_MockConditionalTokens *MockConditionalTokensSession) ReportPayouts(conditionId [32]byte, numerators []*big.Int) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.ReportPayouts(&_MockConditionalTokens.TransactOpts, conditionId, numerators)
}

// ReportPayouts is a paid mutator transaction binding the contract method 0xc49298ac.
//
// Solidity: function reportPayouts(bytes32 conditionId, uint256[] numerators) returns()
func (_MockConditionalTokens *MockConditionalTokensTransactorSession) ReportPayouts(conditionId [32]byte, numerators []*big.Int) (*types.Transaction, error) {
	return _MockConditionalTokens.Contract.ReportPayouts(&_MockConditionalTokens.TransactOpts, conditionId, numerators)
}

// MockConditionalTokensConditionResolutionIterator is returned from FilterConditionResolution and is used to iterate over the raw logs and unpacked data for ConditionResolution events raised by the MockConditionalTokens contract.
type MockConditionalTokensConditionResolutionIterator struct {
	Event *MockConditionalTokensConditionResolution // Event containing the contract specifics and raw log

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
func (it *MockConditionalTokensConditionResolutionIterator) Next() bool {
	// If the iterator failed, stop iterating
	if it.fail != nil {
		return false
	}
	// If the iterator completed, deliver directly whatever's available
	if it.done {
		select {
		case log := <-it.logs:
			it.Event = new(MockConditionalTokensConditionResolution)
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
		it.Event = new(MockConditionalTokensConditionResolution)
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
func (it *MockConditionalTokensConditionResolutionIterator) Error() error {
	return it.fail
}

// Close terminates the iteration process, releasing any pending underlying
// resources.
func (it *MockConditionalTokensConditionResolutionIterator) Close() error {
	it.sub.Unsubscribe()
	return nil
}

// MockConditionalTokensConditionResolution represents a ConditionResolution event raised by the MockConditionalTokens contract.
type MockConditionalTokensConditionResolution struct {
	ConditionId      [32]byte
	PayoutNumerators []*big.Int
	Raw              types.Log // Blockchain specific contextual infos
}

// FilterConditionResolution is a free log retrieval operation binding the contract event 0xfbd3494747d87a8762583f3697021d2eae7789c823492b672da727715c3cb367.
//
// Solidity: event ConditionResolution(bytes32 indexed conditionId, uint256[] payoutNumerators)
func (_MockConditionalTokens *MockConditionalTokensFilterer) FilterConditionResolution(opts *bind.FilterOpts, conditionId [][32]byte) (*MockConditionalTokensConditionResolutionIterator, error) {

	var conditionIdRule []interface{}
	for _, conditionIdItem := range conditionId {
		conditionIdRule = append(conditionIdRule, conditionIdItem)
	}

	logs, sub, err := _MockConditionalTokens.contract.FilterLogs(opts, "ConditionResolution", conditionIdRule)
	if err != nil {
		return nil, err
	}
	return &MockConditionalTokensConditionResolutionIterator{contract: _MockConditionalTokens.contract, event: "ConditionResolution", logs: logs, sub: sub}, nil
}

// WatchConditionResolution is a free log subscription operation binding the contract event 0xfbd3494747d87a8762583f3697021d2eae7789c823492b672da727715c3cb367.
//
// Solidity: event ConditionResolution(bytes32 indexed conditionId, uint256[] payoutNumerators)
func (_MockConditionalTokens *MockConditionalTokensFilterer) WatchConditionResolution(opts *bind.WatchOpts, sink chan<- *MockConditionalTokensConditionResolution, conditionId [][32]byte) (event.Subscription, error) {

	var conditionIdRule []interface{}
	for _, conditionIdItem := range conditionId {
		conditionIdRule = append(conditionIdRule, conditionIdItem)
	}

	logs, sub, err := _MockConditionalTokens.contract.WatchLogs(opts, "ConditionResolution", conditionIdRule)
	if err != nil {
		return nil, err
	}
	return event.NewSubscription(func(quit <-chan struct{}) error {
		defer sub.Unsubscribe()
		for {
			select {
			case log := <-logs:
				// New log arrived, parse the event and forward to the user
				event := new(MockConditionalTokensConditionResolution)
				if err := _MockConditionalTokens.contract.UnpackLog(event, "ConditionResolution", log); err != nil {
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

// ParseConditionResolution is a log parse operation binding the contract event 0xfbd3494747d87a8762583f3697021d2eae7789c823492b672da727715c3cb367.
//
// Solidity: event ConditionResolution(bytes32 indexed conditionId, uint256[] payoutNumerators)
func (_MockConditionalTokens *MockConditionalTokensFilterer) ParseConditionResolution(log types.Log) (*MockConditionalTokensConditionResolution, error) {
	event := new(MockConditionalTokensConditionResolution)
	if err := _MockConditionalTokens.contract.UnpackLog(event, "ConditionResolution", log); err != nil {
		return nil, err
	}
	event.Raw = log
	return event, nil
}
