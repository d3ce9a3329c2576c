package arena

import (
	"errors"
	"fmt"
)

// Error kinds, in the style of benbjohnson/wtf: each maps to one HTTP status.
const (
	ECONFLICT     = "conflict"
	EINTERNAL     = "internal"
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden" // no credentials could authorize the request
	ETOOLARGE     = "too_large"
	EUNAVAILABLE  = "unavailable" // an upstream source failed
	ETOOMANY      = "too_many"    // a rate limit or an admission cap refused the request
)

// Codes that one package returns and another acts on. Codes used only
// where they are made (the protocol's rejection codes, for example) live
// with their package.
const (
	// CodeAlreadyTriggered: a round's outcomes were triggered by another
	// run; the caller lost the race and has nothing left to do.
	CodeAlreadyTriggered = "already_triggered"
	// CodeRescore: scores were computed from submissions that changed
	// while scoring; compute them again.
	CodeRescore = "rescore"
	// CodePortfolioChanged: a portfolio moved since it was read; reread
	// and retry.
	CodePortfolioChanged = "portfolio_changed"
	// CodeClaimLost: a decision claim was taken over by another runner.
	CodeClaimLost = "claim_lost"
)

// Error is an application error a user can act on. Kind selects the class
// (and HTTP status); Code is a stable machine-readable reason, defaulting to
// Kind. Protocol rejections use distinct codes, e.g. "signature_high_s".
// Err is the underlying cause, if any: it is kept for logs and errors.Is,
// while Message alone is what users see.
type Error struct {
	Kind    string
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the given kind. As with fmt.Errorf, a %w verb
// records its operand as the cause.
func Errorf(kind, format string, args ...any) *Error {
	return Rejectf(kind, kind, format, args...)
}

// Rejectf returns an *Error with a specific code within a kind.
func Rejectf(kind, code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: kind, Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// ErrorKind returns the kind of err, or EINTERNAL for foreign errors.
func ErrorKind(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return EINTERNAL
}

// ErrorCode returns the specific code of err, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message; internal errors are not leaked.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
