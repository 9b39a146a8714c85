package leasehold

import (
	"errors"
	"strings"
)

// The kinds of error a caller can act on. Test with errors.Is:
//
//	if errors.Is(err, leasehold.ErrStaleToken) { stop the work }
//
// Server error replies map one-to-one (docs/protocol.md): -STALE is
// ErrStaleToken, -EXPIRED ErrSessionExpired, and so on, as in the C++
// client's ErrorCode and the Python client's exception classes.
var (
	// ErrUnreachable: no endpoint answered within the call's deadline.
	ErrUnreachable = errors.New("unreachable")
	// ErrTimedOut: a deadline passed; for a lock: not granted within its wait.
	ErrTimedOut = errors.New("timed out")
	// ErrWouldBlock: a try-once lock (Wait 0) found the lock held by others.
	ErrWouldBlock = errors.New("would block")
	// ErrNotHolder: the session does not (any longer) hold the lock.
	ErrNotHolder = errors.New("not holder")
	// ErrStaleToken: a fenced write with a token that is no longer current.
	ErrStaleToken = errors.New("stale token")
	// ErrSessionExpired: the session is gone (expired, killed, closed).
	ErrSessionExpired = errors.New("session expired")
	// ErrNotFound: no such session, lock or wait.
	ErrNotFound = errors.New("not found")
	// ErrConflict: mode mismatch, a different semaphore limit, already holding or waiting.
	ErrConflict = errors.New("conflict")
	// ErrInvalidArgument: a bad argument, refused locally or by the server's -ERR.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrLimitExceeded: a configured size or count limit of the server.
	ErrLimitExceeded = errors.New("limit exceeded")
	// ErrUnavailable: the node cannot serve now (etcd unavailable, shutting down).
	ErrUnavailable = errors.New("unavailable")
	// ErrRedirect: -REDIRECT host:port; followed by the client, returned after too many hops.
	ErrRedirect = errors.New("redirect")
	// ErrInternal: a bug or an unexpected reply.
	ErrInternal = errors.New("internal error")
	// ErrAuthenticationRequired: the server wants credentials and got none (-NOAUTH).
	ErrAuthenticationRequired = errors.New("authentication required")
	// ErrAuthenticationFailed: a wrong user name or password (-WRONGPASS). Never retried.
	ErrAuthenticationFailed = errors.New("authentication failed")
	// ErrPermissionDenied: the user may not run this command or use this lock (-NOPERM).
	ErrPermissionDenied = errors.New("permission denied")
	// ErrLost: the lock or its session is lost, or the safe deadline has passed.
	ErrLost = errors.New("lost")
	// ErrClosed: the Client or Session was closed.
	ErrClosed = errors.New("closed")
)

// Error is what every call of this package returns on failure: a Kind
// (one of the Err* values above, for errors.Is), the server's error prefix
// when the server refused (Code, e.g. "STALE"), and a message saying what
// went wrong.
type Error struct {
	Kind    error
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "leasehold: " + e.Kind.Error()
	}
	return "leasehold: " + e.Kind.Error() + ": " + e.Message
}

// Unwrap makes errors.Is(err, ErrStaleToken) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, message string) *Error {
	return &Error{Kind: kind, Message: message}
}

// errorPrefixes maps the server's error prefixes to kinds (docs/protocol.md).
var errorPrefixes = map[string]error{
	"ERR":         ErrInvalidArgument,
	"LIMIT":       ErrLimitExceeded,
	"NOTFOUND":    ErrNotFound,
	"NOTHOLDER":   ErrNotHolder,
	"STALE":       ErrStaleToken,
	"EXPIRED":     ErrSessionExpired,
	"CONFLICT":    ErrConflict,
	"UNAVAILABLE": ErrUnavailable,
	"REDIRECT":    ErrRedirect,
	"TIMEOUT":     ErrTimedOut,
	"INTERNAL":    ErrInternal,
	"NOAUTH":      ErrAuthenticationRequired,
	"WRONGPASS":   ErrAuthenticationFailed,
	"NOPERM":      ErrPermissionDenied,
}

// errorFromReply turns an error reply's text ("STALE token 3 ...") into an
// *Error. Access refusals keep their prefix in the message, as the C++
// client does; an unknown prefix is an internal error (an unexpected reply).
func errorFromReply(text string) *Error {
	prefix, rest, _ := strings.Cut(text, " ")
	kind, ok := errorPrefixes[prefix]
	if !ok {
		return &Error{Kind: ErrInternal, Message: "unexpected error reply: " + text}
	}
	switch prefix {
	case "NOAUTH", "WRONGPASS", "NOPERM":
		return &Error{Kind: kind, Code: prefix, Message: text}
	}
	if rest == "" {
		rest = prefix
	}
	return &Error{Kind: kind, Code: prefix, Message: rest}
}
