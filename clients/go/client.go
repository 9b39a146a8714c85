package leasehold

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Client is a handle on a leasehold server or cluster: endpoints, a pool of
// command connections, redirects and retries (docs/go.md).
//
// Endpoints are tried in order starting with the one that worked last; a
// -REDIRECT host:port (from a standby) makes the client prefer that address
// (at most MaxRedirects hops per call). A connection failure moves on to
// the next endpoint after a jittered exponential backoff, within the call's
// deadline, when repeating the request is harmless: reads, keepalives and
// the SEQ-tagged LOCK.ACQUIRE / LOCK.RELEASE. SESSION.OPEN and FENCE.PUT are
// re-sent only when they were never sent.
//
// Every call is bounded by its ctx and by Options.CallTimeout (plus the
// lock wait for a blocking lock). A Client is safe for concurrent use; a
// blocking lock holds one pooled connection for its wait, other goroutines
// use others (at most Options.MaxConnections at once; further callers wait).
type Client struct {
	opts  Options
	tls   *tls.Config
	slots chan struct{}

	mu        sync.Mutex
	endpoints []Endpoint
	preferred int
	current   string
	idle      []*cmdConn
	closed    bool
}

// Dial validates endpoints (a comma-separated "host:port" / "tls://host:port"
// list) and opts (nil: defaults), then connects to the first endpoint that
// answers, following redirects, so that an unreachable server or refused
// credentials show at once. Errors: ErrInvalidArgument (bad endpoints,
// options or CA file, an untrusted certificate), ErrAuthenticationFailed /
// ErrAuthenticationRequired, ErrUnreachable, or ctx's error.
func Dial(ctx context.Context, endpoints string, opts *Options) (*Client, error) {
	eps, err := ParseEndpoints(endpoints)
	if err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o, err = o.withDefaults(); err != nil {
		return nil, err
	}
	cfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	c := &Client{opts: o, tls: cfg, slots: make(chan struct{}, o.MaxConnections), endpoints: eps}
	if _, err := c.call(ctx, callSpec{retry: retrySafe}, "PING"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the pooled connections. Calls after Close fail with
// ErrClosed. Close the client's sessions first: each keeps its own
// connection and goroutine until its Close.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.closed = true
	c.mu.Unlock()
	for _, cc := range idle {
		cc.close()
	}
	return nil
}

// CurrentEndpoint is the endpoint of the last successful call ("" before any).
func (c *Client) CurrentEndpoint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Options returns the options in force (defaults filled in).
func (c *Client) Options() Options { return c.opts }

type retryMode int

const (
	retryIfNotSent retryMode = iota // only a request that never left is sent again
	retrySafe                       // harmless to run twice: re-sent after a lost reply
)

// callSpec says how one call is bounded and retried.
type callSpec struct {
	extra   time.Duration // added to CallTimeout: the server may take this long (a lock wait)
	forever bool          // no deadline but ctx (WAIT 0)
	timeout time.Duration // replaces CallTimeout when > 0
	retry   retryMode
	retries *int // counts re-sends of a request that was sent
}

// call sends one command and returns its RESP2 reply (redigo's types:
// int64, []byte, string, []interface{}, nil). Error replies come back as
// *Error; a redirect is followed.
func (c *Client) call(ctx context.Context, spec callSpec, args ...interface{}) (interface{}, error) {
	budget := c.opts.CallTimeout
	if spec.timeout > 0 {
		budget = spec.timeout
	}
	var until time.Time
	if !spec.forever {
		until = time.Now().Add(budget + spec.extra)
	}
	bo := backoff{initial: c.opts.BackoffInitial, max: c.opts.BackoffMax}
	redirects := 0
	for {
		dialUntil := time.Now().Add(budget)
		if !until.IsZero() && until.Before(dialUntil) {
			dialUntil = until
		}
		cc, err := c.checkout(ctx, dialUntil)
		if err != nil {
			return nil, err
		}
		reply, err := cc.roundtrip(ctx, until, args)
		c.checkin(cc)
		if err == nil {
			c.mu.Lock()
			c.current = cc.ep.String()
			c.mu.Unlock()
			return reply, nil
		}
		var le *Error
		if errors.As(err, &le) {
			if le.Kind != ErrRedirect {
				return nil, le
			}
			if redirects++; redirects > c.opts.MaxRedirects {
				return nil, newError(ErrRedirect, "too many redirects (last: "+le.Message+")")
			}
			if err := c.noteRedirect(le.Message, cc.ep.TLS); err != nil {
				return nil, err
			}
			continue
		}
		if ctx.Err() != nil {
			return nil, contextError(ctx, args)
		}
		if isTimeout(err) {
			return nil, newError(ErrTimedOut, fmt.Sprintf("no reply from %s before the deadline (the server may be busy or paused)", cc.ep))
		}
		var ns notSentError
		notSent := errors.As(err, &ns)
		c.moveOn(cc.ep)
		timeLeft := until.IsZero() || time.Now().Before(until)
		if !timeLeft || (!notSent && spec.retry != retrySafe) {
			return nil, newError(ErrUnreachable, fmt.Sprintf("%s: %v", cc.ep, err))
		}
		if err := sleepCtx(ctx, bo.next(), until); err != nil {
			return nil, contextError(ctx, args)
		}
		if !notSent && spec.retries != nil {
			*spec.retries++
		}
	}
}

func contextError(ctx context.Context, args []interface{}) error {
	return fmt.Errorf("leasehold: %v: %w", args[0], ctx.Err())
}

// sleepCtx pauses for d, no later than until (zero: no bound); ctx's error
// if it ends first.
func sleepCtx(ctx context.Context, d time.Duration, until time.Time) error {
	if !until.IsZero() {
		if left := time.Until(until); left < d {
			d = left
		}
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
