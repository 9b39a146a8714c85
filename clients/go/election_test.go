package leasehold_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"leasehold"
	"leasehold/internal/testserver"
)

func TestElectionPublishesTheLeaderAndFencesTheOldOne(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 30*time.Second)
	a, b := openSession(t, c, 10*time.Second), openSession(t, c, 10*time.Second)
	ea, eb := a.NewElection("svc"), b.NewElection("svc")

	obsCtx, stopObserving := context.WithCancel(ctx)
	defer stopObserving()
	leaders := eb.Observe(obsCtx, 20*time.Millisecond)
	if l := testserver.Receive(t, leaders, 10*time.Second, "the first observation"); l != nil {
		t.Fatalf("a leader before any campaign: %+v", l)
	}

	if err := ea.Campaign(ctx, []byte("10.0.0.1:80"), time.Second); err != nil {
		t.Fatal(err)
	}
	if !ea.IsLeader() {
		t.Fatal("the winner does not lead")
	}
	leader, err := eb.Leader(ctx)
	if err != nil || leader == nil || leader.Session != a.ID() || string(leader.Value) != "10.0.0.1:80" {
		t.Fatalf("Leader: %+v %v", leader, err)
	}
	testserver.Require(t, 10*time.Second, "Observe reports the leader", func() bool {
		select {
		case l := <-leaders:
			return l != nil && string(l.Value) == "10.0.0.1:80"
		default:
			return false
		}
	})
	if err := eb.Campaign(ctx, []byte("10.0.0.2:80"), 100*time.Millisecond); !errors.Is(err, leasehold.ErrTimedOut) {
		t.Fatalf("a campaign against a leader: %v", err)
	}
	won := make(chan error, 1)
	go func() { won <- eb.Campaign(ctx, []byte("10.0.0.2:80"), 10*time.Second) }()
	testserver.Require(t, 10*time.Second, "the second candidate queued", func() bool {
		info, err := c.LockInfo(ctx, ea.LockName())
		return err == nil && info != nil && len(info.Waiters) == 1
	})
	oldToken := ea.Token()
	if err := ea.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := testserver.Receive(t, won, 10*time.Second, "the second campaign"); err != nil {
		t.Fatal(err)
	}
	leader, err = ea.Leader(ctx)
	if err != nil || leader == nil || leader.Session != b.ID() || string(leader.Value) != "10.0.0.2:80" || leader.Token <= oldToken {
		t.Fatalf("Leader after the hand-over: %+v %v", leader, err)
	}
	if err := ea.Proclaim(ctx, []byte("stale")); !errors.Is(err, leasehold.ErrNotHolder) {
		t.Fatalf("Proclaim after resigning: %v", err)
	}
	if _, err := c.FencedPut(ctx, ea.LockName(), []byte("stale"), ea.LockName(), oldToken); !errors.Is(err, leasehold.ErrStaleToken) {
		t.Fatalf("the old leader's token: %v", err)
	}
	done := eb.Done()
	if err := eb.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if !isClosed(done) || eb.IsLeader() {
		t.Fatal("still leading after Resign")
	}
}
