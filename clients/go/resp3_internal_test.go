package leasehold

import (
	"bufio"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func readFrames(t *testing.T, wire string) []interface{} {
	t.Helper()
	rc := &respConn{br: bufio.NewReader(strings.NewReader(wire))}
	var out []interface{}
	for {
		v, err := rc.read()
		if err != nil {
			if !strings.Contains(err.Error(), "EOF") {
				t.Fatalf("reading %q: %v", wire, err)
			}
			return out
		}
		out = append(out, v)
	}
}

func TestResp3DecodesEveryReplyShape(t *testing.T) {
	got := readFrames(t, "+OK\r\n:42\r\n$3\r\nabc\r\n_\r\n-STALE token 3\r\n#t\r\n"+
		"%2\r\n+name\r\n$1\r\nx\r\n+limit\r\n:1\r\n"+
		">6\r\n$9\r\nleasehold\r\n$4\r\nlost\r\n:7\r\n$3\r\njob\r\n:12\r\n$7\r\nrevoked\r\n"+
		"|1\r\n+ttl\r\n:3\r\n:5\r\n=8\r\ntxt:some\r\n")
	want := []interface{}{"OK", int64(42), []byte("abc"), nil, respError("STALE token 3"), int64(1),
		[]interface{}{"name", []byte("x"), "limit", int64(1)},
		respPush{[]byte("leasehold"), []byte("lost"), int64(7), []byte("job"), int64(12), []byte("revoked")},
		int64(5), []byte("some")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

func TestResp3RefusesBrokenFrames(t *testing.T) {
	for _, wire := range []string{"?x\r\n", ":abc\r\n", "$99999999999\r\n", "*2000000\r\n", "+no crlf\n",
		strings.Repeat("*1\r\n", maxRespDepth+2) + ":1\r\n"} {
		rc := &respConn{br: bufio.NewReader(strings.NewReader(wire))}
		if _, err := rc.read(); !errors.Is(err, errRespProtocol) {
			t.Errorf("%q: %v; want a protocol error", wire, err)
		}
	}
}

func TestPushesReachTheirLock(t *testing.T) {
	s := &Session{id: 7, done: make(chan struct{}), locks: map[lockKey]*Lock{}}
	s.ctx, s.cancel = nil, func() {}
	a := &Lock{s: s, name: "job", token: 12, lost: make(chan struct{})}
	b := &Lock{s: s, name: "other", token: 13, lost: make(chan struct{})}
	s.register(a)
	s.register(b)
	s.handlePush(respPush{[]byte("leasehold"), []byte("lost"), int64(8), []byte("job"), int64(12), []byte("revoked")})
	if a.err != nil {
		t.Fatal("a push for another session was taken")
	}
	s.handlePush(respPush{[]byte("leasehold"), []byte("lost"), int64(7), []byte("job"), int64(12), []byte("released-by-other")})
	if !errors.Is(a.err, ErrNotHolder) || !errors.Is(a.err, ErrLost) || b.err != nil {
		t.Fatalf("after a lost push: a %v, b %v", a.err, b.err)
	}
	s.handlePush(respPush{[]byte("leasehold"), []byte("session-ended"), int64(7), []byte("killed")})
	if !errors.Is(b.err, ErrSessionExpired) || s.err == nil {
		t.Fatalf("after session-ended: b %v, session %v", b.err, s.err)
	}
}
