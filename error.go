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
	ETOOLARGE     = "too_large"
	EUNAVAILABLE  = "unavailable" // an upstream source failed
)

// Error is an application error a user can act on. Kind selects the class
// (and HTTP status); Code is a stable machine-readable reason, defaulting to
// Kind. Protocol rejections use distinct codes, e.g. "signature_high_s".
type Error struct {
	Kind    string
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error of the given kind.
func Errorf(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: kind, Message: fmt.Sprintf(format, args...)}
}

// Rejectf returns an *Error with a specific code within a kind.
func Rejectf(kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
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
