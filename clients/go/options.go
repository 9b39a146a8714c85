package leasehold

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand"
	"os"
	"time"
)

// Options configures a Client. The zero value is usable: every zero field
// takes the default named beside it.
type Options struct {
	// User and Password authenticate every connection (AUTH, docs/security.md).
	// An empty User with a Password authenticates as the default user.
	User     string
	Password string
	// Name is sent as the connection name (CLIENT SETNAME); optional.
	Name string

	// TLSCAFile is a PEM file of the CAs that sign the server's certificate
	// (tls:// endpoints); empty: the system's roots. TLSCertFile and
	// TLSKeyFile give a client certificate when the server asks for one.
	// TLSServerName overrides the name checked against the certificate.
	TLSCAFile     string
	TLSCertFile   string
	TLSKeyFile    string
	TLSServerName string

	ConnectTimeout time.Duration // one connection attempt; default 1s
	CallTimeout    time.Duration // one call, beyond any lock wait; default 5s
	BackoffInitial time.Duration // first pause between attempts; default 25ms
	BackoffMax     time.Duration // largest pause; default 1s
	MaxRedirects   int           // -REDIRECT hops per call; default 4
	MaxConnections int           // pooled command connections; default 8
}

func (o Options) withDefaults() (Options, error) {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 5 * time.Second
	}
	if o.BackoffInitial == 0 {
		o.BackoffInitial = 25 * time.Millisecond
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = time.Second
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 4
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = 8
	}
	switch {
	case o.ConnectTimeout < 0 || o.CallTimeout < 0:
		return o, newError(ErrInvalidArgument, "timeouts must be positive")
	case o.BackoffInitial < 0 || o.BackoffMax < o.BackoffInitial:
		return o, newError(ErrInvalidArgument, "need 0 < BackoffInitial <= BackoffMax")
	case o.MaxRedirects < 0 || o.MaxConnections < 0:
		return o, newError(ErrInvalidArgument, "MaxRedirects and MaxConnections must not be negative")
	case (o.TLSCertFile == "") != (o.TLSKeyFile == ""):
		return o, newError(ErrInvalidArgument, "TLSCertFile and TLSKeyFile go together")
	}
	return o, nil
}

// tlsConfig builds the TLS configuration of tls:// endpoints.
func (o Options) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.TLSServerName}
	if o.TLSCAFile != "" {
		pem, err := os.ReadFile(o.TLSCAFile)
		if err != nil {
			return nil, newError(ErrInvalidArgument, fmt.Sprintf("TLS CA file: %v", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, newError(ErrInvalidArgument, fmt.Sprintf("TLS CA file %s holds no PEM certificate", o.TLSCAFile))
		}
		cfg.RootCAs = pool
	}
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, newError(ErrInvalidArgument, fmt.Sprintf("TLS client certificate: %v", err))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// backoff is a jittered exponential pause: attempt n waits a random time in
// [p/2, p] with p = min(max, initial * 2^n). Not safe for concurrent use.
type backoff struct {
	initial, max time.Duration
	attempt      int
}

func (b *backoff) next() time.Duration {
	p := b.initial
	for i := 0; i < b.attempt && p < b.max; i++ {
		p *= 2
	}
	if p > b.max {
		p = b.max
	}
	if b.attempt < 30 {
		b.attempt++
	}
	half := p / 2
	return half + time.Duration(rand.Int63n(int64(p-half)+1))
}

func (b *backoff) reset() { b.attempt = 0 }
