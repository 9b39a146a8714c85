package leasehold

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// maxEndpoints bounds an endpoint list, as the other clients do.
const maxEndpoints = 64

// Endpoint is one server address: host, port, and whether to speak TLS.
type Endpoint struct {
	Host string
	Port int
	TLS  bool
}

// String gives "host:port", "[v6]:port" or "tls://host:port".
func (e Endpoint) String() string {
	s := net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	if e.TLS {
		return "tls://" + s
	}
	return s
}

func (e Endpoint) address() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// ParseEndpoint parses "host:port", "[ipv6]:port" or "tls://host:port".
// ErrInvalidArgument names what is wrong.
func ParseEndpoint(text string) (Endpoint, error) {
	original := text
	bad := func(why string) (Endpoint, error) {
		return Endpoint{}, newError(ErrInvalidArgument, fmt.Sprintf("bad endpoint '%s': %s", original, why))
	}
	text = strings.TrimSpace(text)
	tls := strings.HasPrefix(text, "tls://")
	text = strings.TrimPrefix(text, "tls://")
	var host, port string
	if strings.HasPrefix(text, "[") {
		end := strings.Index(text, "]")
		if end < 0 || end+1 >= len(text) || text[end+1] != ':' {
			return bad("expected [ipv6]:port")
		}
		host, port = text[1:end], text[end+2:]
	} else {
		colon := strings.LastIndex(text, ":")
		if colon < 0 {
			return bad("expected host:port")
		}
		host, port = text[:colon], text[colon+1:]
		if strings.Contains(host, ":") {
			return bad("write IPv6 as [addr]:port")
		}
	}
	if host == "" {
		return bad("empty host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return bad("port must be 1..65535")
	}
	return Endpoint{Host: host, Port: n, TLS: tls}, nil
}

// ParseEndpoints parses a comma-separated list (at most 64 endpoints).
func ParseEndpoints(text string) ([]Endpoint, error) {
	var out []Endpoint
	for _, item := range strings.Split(text, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		ep, err := ParseEndpoint(item)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	if len(out) == 0 {
		return nil, newError(ErrInvalidArgument, "no endpoint given")
	}
	if len(out) > maxEndpoints {
		return nil, newError(ErrInvalidArgument, fmt.Sprintf("%d endpoints, at most %d", len(out), maxEndpoints))
	}
	return out, nil
}
