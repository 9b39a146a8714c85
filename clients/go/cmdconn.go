package leasehold

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gomodule/redigo/redis"
)

// cmdConn is one pooled command connection: redigo's RESP2 connection over
// a net.Conn this package dialed (so that contexts and deadlines apply to
// it directly). Used by one goroutine at a time.
type cmdConn struct {
	ep     Endpoint
	net    net.Conn
	rc     redis.Conn
	broken bool
}

// notSentError marks a transport failure before the request left this
// process: always safe to send again.
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }

// dialCmd dials ep and authenticates (RESP2 AUTH, CLIENT SETNAME). An error
// reply to the handshake comes back as *Error (e.g. ErrAuthenticationFailed,
// ErrRedirect).
func (c *Client) dialCmd(ctx context.Context, ep Endpoint, until time.Time) (*cmdConn, error) {
	nc, err := c.dialNet(ctx, ep, until)
	if err != nil {
		return nil, err
	}
	// Timeouts 0: redigo leaves the deadlines alone; roundtrip sets them.
	cc := &cmdConn{ep: ep, net: nc, rc: redis.NewConn(nc, 0, 0)}
	var hello [][]interface{}
	if c.opts.Password != "" {
		if c.opts.User != "" {
			hello = append(hello, []interface{}{"AUTH", c.opts.User, c.opts.Password})
		} else {
			hello = append(hello, []interface{}{"AUTH", c.opts.Password})
		}
	}
	if c.opts.Name != "" {
		hello = append(hello, []interface{}{"CLIENT", "SETNAME", c.opts.Name})
	}
	for _, args := range hello {
		if _, err := cc.roundtrip(ctx, until, args); err != nil {
			cc.close()
			var le *Error
			if errors.As(err, &le) {
				return nil, err
			}
			return nil, newError(ErrUnreachable, fmt.Sprintf("%s: handshake: %v", ep, err))
		}
	}
	return cc, nil
}

func (cc *cmdConn) close() {
	cc.broken = true
	cc.rc.Close()
}

// healthy tells whether an idle connection can be reused: an idle RESP2
// connection has nothing to read, so a read that finds EOF or data shows a
// connection the server closed (a restart) or an unexpected state.
func (cc *cmdConn) healthy() bool {
	if cc.broken {
		return false
	}
	var one [1]byte
	cc.net.SetReadDeadline(time.Now())
	_, err := cc.net.Read(one[:])
	cc.net.SetReadDeadline(time.Time{})
	return err != nil && isTimeout(err)
}

// roundtrip sends one command and reads its reply, bounded by ctx and by
// `until` (zero: no bound but ctx). An error reply is returned as *Error
// and leaves the connection usable. A transport failure breaks the
// connection: notSentError when nothing was sent, otherwise the I/O error.
func (cc *cmdConn) roundtrip(ctx context.Context, until time.Time, args []interface{}) (interface{}, error) {
	cc.net.SetWriteDeadline(until)
	stop := watchCtx(ctx, cc.net)
	reply, err, sent := cc.exchange(until, args)
	cut := stop()
	if e, ok := err.(redis.Error); ok && !cut {
		return nil, errorFromReply(string(e))
	}
	if err == nil && !cut {
		return reply, nil
	}
	cc.close()
	switch {
	case cut:
		return nil, ctx.Err()
	case !sent:
		return nil, notSentError{err}
	}
	return nil, err
}

func (cc *cmdConn) exchange(until time.Time, args []interface{}) (reply interface{}, err error, sent bool) {
	if err := cc.rc.Send(args[0].(string), args[1:]...); err != nil {
		return nil, err, false
	}
	if err := cc.rc.Flush(); err != nil {
		return nil, err, false
	}
	// redigo sets the read deadline from a timeout (0: none).
	var timeout time.Duration
	if !until.IsZero() {
		if timeout = time.Until(until); timeout <= 0 {
			timeout = time.Nanosecond
		}
	}
	reply, err = redis.ReceiveWithTimeout(cc.rc, timeout)
	return reply, err, true
}
