package leasehold_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"leasehold"
	"leasehold/internal/testserver"
)

func TestLocksExcludeAndTokensIncrease(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	la, err := a.Lock(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "x", nil); !errors.Is(err, leasehold.ErrWouldBlock) {
		t.Fatalf("try-once on a held lock: %v", err)
	}
	if _, err := b.Lock(ctx, "x", &leasehold.LockOptions{Wait: 50 * time.Millisecond}); !errors.Is(err, leasehold.ErrTimedOut) {
		t.Fatalf("a short wait on a held lock: %v", err)
	}
	if _, err := a.Lock(ctx, "x", nil); !errors.Is(err, leasehold.ErrConflict) {
		t.Fatalf("the holder asking again: %v", err)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := la.Unlock(ctx); err != nil {
		t.Fatalf("a second Unlock: %v", err)
	}
	if !isClosed(la.Lost()) || !errors.Is(la.Err(), leasehold.ErrNotFound) {
		t.Fatalf("after Unlock: %v", la.Err())
	}
	lb, err := b.Lock(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Token() <= la.Token() {
		t.Fatalf("token %d after %d", lb.Token(), la.Token())
	}
	for _, bad := range []*leasehold.LockOptions{{Shared: true, Limit: 2}, {Limit: -1}, {Wait: -5}, {Delay: -1}} {
		if _, err := a.Lock(ctx, "bad", bad); !errors.Is(err, leasehold.ErrInvalidArgument) {
			t.Fatalf("options %+v: %v", bad, err)
		}
	}
	if _, err := a.Lock(ctx, "", nil); !errors.Is(err, leasehold.ErrInvalidArgument) {
		t.Fatalf("empty name: %v", err)
	}
}

func TestSharedAndSemaphoreModes(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	s1, s2, s3 := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	shared := &leasehold.LockOptions{Shared: true}
	if _, err := s1.Lock(ctx, "rw", shared); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Lock(ctx, "rw", shared); err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if _, err := s3.Lock(ctx, "rw", nil); !errors.Is(err, leasehold.ErrWouldBlock) {
		t.Fatalf("a writer beside readers: %v", err)
	}
	sem := &leasehold.LockOptions{Limit: 2}
	if _, err := s1.Lock(ctx, "sem", sem); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Lock(ctx, "sem", sem); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Lock(ctx, "sem", sem); !errors.Is(err, leasehold.ErrWouldBlock) {
		t.Fatalf("a third permit of two: %v", err)
	}
	if _, err := s3.Lock(ctx, "sem", &leasehold.LockOptions{Limit: 3}); !errors.Is(err, leasehold.ErrConflict) {
		t.Fatalf("a different limit: %v", err)
	}
	info, err := c.LockInfo(ctx, "sem")
	if err != nil || info == nil || info.Mode != "semaphore" || info.Limit != 2 || len(info.Holders) != 2 {
		t.Fatalf("LOCK.INFO sem: %+v %v", info, err)
	}
}

// Waiters are granted in the order they queued, each when the one before
// releases, across goroutines of one process.
func TestFIFOHandOffAcrossGoroutines(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, &leasehold.Options{CallTimeout: 2 * time.Second, MaxConnections: 16})
	ctx := testCtx(t, 60*time.Second)
	holder := openSession(t, c, 10*time.Second)
	first, err := holder.Lock(ctx, "fifo", nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	var mu sync.Mutex
	var order []int
	var tokens []uint64
	release := make([]chan struct{}, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		release[i] = make(chan struct{})
		s := openSession(t, c, 10*time.Second)
		wg.Add(1)
		go func(i int, s *leasehold.Session) {
			defer wg.Done()
			l, err := s.Lock(ctx, "fifo", &leasehold.LockOptions{Wait: leasehold.WaitForever})
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order, tokens = append(order, i), append(tokens, l.Token())
			mu.Unlock()
			<-release[i]
			l.Unlock(ctx)
		}(i, s)
		// Queue them one after the other: waiter i is in the queue before i+1 asks.
		testserver.Require(t, 10*time.Second, "waiter queued", func() bool {
			info, err := c.LockInfo(ctx, "fifo")
			return err == nil && info != nil && len(info.Waiters) == i+1
		})
	}
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		testserver.Require(t, 10*time.Second, "the next grant", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(order) == i+1
		})
		close(release[i])
	}
	wg.Wait()
	for i := range order {
		if order[i] != i {
			t.Fatalf("granted in order %v; want queue order", order)
		}
		if tokens[i] <= first.Token() || (i > 0 && tokens[i] <= tokens[i-1]) {
			t.Fatalf("tokens %v after %d", tokens, first.Token())
		}
	}
}

