package leasehold

import (
	"context"
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
