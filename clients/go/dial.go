package leasehold

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// dialNet opens a TCP connection to ep (and runs the TLS handshake for a
// tls:// endpoint), bounded by ctx and by `until`. The caller owns the
// connection. ErrInvalidArgument when the server's certificate is refused
// (retrying cannot help), ErrUnreachable otherwise.
func (c *Client) dialNet(ctx context.Context, ep Endpoint, until time.Time) (net.Conn, error) {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", ep.address())
	if err != nil {
		return nil, newError(ErrUnreachable, fmt.Sprintf("cannot connect to %s: %v", ep, err))
	}
	if !ep.TLS {
		return raw, nil
	}
	cfg := c.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = ep.Host
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		if isCertificateError(err) {
			return nil, newError(ErrInvalidArgument, fmt.Sprintf("TLS with %s: %v", ep, err))
		}
		return nil, newError(ErrUnreachable, fmt.Sprintf("TLS with %s: %v", ep, err))
	}
	return conn, nil
}

// watchCtx makes conn's blocking reads and writes return at once when ctx
// ends, by closing conn (the caller then drops it). Call the returned stop
// when the I/O is over; it reports whether ctx cut it short.
func watchCtx(ctx context.Context, conn net.Conn) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	done := make(chan struct{})
	cut := make(chan bool, 1)
	go func() {
		select {
		case <-ctx.Done():
			conn.Close()
			cut <- true
		case <-done:
			cut <- false
		}
	}()
	return func() bool {
		close(done)
		return <-cut
	}
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
