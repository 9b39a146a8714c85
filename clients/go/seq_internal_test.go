package leasehold

import (
	"context"
	"errors"
	"testing"
	"time"

	"leasehold/internal/testserver"
)

// The idempotence the Lock relies on: the same (session, SEQ) never
// acquires twice; the retry gets the first answer.
func TestSameSeqReturnsTheFirstAnswer(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testserver.Scaled(30*time.Second))
	defer cancel()
	c, err := Dial(ctx, srv.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	acquire := func() int64 {
		reply, err := c.call(ctx, callSpec{retry: retrySafe}, "LOCK.ACQUIRE", "seq", s.ID(), "SEQ", 1000)
		if err != nil {
			t.Fatal(err)
		}
		token, err := asInt(reply, "LOCK.ACQUIRE")
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	first, retry := acquire(), acquire()
	if first != retry {
		t.Fatalf("retry with the same SEQ got token %d, first %d", retry, first)
	}
	info, err := c.LockInfo(ctx, "seq")
	if err != nil || info == nil || len(info.Holders) != 1 {
		t.Fatalf("LOCK.INFO: %+v %v", info, err)
	}
}

func TestErrorRepliesMapToKinds(t *testing.T) {
	for text, kind := range map[string]error{
		"STALE token 3 is not the holder's": ErrStaleToken,
		"EXPIRED session 4":                 ErrSessionExpired,
		"NOAUTH Authentication required.":   ErrAuthenticationRequired,
		"WRONGPASS invalid username":        ErrAuthenticationFailed,
		"REDIRECT 127.0.0.1:7000":           ErrRedirect,
		"BOGUS what":                        ErrInternal,
	} {
		if e := errorFromReply(text); e.Kind != kind {
			t.Errorf("%q -> %v; want %v", text, e.Kind, kind)
		}
	}
	if e := errorFromReply("REDIRECT 127.0.0.1:7000"); e.Message != "127.0.0.1:7000" {
		t.Errorf("redirect target %q", e.Message)
	}
}

func TestParseEndpoints(t *testing.T) {
	eps, err := ParseEndpoints("127.0.0.1:7379, tls://h:7380,[::1]:1")
	if err != nil || len(eps) != 3 || !eps[1].TLS || eps[2].Host != "::1" || eps[2].String() != "[::1]:1" {
		t.Fatalf("%+v %v", eps, err)
	}
	for _, bad := range []string{"", "host", "h:0", "h:70000", "::1:5", "h:x", ":5"} {
		if _, err := ParseEndpoints(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A LOCK.RELEASE of the holder's lock from another client is pushed to the
// holder (released-by-other): the Lock is lost with ErrNotHolder, the
// session lives on. The holder's own Unlock never causes that push.
func TestReleaseByAnotherClientLosesTheLock(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testserver.Scaled(30*time.Second))
	defer cancel()
	c, err := Dial(ctx, srv.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := Dial(ctx, srv.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := c.NewSession(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	own, err := s.Lock(ctx, "own", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock(ctx, "taken", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.call(ctx, callSpec{}, "LOCK.RELEASE", "taken", s.ID(), l.Token()); err != nil {
		t.Fatal(err)
	}
	testserver.Receive(t, l.Lost(), 10*time.Second, "the released-by-other push")
	if !errors.Is(l.Err(), ErrNotHolder) || s.Err() != nil {
		t.Fatalf("lock %v, session %v", l.Err(), s.Err())
	}
}
