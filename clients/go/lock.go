package leasehold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// WaitForever, as LockOptions.Wait, waits for the lock with no deadline but
// the context's.
const WaitForever time.Duration = -1

// LockOptions says how to take a lock. The zero value tries once for an
// exclusive lock.
type LockOptions struct {
	// Shared asks for reader mode: many shared holders at once; a queued
	// writer blocks later readers.
	Shared bool
	// Limit > 0 makes the lock a semaphore of Limit permits. Every request
	// on one name must give the same limit (ErrConflict otherwise).
	Limit int
	// Wait: 0 tries once (ErrWouldBlock when held); > 0 waits in the
	// server's FIFO queue up to Wait (ErrTimedOut); WaitForever waits until
	// granted or until ctx ends (the server drops the wait when the
	// connection closes).
	Wait time.Duration
	// Delay is the lock-delay applied if this session expires or is killed
	// while holding: the lock is not granted again for that long.
	Delay time.Duration
}

// Lock is a lock held by a Session, with its fencing token. Pass Token()
// to the resource you protect (FENCE.PUT, or your own store's check).
//
// Lost() is closed as soon as the lock is no longer held: its session was
// lost or closed, the lock was revoked or released by another connection
// (a push), or Unlock released it. Err() says why. Holding a Lock whose
// Err() is nil means the server granted Token() and, as far as this client
// can know, nobody has been granted it since: still let the resource check
// the token.
//
// Every method is safe for concurrent use.
type Lock struct {
	s     *Session
	name  string
	token uint64
	lost  chan struct{}

	mu       sync.Mutex
	err      error
	released bool
}

// Lock acquires the lock `name` for this session (LOCK.ACQUIRE).
//
// Each request carries a fresh SEQ of the session; when the connection
// drops mid-call the request is re-sent with the SAME SEQ, so a lost reply
// can never acquire or enqueue twice (the server answers the retry with
// the first answer). A re-sent wait that finds the first one already ended
// asks again with a new SEQ while time remains.
//
// Errors: ErrInvalidArgument (bad options, refused here), ErrWouldBlock
// (Wait 0 and held), ErrTimedOut (not granted within Wait), ErrConflict
// (mode or limit mismatch, already holding or waiting), ErrSessionExpired,
// the session's *LostError when it ends meanwhile, ctx's error.
func (s *Session) Lock(ctx context.Context, name string, opts *LockOptions) (*Lock, error) {
	var o LockOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case name == "":
		return nil, newError(ErrInvalidArgument, "empty lock name")
	case o.Shared && o.Limit > 0:
		return nil, newError(ErrInvalidArgument, "a lock is shared or a semaphore, not both")
	case o.Limit < 0:
		return nil, newError(ErrInvalidArgument, "a semaphore needs a limit >= 1")
	case o.Wait < 0 && o.Wait != WaitForever:
		return nil, newError(ErrInvalidArgument, "Wait must be 0 (try once), positive, or WaitForever")
	case o.Delay < 0:
		return nil, newError(ErrInvalidArgument, "negative lock-delay")
	}
	// A blocked acquire is cut short when the session ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	deadline := time.Now().Add(o.Wait)
	for {
		if err := s.Err(); err != nil {
			return nil, err
		}
		args := []interface{}{"LOCK.ACQUIRE", name, s.id}
		if o.Shared {
			args = append(args, "SHARED")
		}
		if o.Limit > 0 {
			args = append(args, "LIMIT", o.Limit)
		}
		retries := 0
		spec := callSpec{retry: retrySafe, retries: &retries}
		switch {
		case o.Wait == WaitForever:
			args = append(args, "WAIT", 0)
			spec.forever = true
		case o.Wait > 0:
			left := millis(time.Until(deadline))
			if left < 1 {
				left = 1 // WAIT 0 would mean "forever"
			}
			args = append(args, "WAIT", left)
			spec.extra = time.Duration(left) * time.Millisecond
		}
		if o.Delay > 0 {
			args = append(args, "DELAY", millis(o.Delay))
		}
		args = append(args, "SEQ", s.nextSeq())
		reply, err := s.client.call(ctx, spec, args...)
		if err != nil {
			if serr := s.Err(); serr != nil {
				return nil, serr
			}
			if errors.Is(err, ErrTimedOut) {
				return nil, newError(ErrTimedOut, fmt.Sprintf("lock '%s' not granted in time (%v)", name, err))
			}
			return nil, err
		}
		if reply == nil {
			if o.Wait == 0 {
				return nil, newError(ErrWouldBlock, fmt.Sprintf("lock '%s' is held by another session", name))
			}
			// nil after a re-send: the first wait may have been cancelled by
			// the disconnect; ask again (new SEQ) while time remains.
			if retries > 0 && (o.Wait == WaitForever || time.Now().Before(deadline)) {
				continue
			}
			return nil, newError(ErrTimedOut, fmt.Sprintf("lock '%s' not granted within %v (or the wait was cancelled)", name, o.Wait))
		}
		token, err := asInt(reply, "LOCK.ACQUIRE")
		if err != nil {
			return nil, err
		}
		l := &Lock{s: s, name: name, token: uint64(token), lost: make(chan struct{})}
		s.register(l)
		return l, nil
	}
}

// Name is the lock's name.
func (l *Lock) Name() string { return l.name }

// Token is the fencing token of this grant: unique, and higher than every
// earlier grant of the lock.
func (l *Lock) Token() uint64 { return l.token }

// Session is the session holding the lock.
func (l *Lock) Session() *Session { return l.s }

// Lost is closed once the lock is no longer held (see the type's doc).
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Err is nil while held; why it is not otherwise: a *LostError (match with
// ErrLost and ErrNotHolder / ErrSessionExpired / ErrTimedOut), ErrClosed
// (the session was closed) or ErrNotFound after Unlock. It turns non-nil as
// soon as the session's safe deadline has passed.
func (l *Lock) Err() error {
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.s.Err()
}

func (l *Lock) what() string { return fmt.Sprintf("lock '%s' token %d", l.name, l.token) }

// markLost ends the lock once; true for the first caller.
func (l *Lock) markLost(err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.err = err
	close(l.lost)
	return true
}

// Unlock releases the lock (LOCK.RELEASE with a SEQ, so a re-send after a
// lost reply is harmless). Idempotent. When the lock was already lost it
// sends nothing and returns why (a *LostError, or ErrClosed); ErrNotHolder /
// ErrStaleToken when the server says it was no longer ours.
func (l *Lock) Unlock(ctx context.Context) error {
	l.s.unregister(l)
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	prior := l.err
	l.mu.Unlock()
	if prior != nil {
		return prior
	}
	if err := l.s.Err(); err != nil {
		l.markLost(err)
		return err
	}
	_, err := l.s.client.call(ctx, callSpec{retry: retrySafe}, "LOCK.RELEASE", l.name, l.s.id, l.token, "SEQ", l.s.nextSeq())
	l.markLost(newError(ErrNotFound, l.what()+" was released"))
	return err
}

// Put writes value under key through FENCE.PUT with this lock's token:
// the server refuses it (ErrStaleToken) once this grant is no longer the
// lock's current one. Returns the token written.
func (l *Lock) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return l.s.client.FencedPut(ctx, key, value, l.name, l.token)
}
