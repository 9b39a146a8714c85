package leasehold

import "fmt"

// LostError says why a session or lock ended while it was in use. It
// matches ErrLost and its cause for errors.Is:
//
//	errors.Is(err, leasehold.ErrLost)           // any loss
//	errors.Is(err, leasehold.ErrNotHolder)      // the lock was revoked or released by another connection
//	errors.Is(err, leasehold.ErrSessionExpired) // the session expired, was killed or closed on the server
//	errors.Is(err, leasehold.ErrTimedOut)       // no keepalive acknowledged before the safe deadline
type LostError struct {
	What  string // "session 7" or "lock 'jobs/billing' token 42"
	Cause *Error
}

func (e *LostError) Error() string {
	return fmt.Sprintf("leasehold: %s lost (%s): %s", e.What, e.Cause.Kind, e.Cause.Message)
}

// Is matches ErrLost; Unwrap gives the cause.
func (e *LostError) Is(target error) bool { return target == ErrLost }
func (e *LostError) Unwrap() error        { return e.Cause }

// reasonCause maps a push's loss reason to its kind: the lock was taken
// away (revoked, replaced, released by another request, its lease ended,
// moved to another session) or the session ended (expired, killed, closed).
func reasonCause(reason string) *Error {
	switch reason {
	case "revoked", "replaced", "released-by-other", "lease-ended", "transferred":
		return newError(ErrNotHolder, reason)
	}
	return newError(ErrSessionExpired, reason)
}