// Cancelling the context of a blocked Lock returns at once and leaves no
// waiter behind (the server drops a wait whose connection closed).
func TestCancelledWaitLeavesTheQueue(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	if _, err := a.Lock(ctx, "cancel", nil); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	result := make(chan error, 1)
	go func() {
		_, err := b.Lock(waitCtx, "cancel", &leasehold.LockOptions{Wait: leasehold.WaitForever})
		result <- err
	}()
	testserver.Require(t, 10*time.Second, "the waiter queued", func() bool {
		info, err := c.LockInfo(ctx, "cancel")
		return err == nil && info != nil && len(info.Waiters) == 1
	})
	cancel()
	if err := testserver.Receive(t, result, 10*time.Second, "the cancelled Lock"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	testserver.Require(t, 10*time.Second, "the wait left the queue", func() bool {
		info, err := c.LockInfo(ctx, "cancel")
		return err == nil && info != nil && len(info.Waiters) == 0
	})
}

// A lock wait far longer than the TTL: the keepalive runs on its own
// connection, so the waiting session stays alive.
func TestKeepaliveThroughALongWait(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, time.Second)
	if _, err := a.Lock(ctx, "long", nil); err != nil {
		t.Fatal(err)
	}
	_, err := b.Lock(ctx, "long", &leasehold.LockOptions{Wait: 3 * time.Second})
	if !errors.Is(err, leasehold.ErrTimedOut) {
		t.Fatalf("a wait on a held lock: %v", err)
	}
	if b.Err() != nil {
		t.Fatalf("the waiting session was lost: %v", b.Err())
	}
}

// A blocking Lock whose connection dies mid-wait (the server is killed and
// restarted) is re-sent with the same SEQ: it ends with exactly one grant
// and leaves no second wait behind.
func TestWaitResentAfterAServerRestartGrantsOnce(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, &leasehold.Options{CallTimeout: testserver.Scaled(10 * time.Second)})
	ctx := testCtx(t, 90*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	held, err := a.Lock(ctx, "resent", nil)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		lock *leasehold.Lock
		err  error
	}
	got := make(chan result, 1)
	go func() {
		l, err := b.Lock(ctx, "resent", &leasehold.LockOptions{Wait: 30 * time.Second})
		got <- result{l, err}
	}()
	testserver.Require(t, 10*time.Second, "the waiter queued", func() bool {
		info, err := c.LockInfo(ctx, "resent")
		return err == nil && info != nil && len(info.Waiters) == 1
	})
	srv.Restart()
	testserver.Require(t, 20*time.Second, "the wait queued after the restart", func() bool {
		info, err := c.LockInfo(ctx, "resent")
		return err == nil && info != nil && len(info.Waiters) == 1
	})
	if err := held.Unlock(ctx); err != nil {
		t.Fatalf("Unlock after the restart: %v", err)
	}
	r := testserver.Receive(t, got, 20*time.Second, "the grant")
	if r.err != nil {
		t.Fatalf("the re-sent wait: %v", r.err)
	}
	info, err := c.LockInfo(ctx, "resent")
	if err != nil || info == nil || len(info.Holders) != 1 || len(info.Waiters) != 0 ||
		info.Holders[0].Session != b.ID() || info.Holders[0].Token != r.lock.Token() {
		t.Fatalf("after the grant: %+v %v; want one holder (session %d) and no waiter", info, err, b.ID())
	}
}

// Lock-delay: after the holder's session is killed, the lock is not granted
// again until the delay has passed.
func TestLockDelayAfterAKill(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	if _, err := a.Lock(ctx, "delayed", &leasehold.LockOptions{Delay: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := c.KillSession(ctx, a.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "delayed", nil); !errors.Is(err, leasehold.ErrWouldBlock) {
		t.Fatalf("during the lock-delay: %v; want ErrWouldBlock", err)
	}
	info, err := c.LockInfo(ctx, "delayed")
	if err != nil || info == nil || info.DelayMs <= 0 || len(info.Holders) != 0 {
		t.Fatalf("LOCK.INFO during the lock-delay: %+v %v", info, err)
	}
}
