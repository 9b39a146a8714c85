package leasehold

import (
	"errors"
	"fmt"
	"time"
)

// keepAlive is the session's goroutine: it keeps the watch connection up,
// sends SESSION.KEEPALIVE every interval, moves the safe deadline, and
// ends the session when the deadline passes unacknowledged. Pushes are
// handled by the connection's reader (handlePush). A port of the C++
// client's keepalive loop (client/keepalive.cc).
func (s *Session) keepAlive() {
	defer close(s.loopDone)
	k := keepaliveLoop{s: s, next: time.Now().Add(s.interval),
		bo: backoff{initial: s.client.opts.BackoffInitial, max: s.client.opts.BackoffMax}}
	for s.live() {
		switch {
		case k.conn == nil:
			k.connect()
		case !time.Now().Before(k.next):
			k.keepalive()
		default:
			k.waitForPush()
		}
	}
	if k.conn != nil {
		k.conn.close()
	}
	if !time.Now().Before(s.SafeDeadline()) { // a no-op when it ended otherwise first
		s.lose(newError(ErrTimedOut, "no keepalive acknowledged before the safe deadline"))
	}
}

// live: not ended, not closing, safe deadline not passed.
func (s *Session) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err == nil && time.Now().Before(s.deadline)
}

type keepaliveLoop struct {
	s             *Session
	conn          *watchConn
	next          time.Time
	bo            backoff
	watchedBefore bool
	recheck       bool
}

// bound is now+d, but never past the safe deadline.
func (k *keepaliveLoop) bound(d time.Duration) time.Time {
	until := time.Now().Add(d)
	if dl := k.s.SafeDeadline(); dl.Before(until) {
		return dl
	}
	return until
}

func (k *keepaliveLoop) drop() {
	if k.conn != nil {
		k.conn.close()
		k.conn = nil
	}
}

// pause waits a backoff step, no later than the safe deadline.
func (k *keepaliveLoop) pause() {
	sleepCtx(k.s.ctx, k.bo.next(), k.s.SafeDeadline())
}

// onErrorReply handles an error reply to WATCH or KEEPALIVE; the
// connection is dropped.
func (k *keepaliveLoop) onErrorReply(e *Error) {
	switch e.Kind {
	case ErrSessionExpired:
		k.s.lose(newError(ErrSessionExpired, fmt.Sprintf("session %d expired: %s", k.s.id, e.Message)))
	case ErrRedirect:
		k.s.client.noteRedirect(e.Message, k.conn.rc.ep.TLS)
	default:
		k.pause()
	}
	k.drop()
}

func (k *keepaliveLoop) connect() {
	c := k.s.client
	rc, _, err := dialAny(c, k.s.ctx, k.bound(c.opts.ConnectTimeout), c.dialWatch)
	if err != nil {
		k.pause()
		return
	}
	k.conn = startWatchConn(rc, k.s.handlePush)
	reply, err := k.conn.roundtrip(k.bound(c.opts.CallTimeout), k.s.done, "SESSION.WATCH", fmt.Sprint(k.s.id))
	if err != nil {
		k.drop()
		k.pause()
		return
	}
	if e, ok := reply.(respError); ok {
		k.onErrorReply(errorFromReply(string(e)))
		return
	}
	if k.watchedBefore {
		k.next = time.Now() // learn at once whether the session survived
	} else {
		close(k.s.watching)
	}
	// Pushes may have been missed while no connection watched: a reconnect,
	// or locks taken before the first watch (NewSession stopped waiting).
	k.recheck = len(k.s.heldLocks()) > 0
	if k.recheck {
		k.next = time.Now()
	}
	k.watchedBefore = true
}

func (k *keepaliveLoop) keepalive() {
	s := k.s
	sent := time.Now()
	reply, err := k.conn.roundtrip(k.bound(s.client.opts.CallTimeout), s.done, "SESSION.KEEPALIVE", fmt.Sprint(s.id))
	if err != nil {
		k.drop()
		return
	}
	if e, ok := reply.(respError); ok {
		k.onErrorReply(errorFromReply(string(e)))
		return
	}
	remaining, err := asInt(reply, "SESSION.KEEPALIVE")
	if err != nil {
		k.drop()
		return
	}
	lease := time.Duration(remaining) * time.Millisecond
	if lease > s.ttl {
		lease = s.ttl
	}
	safe := lease - s.drift
	if safe < 0 {
		safe = 0
	}
	s.setDeadline(sent.Add(safe))
	k.next = sent.Add(s.interval)
	k.bo.reset()
	if k.recheck {
		k.recheck = false
		k.recheckLocks()
	}
}

func (k *keepaliveLoop) waitForPush() {
	until := k.next
	if dl := k.s.SafeDeadline(); dl.Before(until) {
		until = dl
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-k.conn.dead:
		k.drop()
	case <-t.C:
	case <-k.s.done:
	}
}

// recheckLocks asks LOCK.INFO for every held lock after a reconnect (a
// push may have been missed while the connection was down).
func (k *keepaliveLoop) recheckLocks() {
	s := k.s
	for _, l := range s.heldLocks() {
		reply, err := k.conn.roundtrip(k.bound(s.client.opts.CallTimeout), s.done, "LOCK.INFO", l.name)
		if err != nil {
			k.drop()
			return
		}
		if _, ok := reply.(respError); ok {
			continue // cannot tell now; the next reconnect checks again
		}
		info, err := decodeLockInfo(reply)
		if err != nil {
			continue
		}
		held := false
		if info != nil {
			for _, h := range info.Holders {
				held = held || (h.Session == s.id && h.Token == l.token)
			}
		}
		if !held {
			s.lockLost(l.name, l.token, newError(ErrNotHolder, "no longer held (found after reconnect)"))
		}
	}
}

// handlePush handles a `lost` or `session-ended` push for this session
// (docs/protocol.md "Pushes"); other pushes are ignored.
func (s *Session) handlePush(p respPush) {
	if len(p) < 4 || asText(p[0]) != "leasehold" {
		return
	}
	id, err := asInt(p[2], "push session")
	if err != nil || uint64(id) != s.id {
		return
	}
	switch asText(p[1]) {
	case "lost":
		if len(p) < 6 {
			return
		}
		token, err := asInt(p[4], "push token")
		if err != nil {
			return
		}
		s.lockLost(asText(p[3]), uint64(token), reasonCause(asText(p[5])))
	case "session-ended":
		cause := reasonCause(asText(p[3]))
		if errors.Is(cause, ErrNotHolder) {
			cause.Kind = ErrSessionExpired
		}
		s.lose(cause)
	}
}
