package leasehold

import (
	"context"
	"fmt"
	"time"
)

// watchConn is a session's own RESP3 connection: a reader goroutine hands
// pushes to onPush and replies to the one request in flight.
type watchConn struct {
	rc      *respConn
	replies chan interface{}
	dead    chan struct{} // closed when the reader stops (connection broken or closed)
}

// dialWatch dials ep and switches it to RESP3 with HELLO 3 (with AUTH and
// SETNAME when configured). An error reply is returned as *Error.
func (c *Client) dialWatch(ctx context.Context, ep Endpoint, until time.Time) (*respConn, error) {
	nc, err := c.dialNet(ctx, ep, until)
	if err != nil {
		return nil, err
	}
	hello := []string{"HELLO", "3"}
	if c.opts.Password != "" {
		user := c.opts.User
		if user == "" {
			user = "default"
		}
		hello = append(hello, "AUTH", user, c.opts.Password)
	}
	if c.opts.Name != "" {
		hello = append(hello, "SETNAME", c.opts.Name)
	}
	rc := newRespConn(ep, nc)
	nc.SetDeadline(until)
	stop := watchCtx(ctx, nc)
	err = rc.write(hello...)
	var reply interface{}
	if err == nil {
		reply, err = rc.read()
	}
	cut := stop()
	if err != nil || cut {
		nc.Close()
		if cut {
			return nil, ctx.Err()
		}
		return nil, newError(ErrUnreachable, fmt.Sprintf("%s: HELLO 3: %v", ep, err))
	}
	if e, ok := reply.(respError); ok {
		nc.Close()
		return nil, errorFromReply(string(e))
	}
	if _, ok := reply.([]interface{}); !ok {
		nc.Close()
		return nil, newError(ErrInternal, fmt.Sprintf("%s answered HELLO 3 with %v, not a map", ep, reply))
	}
	nc.SetDeadline(time.Time{})
	return rc, nil
}

func startWatchConn(rc *respConn, onPush func(respPush)) *watchConn {
	wc := &watchConn{rc: rc, replies: make(chan interface{}, 1), dead: make(chan struct{})}
	go func() {
		defer close(wc.dead)
		for {
			v, err := rc.read()
			if err != nil {
				return
			}
			if p, ok := v.(respPush); ok {
				onPush(p)
				continue
			}
			select {
			case wc.replies <- v:
			default:
				return // a reply nobody asked for: the stream is out of step
			}
		}
	}()
	return wc
}

func (wc *watchConn) close() {
	wc.rc.net.Close()
	<-wc.dead
}

// roundtrip sends one command and waits for its reply until `until` or
// until `quit` is closed. errBroken-like failures mean: drop the connection.
func (wc *watchConn) roundtrip(until time.Time, quit <-chan struct{}, args ...string) (interface{}, error) {
	wc.rc.net.SetWriteDeadline(until)
	if err := wc.rc.write(args...); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case v := <-wc.replies:
		return v, nil
	case <-wc.dead:
		return nil, fmt.Errorf("%s: connection closed", wc.rc.ep)
	case <-t.C:
		return nil, fmt.Errorf("%s: no reply to %s in time", wc.rc.ep, args[0])
	case <-quit:
		return nil, fmt.Errorf("session ended")
	}
}
