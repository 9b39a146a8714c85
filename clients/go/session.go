package leasehold

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Session is a leasehold session that keeps itself alive and announces its
// loss (docs/go.md, and docs/client.md "Sessions and the safe deadline").
//
// NewSession sends SESSION.OPEN; a goroutine then keeps it alive on a
// connection of its own (outside the pool, so blocking locks never starve
// it): SESSION.WATCH for the server's pushes, and SESSION.KEEPALIVE about
// every TTL/3.
//
// SAFE DEADLINE: the send time of the last acknowledged keepalive (before
// the first: of SESSION.OPEN) plus the TTL the server granted (at most the
// session's TTL), minus the DRIFT BOUND (by default 1% of the TTL plus 2 ms).
// Until then the server cannot have expired the session, as long as its
// monotonic clock runs at most about 1% faster than this process's. All of
// it is measured on the monotonic clock (time.Now's monotonic reading): a
// wall-clock step changes nothing.
//
// The session is LOST at the first of: a `session-ended` push (expired,
// killed), a keepalive answered -EXPIRED, or the safe deadline passing with
// no acknowledgement (server down or frozen, network cut). Then Done() is
// closed, Err() says why (a *LostError) and every Lock of the session is
// lost with it. A lock lost on its own (a `lost` push: revoked, or released
// by another connection) loses only that Lock. After the keepalive
// connection reconnects, the session re-checks its locks with LOCK.INFO (a
// push may have been missed meanwhile).
//
// Every method is safe for concurrent use.
type Session struct {
	client   *Client
	id       uint64
	ttl      time.Duration
	interval time.Duration
	drift    time.Duration
	seq      uint64 // atomic: the last SEQ used

	ctx    context.Context // ends when the session ends or is closed
	cancel context.CancelFunc

	mu       sync.Mutex
	deadline time.Time
	err      error // nil while live
	done     chan struct{}
	closing  bool
	locks    map[lockKey]*Lock
	watching chan struct{} // closed once the first SESSION.WATCH is acknowledged
	loopDone chan struct{}
}

type lockKey struct {
	name  string
	token uint64
}

// SessionOption changes a session's defaults.
type SessionOption func(*sessionConfig)

type sessionConfig struct {
	owner       string
	interval    time.Duration
	driftFactor float64
	driftFixed  time.Duration
}

// WithOwner labels the session (SESSION.OPEN OWNER): shown by LOCK.INFO,
// `leasehold locks` and the history.
func WithOwner(owner string) SessionOption { return func(c *sessionConfig) { c.owner = owner } }

// WithKeepaliveInterval sets how often keepalives are sent (default TTL/3).
func WithKeepaliveInterval(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.interval = d }
}

// WithDriftBound sets the drift bound to factor x TTL + fixed (default
// 0.01 x TTL + 2ms); it must stay below the TTL.
func WithDriftBound(factor float64, fixed time.Duration) SessionOption {
	return func(c *sessionConfig) { c.driftFactor, c.driftFixed = factor, fixed }
}

