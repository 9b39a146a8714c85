package leasehold

import (
	"context"
	"time"
)

// The typed commands of docs/protocol.md that are not tied to a Session.

// Ping checks that a server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, callSpec{retry: retrySafe}, "PING")
	return err
}

// LockInfo returns a lock's holders and FIFO queue; nil when the server
// knows no such lock (it forgets idle locks).
func (c *Client) LockInfo(ctx context.Context, name string) (*LockInfo, error) {
	reply, err := c.call(ctx, callSpec{retry: retrySafe}, "LOCK.INFO", name)
	if err != nil {
		return nil, err
	}
	return decodeLockInfo(reply)
}

// Revoke takes a lock from its holders (an operator's command; they get a
// `lost` push). ErrNotFound when it is not held.
func (c *Client) Revoke(ctx context.Context, name string) error {
	_, err := c.call(ctx, callSpec{}, "LOCK.REVOKE", name)
	return err
}

// KillSession ends a session as an operator would (lock-delay applies).
// ErrNotFound when no such live session exists.
func (c *Client) KillSession(ctx context.Context, id uint64) error {
	_, err := c.call(ctx, callSpec{}, "SESSION.KILL", id)
	return err
}

// FencedPut writes value under key only if token is a current holder's
// token of lock; it returns the token. ErrStaleToken when it is not.
//
// A write: repeating it after a lost reply could turn an applied put into
// a definite error (stale once the lock moved on), so it is re-sent only
// when it was never sent; a lost reply is ErrUnreachable.
func (c *Client) FencedPut(ctx context.Context, key string, value []byte, lock string, token uint64) (uint64, error) {
	reply, err := c.call(ctx, callSpec{}, "FENCE.PUT", key, value, lock, token)
	if err != nil {
		return 0, err
	}
	t, err := asInt(reply, "FENCE.PUT")
	return uint64(t), err
}

// FencedGet reads a fenced value and the token that wrote it; nil when the
// key was never written.
func (c *Client) FencedGet(ctx context.Context, key string) (*FencedValue, error) {
	reply, err := c.call(ctx, callSpec{retry: retrySafe}, "FENCE.GET", key)
	if err != nil {
		return nil, err
	}
	return decodeFenced(reply)
}

func millis(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++ // round up: a wait never ends before what was asked
	}
	return ms
}
