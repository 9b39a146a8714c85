package leasehold_test

import (
	"errors"
	"testing"
	"time"

	"leasehold"
	"leasehold/internal/testserver"
)

func TestSessionKeepsItselfAliveAndClosesCleanly(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	const ttl = time.Second // not shorter: kept alive on real time on a busy machine
	s := openSession(t, c, ttl)
	l, err := s.Lock(ctx, "alive", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := s.SafeDeadline()
	// Several TTLs of keepalives: the deadline moves on and nothing is lost.
	testserver.Require(t, 10*time.Second, "the safe deadline moves past three TTLs", func() bool {
		return s.SafeDeadline().After(first.Add(3 * ttl))
	})
	if s.Err() != nil || l.Err() != nil || isClosed(l.Lost()) {
		t.Fatalf("lost while kept alive: %v / %v", s.Err(), l.Err())
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !isClosed(s.Done()) || !errors.Is(s.Err(), leasehold.ErrClosed) || !isClosed(l.Lost()) {
		t.Fatalf("after Close: done %v err %v lock lost %v", isClosed(s.Done()), s.Err(), isClosed(l.Lost()))
	}
	info, err := c.LockInfo(ctx, "alive")
	if err != nil {
		t.Fatal(err)
	}
	if info != nil && len(info.Holders) != 0 {
		t.Fatalf("closing the session left holders: %+v", info.Holders)
	}
}

// The safe deadline is the last acknowledged keepalive's send time plus the
// TTL minus the drift bound (1% of the TTL + 2ms by default): never later
// than TTL - drift from now.
func TestSafeDeadlineKeepsTheDriftBound(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	const ttl = 10 * time.Second
	before := time.Now()
	s := openSession(t, c, ttl)
	drift := ttl/100 + 2*time.Millisecond
	if got := s.SafeDeadline(); got.After(time.Now().Add(ttl-drift)) || got.Before(before.Add(ttl-drift)) {
		t.Fatalf("safe deadline %v from now; want at most %v", time.Until(got), ttl-drift)
	}
	s2 := openSession(t, c, ttl, leasehold.WithDriftBound(0.1, 0))
	if got := time.Until(s2.SafeDeadline()); got > ttl-ttl/10 {
		t.Fatalf("safe deadline %v from now with a 10%% drift bound", got)
	}
	if _, err := c.NewSession(testCtx(t, 5*time.Second), ttl, leasehold.WithDriftBound(1, 0)); !errors.Is(err, leasehold.ErrInvalidArgument) {
		t.Fatalf("a drift bound of the whole TTL: %v", err)
	}
	if _, err := c.NewSession(testCtx(t, 5*time.Second), 0); !errors.Is(err, leasehold.ErrInvalidArgument) {
		t.Fatalf("a zero TTL: %v", err)
	}
}

// Killed and restarted on the same data dir and port within the TTL, the
// server still knows the session: the keepalive reconnects, the session
// and its lock survive and the server still lists this holder.
func TestKeepaliveSurvivesAServerRestartWithinTheTTL(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 60*time.Second)
	const ttl = 6 * time.Second
	s := openSession(t, c, ttl)
	l, err := s.Lock(ctx, "restart", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Restart() // kill -9, then the same port and data dir
	restarted := time.Now()
	// A keepalive acknowledged by the new process moves the deadline past
	// what the old one could have granted.
	testserver.Require(t, ttl, "a keepalive acknowledged after the restart", func() bool {
		return s.SafeDeadline().After(restarted.Add(ttl / 2))
	})
	if s.Err() != nil || l.Err() != nil {
		t.Fatalf("lost across a short restart: session %v lock %v", s.Err(), l.Err())
	}
	info, err := c.LockInfo(ctx, "restart")
	if err != nil {
		t.Fatal(err)
	}
	if info == nil || len(info.Holders) != 1 || info.Holders[0].Session != s.ID() || info.Holders[0].Token != l.Token() {
		t.Fatalf("after the restart the server lists %+v; want session %d token %d", info, s.ID(), l.Token())
	}
	if _, err := l.Put(ctx, "restart/key", []byte("v")); err != nil {
		t.Fatalf("fenced write after the restart: %v", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// A paused server (SIGSTOP) acknowledges nothing: the session and its lock
// are lost at the safe deadline, not before it. Once the server runs again
// (SIGCONT) it expires the session itself, another session takes the lock,
// and the old holder's token is refused by FENCE.PUT.
func TestLossAtTheSafeDeadlineWhenTheServerIsPaused(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 60*time.Second)
	const ttl = 2 * time.Second // not shorter: kept alive on real time on a busy machine
	s := openSession(t, c, ttl)
	l, err := s.Lock(ctx, "paused", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "paused/ledger", []byte("before")); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	deadline := s.SafeDeadline()
	testserver.Receive(t, l.Lost(), 10*time.Second, "the loss notice")
	lostAt := time.Now()
	srv.Resume()
	// Elapsed time checked on purpose: the loss is never announced early.
	if lostAt.Before(deadline) {
		t.Fatalf("lost %v before the safe deadline", deadline.Sub(lostAt))
	}
	if !errors.Is(l.Err(), leasehold.ErrLost) || !errors.Is(l.Err(), leasehold.ErrTimedOut) {
		t.Fatalf("lock error %v; want a loss by timeout", l.Err())
	}
	if !isClosed(s.Done()) || !errors.Is(s.Err(), leasehold.ErrLost) {
		t.Fatalf("session not lost: %v", s.Err())
	}
	if _, err := s.Lock(ctx, "other", nil); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("Lock on a lost session: %v", err)
	}

	other := openSession(t, c, ttl)
	l2, err := other.Lock(ctx, "paused", &leasehold.LockOptions{Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("the next holder: %v", err)
	}
	if l2.Token() <= l.Token() {
		t.Fatalf("token %d after %d", l2.Token(), l.Token())
	}
	if _, err := c.FencedPut(ctx, "paused/ledger", []byte("stale"), "paused", l.Token()); !errors.Is(err, leasehold.ErrStaleToken) {
		t.Fatalf("a write with the old token: %v; want ErrStaleToken", err)
	}
	if _, err := l2.Put(ctx, "paused/ledger", []byte("after")); err != nil {
		t.Fatal(err)
	}
	got, err := c.FencedGet(ctx, "paused/ledger")
	if err != nil || got == nil || string(got.Value) != "after" || got.Token != l2.Token() {
		t.Fatalf("FencedGet: %+v, %v", got, err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("Unlock of a lost lock: %v", err)
	}
}

// SESSION.KILL is announced by a push at once, long before the TTL.
func TestKillIsAnnouncedByPush(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	s := openSession(t, c, 60*time.Second)
	l, err := s.Lock(ctx, "killed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.KillSession(ctx, s.ID()); err != nil {
		t.Fatal(err)
	}
	// Far below the 60s TTL: only a push can bring the notice this soon.
	testserver.Receive(t, l.Lost(), 10*time.Second, "the lock's loss push")
	testserver.Receive(t, s.Done(), 10*time.Second, "the session's loss push") // a push of its own, maybe later
	if !errors.Is(l.Err(), leasehold.ErrSessionExpired) || !errors.Is(s.Err(), leasehold.ErrSessionExpired) {
		t.Fatalf("lock %v session %v; want ErrSessionExpired", l.Err(), s.Err())
	}
}

// LOCK.REVOKE loses only the revoked lock, with ErrNotHolder.
func TestRevokeLosesOnlyThatLock(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	s := openSession(t, c, 60*time.Second)
	a, err := s.Lock(ctx, "revoked", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Lock(ctx, "kept", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Revoke(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	testserver.Receive(t, a.Lost(), 10*time.Second, "the revoke push")
	if !errors.Is(a.Err(), leasehold.ErrNotHolder) || !errors.Is(a.Err(), leasehold.ErrLost) {
		t.Fatalf("revoked lock: %v", a.Err())
	}
	if b.Err() != nil || s.Err() != nil {
		t.Fatalf("revoking one lock lost more: %v / %v", b.Err(), s.Err())
	}
}
