package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// checkout takes a slot (at most MaxConnections connections in use) and an
// idle connection to the preferred endpoint, or dials one by 'until'.
func (c *Client) checkout(ctx context.Context, until time.Time) (*cmdConn, error) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("leasehold: waiting for a connection: %w", ctx.Err())
	case <-t.C:
		return nil, newError(ErrTimedOut, "all pooled connections are busy")
	}
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			<-c.slots
			return nil, newError(ErrClosed, "client closed")
		}
		if len(c.idle) == 0 {
			c.mu.Unlock()
			break
		}
		cc := c.idle[len(c.idle)-1]
		c.idle = c.idle[:len(c.idle)-1]
		preferred := c.endpoints[c.preferred]
		c.mu.Unlock()
		if cc.ep == preferred && cc.healthy() {
			return cc, nil
		}
		cc.close() // stale (a restarted server) or not the primary
	}
	cc, _, err := dialAny(c, ctx, until, c.dialCmd)
	if err != nil {
		<-c.slots
		return nil, err
	}
	return cc, nil
}

// checkin returns a connection after use; broken ones are dropped.
func (c *Client) checkin(cc *cmdConn) {
	c.mu.Lock()
	if !cc.broken && !c.closed {
		c.idle = append(c.idle, cc)
		cc = nil
	}
	c.mu.Unlock()
	if cc != nil {
		cc.close()
	}
	<-c.slots
}

// dialOrder is the preferred endpoint, then the others in list order.
func (c *Client) dialOrder() []Endpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Endpoint, 0, len(c.endpoints))
	for i := range c.endpoints {
		out = append(out, c.endpoints[(c.preferred+i)%len(c.endpoints)])
	}
	return out
}

func (c *Client) prefer(ep Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.endpoints {
		if e == ep {
			c.preferred = i
			return
		}
	}
	if len(c.endpoints) < maxEndpoints {
		c.endpoints = append(c.endpoints, ep)
		c.preferred = len(c.endpoints) - 1
	}
}

// moveOn makes the endpoint after `failed` the preferred one, unless
// another call already moved on.
func (c *Client) moveOn(failed Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endpoints[c.preferred] == failed {
		c.preferred = (c.preferred + 1) % len(c.endpoints)
	}
}

// noteRedirect prefers the primary a -REDIRECT named; the target keeps the
// scheme (TLS or not) of the endpoint that answered.
func (c *Client) noteRedirect(target string, tls bool) error {
	ep, err := ParseEndpoint(target)
	if err != nil {
		return newError(ErrRedirect, fmt.Sprintf("bad redirect target '%s'", target))
	}
	ep.TLS = ep.TLS || tls
	c.prefer(ep)
	return nil
}

// dialAny dials the endpoints in order, each bounded by ConnectTimeout,
// following redirects and pausing between rounds, until one answers or
// `until` passes. Refused credentials or certificates end it at once.
func dialAny[T any](c *Client, ctx context.Context, until time.Time,
	dial func(context.Context, Endpoint, time.Time) (T, error)) (T, Endpoint, error) {
	var zero T
	bo := backoff{initial: c.opts.BackoffInitial, max: c.opts.BackoffMax}
	redirects := 0
	var last error = newError(ErrUnreachable, "no endpoint")
	hasTried := false
	for {
		redirected := false
	round:
		for _, ep := range c.dialOrder() {
			perTry := time.Now().Add(c.opts.ConnectTimeout)
			if until.Before(perTry) {
				perTry = until
			}
			conn, err := dial(ctx, ep, perTry)
			if err == nil {
				c.prefer(ep)
				return conn, ep, nil
			}
			if ctx.Err() != nil {
				return zero, ep, fmt.Errorf("leasehold: connecting to %s: %w", ep, ctx.Err())
			}
			if time.Now().Before(perTry) || !hasTried {
				last = err // an attempt cut by the deadline says less than a refusal before it
			}
			hasTried = true
			var le *Error
			if errors.As(err, &le) {
				switch le.Kind {
				case ErrRedirect:
					if redirects++; redirects > c.opts.MaxRedirects {
						return zero, ep, newError(ErrRedirect, "too many redirects (last: "+le.Message+")")
					}
					if err := c.noteRedirect(le.Message, ep.TLS); err != nil {
						return zero, ep, err
					}
					redirected = true
					break round
				case ErrUnreachable, ErrTimedOut, ErrUnavailable:
				default:
					return zero, ep, err // e.g. refused credentials: retrying cannot help
				}
			}
			if !time.Now().Before(until) {
				break
			}
		}
		if redirected {
			continue // dial the named primary at once
		}
		if !time.Now().Before(until) {
			msg := last.Error()
			var le *Error
			if errors.As(last, &le) {
				msg = le.Message
			}
			return zero, Endpoint{}, newError(ErrUnreachable, "no leasehold server reachable ("+msg+")")
		}
		if err := sleepCtx(ctx, bo.next(), until); err != nil {
			return zero, Endpoint{}, fmt.Errorf("leasehold: connecting: %w", err)
		}
	}
}
