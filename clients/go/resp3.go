package leasehold

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// A minimal RESP3 codec for the session's watch connection: redigo speaks
// RESP2 only, and the server sends pushes (the `lost` and `session-ended`
// notices) only to RESP3 connections (docs/protocol.md "Pushes").
//
// Values come out in the shapes redigo gives for RESP2, so that one set of
// decoders serves both connections: integers int64, bulk and verbatim
// strings []byte, simple strings string, arrays and sets []interface{},
// maps a flat []interface{} of alternating keys and values, null nil,
// doubles and big numbers their text as []byte, booleans int64 0/1. Error
// replies are respError and pushes respPush.

type respError string

type respPush []interface{}

// Limits on what one frame may hold: the watch connection carries small
// frames only.
const (
	maxRespBulk      = 64 << 20
	maxRespAggregate = 1 << 20
	maxRespDepth     = 16
)

var errRespProtocol = errors.New("RESP3 protocol error")

type respConn struct {
	ep  Endpoint
	net net.Conn
	br  *bufio.Reader
}

func newRespConn(ep Endpoint, nc net.Conn) *respConn {
	return &respConn{ep: ep, net: nc, br: bufio.NewReader(nc)}
}

// write sends one command as an array of bulk strings.
func (rc *respConn) write(args ...string) error {
	buf := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(a)), 10)
		buf = append(buf, "\r\n"...)
		buf = append(buf, a...)
		buf = append(buf, "\r\n"...)
	}
	_, err := rc.net.Write(buf)
	return err
}

// read reads one frame.
func (rc *respConn) read() (interface{}, error) { return rc.readValue(0) }

func (rc *respConn) line() ([]byte, error) {
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: line too long", errRespProtocol)
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: bad line", errRespProtocol)
	}
	return line[:len(line)-2], nil
}

func (rc *respConn) readValue(depth int) (interface{}, error) {
	if depth > maxRespDepth {
		return nil, fmt.Errorf("%w: nested too deep", errRespProtocol)
	}
	line, err := rc.line()
	if err != nil {
		return nil, err
	}
	kind, rest := line[0], string(line[1:])
	switch kind {
	case '+':
		return rest, nil
	case '-':
		return respError(rest), nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: bad integer %q", errRespProtocol, rest)
		}
		return n, nil
	case '_':
		return nil, nil
	case '#':
		if rest == "t" {
			return int64(1), nil
		}
		return int64(0), nil
	case ',', '(':
		return []byte(rest), nil
	case '$', '=', '!':
		n, err := strconv.Atoi(rest)
		if err != nil || n > maxRespBulk {
			return nil, fmt.Errorf("%w: bad length %q", errRespProtocol, rest)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.br, buf); err != nil {
			return nil, err
		}
		if kind == '!' {
			return respError(buf[:n]), nil
		}
		if kind == '=' && n >= 4 {
			return buf[4:n], nil // drop the "txt:" format prefix
		}
		return buf[:n], nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(rest)
		if err != nil || n > maxRespAggregate {
			return nil, fmt.Errorf("%w: bad count %q", errRespProtocol, rest)
		}
		if n < 0 {
			return nil, nil
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		items := make([]interface{}, n)
		for i := range items {
			if items[i], err = rc.readValue(depth + 1); err != nil {
				return nil, err
			}
		}
		switch kind {
		case '>':
			return respPush(items), nil
		case '|':
			return rc.readValue(depth) // attributes annotate the next value
		}
		return items, nil
	}
	return nil, fmt.Errorf("%w: unknown type byte %q", errRespProtocol, kind)
}
