package leasehold

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"
)

// Election is leader election on a lock plus a fenced value, with the same
// contract as the C++ and Python clients' Election: a candidate campaigns
// by acquiring the exclusive lock "election/<name>", then publishes its
// value with FENCE.PUT under the key "election/<name>", tagged with its
// fencing token. Leader reads the holder (LOCK.INFO) and the value
// (FENCE.GET); the value counts only when its token is the holder's, so a
// deposed leader's stale value is never reported as current.
//
// Leadership ends with Resign or with the loss of the lock (session lost,
// lock revoked): then Done() is closed. A new Campaign may follow. Safe
// for concurrent use.
type Election struct {
	s        *Session
	lockName string

	mu   sync.Mutex
	lock *Lock
}

// Leader is the current leader as the server sees it.
type Leader struct {
	Session uint64
	Token   uint64
	Value   []byte // nil while the leader has not published yet
}

// NewElection returns the election `name` for this session.
func (s *Session) NewElection(name string) *Election {
	return &Election{s: s, lockName: "election/" + name}
}

// LockName is the lock (and fenced key) the election runs on.
func (e *Election) LockName() string { return e.lockName }

// Campaign waits up to `wait` (LockOptions.Wait: 0 tries once, WaitForever)
// to lead, then publishes value. While leading it only publishes. Errors:
// those of Session.Lock (ErrTimedOut when another leads throughout), and
// ErrStaleToken when leadership was lost between grant and publish.
func (e *Election) Campaign(ctx context.Context, value []byte, wait time.Duration) error {
	if e.IsLeader() {
		return e.Proclaim(ctx, value)
	}
	l, err := e.s.Lock(ctx, e.lockName, &LockOptions{Wait: wait})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.lock = l
	e.mu.Unlock()
	return e.Proclaim(ctx, value)
}

// Proclaim publishes a new value while leading; ErrNotHolder when not.
func (e *Election) Proclaim(ctx context.Context, value []byte) error {
	e.mu.Lock()
	l := e.lock
	e.mu.Unlock()
	if l == nil || l.Err() != nil {
		return newError(ErrNotHolder, "not leading "+e.lockName)
	}
	_, err := l.Put(ctx, e.lockName, value)
	return err
}

// IsLeader reports whether this candidate leads now.
func (e *Election) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lock != nil && e.lock.Err() == nil
}

// Token is the leader's fencing token (0 when not leading).
func (e *Election) Token() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return 0
	}
	return e.lock.Token()
}

// Done is closed when this candidate's leadership ends; nil (blocks
// forever) when it does not lead.
func (e *Election) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return nil
	}
	return e.lock.Lost()
}

// Leader returns the current leader; nil when nobody leads.
func (e *Election) Leader(ctx context.Context) (*Leader, error) {
	info, err := e.s.client.LockInfo(ctx, e.lockName)
	if err != nil || info == nil || len(info.Holders) == 0 {
		return nil, err
	}
	h := info.Holders[0]
	published, err := e.s.client.FencedGet(ctx, e.lockName)
	if err != nil {
		return nil, err
	}
	leader := &Leader{Session: h.Session, Token: h.Token}
	if published != nil && published.Token == h.Token {
		leader.Value = published.Value
	}
	return leader, nil
}

// Observe reports the leader every time it changes (nil: nobody leads),
// starting with the current one, by reading Leader every `every`, until
// ctx ends; then the channel is closed. A reader that falls behind gets
// the latest leader, not every one in between. Read errors are skipped
// (the next read tries again).
func (e *Election) Observe(ctx context.Context, every time.Duration) <-chan *Leader {
	out := make(chan *Leader, 1)
	go func() {
		defer close(out)
		var last *Leader
		first := true
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if cur, err := e.Leader(ctx); err == nil && (first || !sameLeader(cur, last)) {
				first, last = false, cur
				select { // keep only the newest
				case <-out:
				default:
				}
				out <- cur
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return out
}

func sameLeader(a, b *Leader) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Session == b.Session && a.Token == b.Token && bytes.Equal(a.Value, b.Value)
}

// Resign steps down (releases the lock). Nil when not leading.
func (e *Election) Resign(ctx context.Context) error {
	e.mu.Lock()
	l := e.lock
	e.lock = nil
	e.mu.Unlock()
	if l == nil {
		return nil
	}
	if err := l.Unlock(ctx); err != nil && !isLoss(err) {
		return err
	}
	return nil
}

func isLoss(err error) bool { return errors.Is(err, ErrLost) || errors.Is(err, ErrClosed) }