// NewSession opens a session with the given TTL (how soon its locks free
// after this process dies; whole milliseconds, at least 1ms) and starts
// keeping it alive. It returns once the keepalive connection watches the
// session (or after the call timeout). Close it when done: until then its goroutine keeps the
// session (and its locks) alive. Errors: ErrInvalidArgument (a TTL or option refused here
// or by the server), ErrUnreachable, ctx's error. SESSION.OPEN is re-sent
// only when it was never sent.
func (c *Client) NewSession(ctx context.Context, ttl time.Duration, opts ...SessionOption) (*Session, error) {
	cfg := sessionConfig{driftFactor: 0.01, driftFixed: 2 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	drift := time.Duration(float64(ttl)*cfg.driftFactor) + cfg.driftFixed
	switch {
	case ttl < time.Millisecond || ttl%time.Millisecond != 0:
		return nil, newError(ErrInvalidArgument, fmt.Sprintf("TTL %v: a whole number of milliseconds, at least 1ms", ttl))
	case cfg.driftFactor < 0 || cfg.driftFixed < 0 || drift >= ttl:
		return nil, newError(ErrInvalidArgument, fmt.Sprintf("drift bound %v must be in [0, TTL %v)", drift, ttl))
	case cfg.interval < 0:
		return nil, newError(ErrInvalidArgument, "negative keepalive interval")
	}
	if cfg.interval == 0 {
		cfg.interval = ttl / 3
	}
	args := []interface{}{"SESSION.OPEN", millis(ttl)}
	if cfg.owner != "" {
		args = append(args, "OWNER", cfg.owner)
	}
	sent := time.Now()
	reply, err := c.call(ctx, callSpec{retry: retryIfNotSent}, args...)
	if err != nil {
		return nil, err
	}
	id, err := asInt(reply, "SESSION.OPEN")
	if err != nil {
		return nil, err
	}
	s := &Session{client: c, id: uint64(id), ttl: ttl, interval: cfg.interval, drift: drift,
		deadline: sent.Add(ttl - drift), done: make(chan struct{}), locks: map[lockKey]*Lock{},
		watching: make(chan struct{}), loopDone: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.keepAlive()
	// Pushes flow once the keepalive connection watches the session: wait
	// for that (bounded), so that a loss right after the first grant is
	// not missed. Past the bound the session is returned all the same; its
	// locks are re-checked with LOCK.INFO once the watch is in place.
	t := time.NewTimer(c.opts.CallTimeout)
	defer t.Stop()
	select {
	case <-s.watching:
	case <-s.done:
	case <-ctx.Done():
	case <-t.C:
	}
	return s, nil
}

// ID is the server's session id.
func (s *Session) ID() uint64 { return s.id }

// TTL is the session's time to live.
func (s *Session) TTL() time.Duration { return s.ttl }

// Client is the client the session was opened with.
func (s *Session) Client() *Client { return s.client }

// SafeDeadline is the time until which the server cannot have expired this
// session (see the type's doc). It carries a monotonic clock reading:
// compare it with time.Now() or use time.Until, never its wall time.
func (s *Session) SafeDeadline() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline
}

// Done is closed when the session is lost or closed.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is nil while the session is live; a *LostError once lost (also as
// soon as the safe deadline has passed, before the keepalive goroutine
// noticed); an error matching ErrClosed once closed.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && !time.Now().Before(s.deadline) {
		return &LostError{What: s.what(), Cause: newError(ErrTimedOut, "the session's safe deadline has passed")}
	}
	return s.err
}

func (s *Session) what() string { return fmt.Sprintf("session %d", s.id) }

func (s *Session) nextSeq() uint64 { return atomic.AddUint64(&s.seq, 1) }

func (s *Session) setDeadline(t time.Time) {
	s.mu.Lock()
	s.deadline = t
	s.mu.Unlock()
}

// end ends the session once: lost (err a *LostError) or closed. Every lock
// of the session is lost with it.
func (s *Session) end(err error) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err = err
	locks := s.locks
	s.locks = map[lockKey]*Lock{}
	s.mu.Unlock()
	close(s.done)
	s.cancel()
	for _, l := range locks {
		l.markLost(err)
	}
}

func (s *Session) lose(cause *Error) { s.end(&LostError{What: s.what(), Cause: cause}) }

// lockLost loses one lock (a `lost` push or a failed re-check).
func (s *Session) lockLost(name string, token uint64, cause *Error) {
	s.mu.Lock()
	l := s.locks[lockKey{name, token}]
	delete(s.locks, lockKey{name, token})
	s.mu.Unlock()
	if l != nil {
		l.markLost(&LostError{What: l.what(), Cause: cause})
	}
}

func (s *Session) register(l *Lock) {
	s.mu.Lock()
	err := s.err
	if err == nil {
		s.locks[lockKey{l.name, l.token}] = l
	}
	s.mu.Unlock()
	if err != nil {
		l.markLost(err)
	}
}

func (s *Session) unregister(l *Lock) {
	s.mu.Lock()
	delete(s.locks, lockKey{l.name, l.token})
	s.mu.Unlock()
}

func (s *Session) heldLocks() []*Lock {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Lock, 0, len(s.locks))
	for _, l := range s.locks {
		out = append(out, l)
	}
	return out
}

// Close stops the keepalive and closes the session on the server (once,
// bounded by ctx and the call timeout); the server releases its locks.
// Done() is closed and Err() matches ErrClosed afterwards (unless it was
// lost before). Idempotent; the error is SESSION.CLOSE's, if any.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	neverEnded := s.err == nil
	pastDeadline := !time.Now().Before(s.deadline)
	s.mu.Unlock()
	s.end(newError(ErrClosed, s.what()+" closed"))
	<-s.loopDone
	if !neverEnded {
		return nil
	}
	spec := callSpec{retry: retrySafe}
	if pastDeadline { // the server may have ended it already: try briefly
		spec.timeout = 500 * time.Millisecond
	}
	_, err := s.client.call(ctx, spec, "SESSION.CLOSE", s.id)
	return err
}
