package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is a failed model call after the retry policy gave up. Status is
// the HTTP status of the last attempt (0 when no response arrived: timeout
// or connection error). Retryable says whether the last failure was of a
// retryable kind (429, 408, 5xx, timeout, connection error); when it is,
// the attempts were exhausted or the wait exceeded the policy.
type Error struct {
	Agent      string // registry id
	Model      string
	Status     int
	Class      Class // what kind of failure, for reports and callers
	Retryable  bool
	Timeout    bool          // the per-attempt timeout expired
	RetryAfter time.Duration // server-requested wait on the last attempt, if any
	Attempts   int
	Message    string // provider's error message or a description
	Err        error  // underlying cause, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("llm %s (%s)", e.Agent, e.Model)
	switch {
	case e.Timeout:
		s += ": timeout"
	case e.Status != 0:
		s += ": HTTP " + strconv.Itoa(e.Status)
		if t := http.StatusText(e.Status); t != "" {
			s += " " + t
		}
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Class names a kind of failed or unusable model answer. The classes are
// what a user can expect from any OpenAI-compatible provider; see
// docs/agents.md.
type Class string

const (
	// Answers that arrived but cannot be used (Response.Check).
	ClassRefusal   Class = "refusal"        // message.refusal set, or finish_reason content_filter
	ClassLengthCut Class = "length_cut_off" // finish_reason length (or Mistral's model_length): the answer was ended by a limit
	// Calls that failed.
	ClassToolUse       Class = "tool_use_failed"         // the provider rejected the model's own tool call (Groq's 400 tool_use_failed)
	ClassUnknownModel  Class = "unknown_model"           // 404, or code model_not_found
	ClassRateLimit     Class = "rate_limited"            // 429, with or without Retry-After
	ClassContextLength Class = "context_length_exceeded" // the prompt does not fit the model's context
	ClassInStream      Class = "in_stream_error"         // a 200 whose body carries an error instead of an answer
	ClassUnparseable   Class = "unparseable"             // a body that is not a chat completion (or error) at all
	ClassBadRequest    Class = "bad_request"             // another 4xx: unsupported parameter or value, …
	ClassAuth          Class = "auth"                    // 401, 402, 403: key, credit or permission
	ClassServer        Class = "server_error"            // 5xx
	ClassTimeout       Class = "timeout"                 // no answer within the per-call timeout
	ClassConnection    Class = "connection"              // refused, reset or cut off
)

// ClassOf returns the class of a model-call failure or of an unusable
// answer's error, "" when err is neither.
func ClassOf(err error) Class {
	var le *Error
	if errors.As(err, &le) {
		return le.Class
	}
	var ae *AnswerError
	if errors.As(err, &ae) {
		return ae.Class
	}
	return ""
}

// AnswerError is an answer the provider completed but that cannot be used
// as one: a refusal or an answer cut off by max_tokens. The call succeeded
// and is paid for; the caller decides whether to ask again.
type AnswerError struct {
	Class  Class
	Detail string
}

func (e *AnswerError) Error() string {
	switch e.Class {
	case ClassRefusal:
		return "the model refused to answer: " + e.Detail
	case ClassLengthCut:
		return "the answer was cut off at the max_tokens limit before it was complete"
	}
	return string(e.Class) + ": " + e.Detail
}

// Check reports an answer that cannot be used however its text parses: a
// refusal, a content-filter stop, or an answer cut off by max_tokens (whose
// text may still parse, into something the model did not finish saying).
// It returns nil for a usable answer.
func (r Response) Check() error {
	switch {
	case strings.TrimSpace(r.Refusal) != "":
		return &AnswerError{Class: ClassRefusal, Detail: r.Refusal}
	case r.FinishReason == "content_filter":
		return &AnswerError{Class: ClassRefusal, Detail: "the provider's content filter stopped the answer"}
	case r.FinishReason == "length" || r.FinishReason == "model_length":
		// "model_length" is Mistral's: the model's context filled up
		// while it answered.
		return &AnswerError{Class: ClassLengthCut}
	}
	return nil
}

// classOf classifies an HTTP error response from its status and the
// provider's error code, type and message. Providers agree on the status
// codes far more than on codes and messages, so the status decides unless
// the body names a more precise class.
func classOf(status int, code, typ, msg string) Class {
	lc := strings.ToLower(code + " " + typ + " " + msg)
	switch {
	case strings.Contains(lc, "tool_use_failed"):
		return ClassToolUse
	case strings.Contains(lc, "context_length_exceeded") || strings.Contains(lc, "context length") ||
		strings.Contains(lc, "context window") || strings.Contains(lc, "maximum context"):
		return ClassContextLength
	case strings.Contains(lc, "model_not_found"):
		return ClassUnknownModel
	case status == http.StatusTooManyRequests:
		return ClassRateLimit
	case status == http.StatusNotFound:
		return ClassUnknownModel
	case status == http.StatusUnauthorized || status == http.StatusPaymentRequired || status == http.StatusForbidden:
		return ClassAuth
	case status == http.StatusRequestTimeout:
		return ClassTimeout
	case status >= 500:
		return ClassServer
	case status >= 400:
		return ClassBadRequest
	}
	return ""
}

// retryableStatus reports whether an HTTP status is worth retrying: rate
// limits, request timeouts and server errors. 401/403/404 and other 4xx are
// the caller's fault and repeat identically.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}
